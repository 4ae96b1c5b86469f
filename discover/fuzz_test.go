package discover

import (
	"strings"
	"testing"
	"time"
)

// FuzzTemplatePath: any path folds without panicking, keeps its segment
// count and its collection ids, and is idempotent.
func FuzzTemplatePath(f *testing.F) {
	for _, s := range []string{"users", "users/u1/posts", "ttt_lobbies/a/games/g/moves", "a/b", "/x/", "", "s/ies/ss/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		tp := TemplatePath(p)
		segs := strings.Split(strings.Trim(p, "/"), "/")
		tsegs := strings.Split(tp, "/")
		if len(segs) != len(tsegs) {
			t.Fatalf("%q -> %q changes the segment count", p, tp)
		}
		for i := 0; i < len(segs); i += 2 {
			if segs[i] != tsegs[i] {
				t.Fatalf("%q -> %q changes collection id %d", p, tp, i)
			}
		}
		if again := TemplatePath(tp); again != tp {
			t.Fatalf("not idempotent: %q -> %q -> %q", p, tp, again)
		}
		_ = ReservedReason(p)
	})
}

// FuzzSessionToken: a token from anywhere is either a live session or a
// typed error, never a panic.
func FuzzSessionToken(f *testing.F) {
	store := NewSessionStore(SessionOptions{Now: func() time.Time { return time.Unix(0, 0) }})
	tok, _ := store.Create([]byte("x"))
	for _, s := range []string{tok, "disc_", "disc_AAAAAAAAAAAAAAAAAAAAAA", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := store.Get(s)
		if err == nil && (s != tok || string(b) != "x") {
			t.Fatalf("%q resolved to %q", s, b)
		}
		if err != nil {
			if _, ok := err.(*SessionError); !ok {
				t.Fatalf("%q: untyped %v", s, err)
			}
		}
	})
}
