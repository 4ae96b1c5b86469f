package auth

import (
	"testing"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// countLog is a log that counts its appends.
type countLog struct{ appends int }

func (l *countLog) Append(string, []service.LogChange) error           { l.appends++; return nil }
func (l *countLog) Load(func(string, []service.LogChange) error) error { return nil }

// TestPanicUndoesAndUnlocks: the function begin returns (one per engine,
// not one per call) still recovers a panic inside a mutation, takes the
// change back, writes nothing and releases the lock, every time.
func TestPanicUndoesAndUnlocks(t *testing.T) {
	log := &countLog{}
	e := New(Options{Log: log})
	email := "a@example.com"
	r, err := e.SignUp(Call{Caller: identity.Anonymous(), Project: "p"}, SignUpRequest{Email: &email, Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	appends := log.appends
	for range 2 {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic did not reach the caller")
				}
			}()
			var err error
			defer e.begin()(&err)
			sp := e.project("p").space
			sp.remove(sp.get(r.LocalID))
			panic("engine bug")
		}()
		if !e.mu.TryLock() {
			t.Fatal("the lock is still held")
		}
		e.mu.Unlock()
		if u := e.project("p").space.get(r.LocalID); u == nil || u.Email != email {
			t.Fatalf("the removal was not undone: %+v", u)
		}
		if log.appends != appends {
			t.Fatalf("the panicking mutation was written to the log")
		}
	}
}

// TestPasswordMatches is hashPassword's comparison, over salts and
// passwords that hold the separators themselves.
func TestPasswordMatches(t *testing.T) {
	words := []string{"", "p", "s", ":password=", "fakeHash:salt=", "a:password=b", "salt=x", "é\xff"}
	for _, salt := range words {
		for _, pw := range words {
			for _, hs := range words {
				for _, hp := range words {
					hash := hashPassword(hp, hs)
					if got, want := passwordMatches(hash, pw, salt), hash == hashPassword(pw, salt); got != want {
						t.Errorf("hash %q, password %q, salt %q: %v, want %v", hash, pw, salt, got, want)
					}
				}
			}
			for _, hash := range words {
				if got, want := passwordMatches(hash, pw, salt), hash == hashPassword(pw, salt); got != want {
					t.Errorf("hash %q, password %q, salt %q: %v, want %v", hash, pw, salt, got, want)
				}
			}
		}
	}
}
