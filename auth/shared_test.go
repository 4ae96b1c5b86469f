package auth

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// failLog is a log that refuses appends while fail is set.
type failLog struct{ fail bool }

func (l *failLog) Append(string, []service.LogChange) error {
	if l.fail {
		return errors.New("disk full")
	}
	return nil
}
func (l *failLog) Load(func(string, []service.LogChange) error) error { return nil }

// userToken is the Records token naming the account id of project p.
func userToken(p, id string) string {
	k := userKey(p, "", id)
	return recordsToken + string(binary.AppendUvarint(nil, uint64(len(k)))) + string(k)
}

// readRecord is the one value Records gives for tok.
func readRecord(t *testing.T, e *Engine, tok string) json.RawMessage {
	t.Helper()
	var got json.RawMessage
	n := 0
	if err := e.Records(tok, func(_ []string, v json.RawMessage) error { got, n = v, n+1; return nil }); err != nil || n != 1 {
		t.Fatalf("Records: %d records, %v", n, err)
	}
	return got
}

// TestCaptureSharesTheCommitsEncoding: once a capture reads records, the
// account a commit wrote is read back as the very bytes the commit gave
// the log, once; read again, or after a commit the log refused (the
// account is the one before it), it is encoded from the account stored
// now: equal bytes, never a stale encoding.
func TestCaptureSharesTheCommitsEncoding(t *testing.T) {
	log := &failLog{}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now } // every write changes the account
	e := New(Options{Log: log, Clock: clock})
	c := Call{Caller: identity.Anonymous(), Project: "p"}
	email := "a@example.com"
	if _, err := e.SignUp(c, SignUpRequest{}); err != nil {
		t.Fatal(err)
	}
	if len(e.j.shared.m) != 0 {
		t.Fatalf("encodings kept with no capture reading: %d", len(e.j.shared.m))
	}
	if err := e.EachRecord(func([]string, json.RawMessage) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r, err := e.SignUp(c, SignUpRequest{Email: &email, Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	tok := userToken("p", r.LocalID)
	fresh := func() []byte {
		b, _ := encodeUser(e.project("p").space.get(r.LocalID))
		return b
	}
	kept := e.j.shared.m[string(userKey("p", "", r.LocalID))].value
	got := readRecord(t, e, tok)
	if len(kept) == 0 || &got[0] != &kept[0] {
		t.Fatal("the capture did not read the commit's encoding")
	}
	if string(got) != string(fresh()) {
		t.Fatalf("shared %s, encoded now %s", got, fresh())
	}
	again := readRecord(t, e, tok)
	if &again[0] == &got[0] || string(again) != string(got) {
		t.Fatalf("read again: %s (shared: %v), want a fresh %s", again, &again[0] == &got[0], got)
	}
	before := fresh()
	log.fail = true
	if _, err := e.SignInWithPassword(c, SignInWithPasswordRequest{Email: &email, Password: "secret123"}); err == nil {
		t.Fatal("a sign-in the log refused succeeded")
	}
	log.fail = false
	if got := readRecord(t, e, tok); string(got) != string(before) {
		t.Fatalf("after a refused commit the capture read %s, want %s", got, before)
	}
	if _, err := e.Delete(Call{Caller: identity.AdminIdentity(), Project: "p"}, DeleteRequest{LocalID: r.LocalID}); err != nil {
		t.Fatal(err)
	}
	if got := readRecord(t, e, tok); got != nil {
		t.Fatalf("a deleted account reads %s", got)
	}
	for i := range maxShared + 10 {
		em := fmt.Sprintf("n%d@example.com", i)
		if _, err := e.SignUp(c, SignUpRequest{Email: &em, Password: "secret123"}); err != nil {
			t.Fatal(err)
		}
		if n := len(e.j.shared.m); n > maxShared {
			t.Fatalf("%d encodings kept", n)
		}
	}
}

// TestKeyStringIsMakeKey: the string form of a key an account's write
// takes is makeKey's bytes, for parts of every length class of their
// uvarint prefix.
func TestKeyStringIsMakeKey(t *testing.T) {
	parts := []string{"", "p", "tenant-1", "u", strings.Repeat("x", 127), strings.Repeat("y", 128), strings.Repeat("z", 20000), "é\x00\xff"}
	for _, a := range parts {
		for _, b := range parts {
			if got, want := userKeyString(a, b, a+b), string(userKey(a, b, a+b)); got != want {
				t.Fatalf("userKeyString(%.20q, %.20q): %.40q, want %.40q", a, b, got, want)
			}
		}
	}
}
