package firestore

import (
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

func FuzzParseFieldPath(f *testing.F) {
	for _, s := range []string{"a", "a.b", "`a.b`.c", "`a\\`b`", "a..b", "`", "__name__", "`é`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fp, err := ParseFieldPath(s)
		if err != nil {
			if Code(err).String() != "InvalidArgument" {
				t.Fatalf("code %v", Code(err))
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
			if Code(err).String() != "InvalidArgument" {
				t.Fatalf("code %v", Code(err))
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

func FuzzDecodeJSONFields(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `{"a": {"__type": "timestamp", "seconds": 1, "nanos": 2}}`, `{"v": {"__type__": "__vector__", "value": [1]}}`,
		`{"r": {"__type": "reference", "path": "a/b"}}`, `{"f": {"__type": "float", "value": "NaN"}}`, `{"x": 99999999999999999999}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := DecodeJSONFields(data, testDB)
		if err != nil {
			return
		}
		enc := EncodeFields(fields, testDB)
		back, err := DecodeFields(enc, testDB)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", data, err)
		}
		if !fieldsEqualNaN(fields, back) {
			t.Fatalf("round trip of %s changed the fields", data)
		}
	})
}

// fieldsEqualNaN compares by Firestore order, where NaN equals NaN.
func fieldsEqualNaN(a, b map[string]*pb.Value) bool {
	return Compare(Map(a), Map(b)) == 0
}
