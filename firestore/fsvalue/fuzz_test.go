package fsvalue

import (
	"errors"
	"testing"
)

func FuzzParseFieldPath(f *testing.F) {
	for _, s := range []string{"a", "a.b", "`a.b`.c", "`a\\`b`", "a..b", "`", "__name__", "`é`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fp, err := ParseFieldPath(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v is not ErrInvalidArgument", err)
			}
			return
		}
		back, err := ParseFieldPath(fp.String())
		if err != nil || !back.Equal(fp) {
			t.Fatalf("%q -> %q -> %q, %v", s, fp.String(), back, err)
		}
	})
}

func FuzzParseDocumentName(f *testing.F) {
	for _, s := range []string{"projects/p/databases/(default)/documents/a/b", "projects/p/databases/d/documents/a/b/c/d", "projects/p/databases/(default)/documents/a//b",
		"projects//databases/x/documents/a/b", "projects/p/databases/(default)/documents", "x/documents/documents/a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		db, rel, err := ParseDocumentName(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v is not ErrInvalidArgument", err)
			}
			return
		}
		if db.DocName(rel) != s {
			t.Fatalf("%q reassembles as %q", s, db.DocName(rel))
		}
		if err := ValidateDocumentPath(rel); err != nil {
			t.Fatalf("accepted name with invalid path %q: %v", rel, err)
		}
		_, _, _ = ParseParentName(s)
	})
}
