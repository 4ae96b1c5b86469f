package event

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAppendTimeIsAppendFormat checks the time writer that keeps each
// second's form against the AppendFormat it replaces: random instants
// (within a second of each other and far apart, before 1970 included,
// with and without nanoseconds, trailing zeros included) in UTC, the
// local zone, fixed offsets and a zone with summer time, from several
// goroutines at once, and the times it must refuse.
func TestAppendTimeIsAppendFormat(t *testing.T) {
	locs := []*time.Location{time.UTC, time.Local, time.FixedZone("A", -7*3600), time.FixedZone("B", 5*3600+30*60), time.FixedZone("", 0)}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		locs = append(locs, ny)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			base := time.Date(2026, 3, 8, 6, 59, 58, 0, time.UTC).Unix()
			for i := range 50000 {
				sec := base + r.Int64N(5)
				switch i % 4 {
				case 1:
					sec = r.Int64N(253402300799+62135596800) - 62135596800 // years 1–9999
				case 2:
					sec = -r.Int64N(1 << 31)
				}
				var ns int64
				switch r.IntN(4) {
				case 1:
					ns = r.Int64N(1e9)
				case 2:
					ns = r.Int64N(1000) * 1e6
				case 3:
					ns = 100
				}
				tm := time.Unix(sec, ns).In(locs[r.IntN(len(locs))])
				got, ok := appendTime([]byte("x"), tm)
				if want, wantOK := referenceTime([]byte("x"), tm); ok != wantOK || string(got) != string(want) {
					t.Errorf("%v: wrote %q (ok %v), want %q (ok %v)", tm, got, ok, want, wantOK)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, tm := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 5, time.FixedZone("S", 30)),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("D", 24*3600)),
	} {
		if _, refOK := referenceTime(nil, tm); refOK {
			t.Fatalf("%v: the reference writes it", tm)
		}
		if b, ok := appendTime(nil, tm); ok {
			t.Errorf("%v: wrote %q, want a refusal", tm, b)
		}
	}
}

// referenceTime is what jsonAppender.time wrote before appendTime: a
// refusal for a year or an offset RFC 3339 cannot say, else AppendFormat.
func referenceTime(dst []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return dst, false
	}
	return t.AppendFormat(dst, time.RFC3339Nano), true
}

// TestStrIsEncodingJSON checks the string writer, which skips plain
// ASCII eight bytes at a time, against encoding/json (HTML escaping off):
// strings of every length to 40 with one byte of each kind that needs
// attention (control characters, quote, backslash, DEL, non-ASCII, invalid
// UTF-8, U+2028) at every position, and random strings.
func TestStrIsEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		var a jsonAppender
		a.str(s)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(buf.String(), "\n"); string(a.b) != want {
			t.Fatalf("%q: wrote %s, want %s", s, a.b, want)
		}
	}
	specials := []string{"\x00", "\x1f", "\n", "\"", "\\", "\x7f", " ", "~", "!", "#", "[", "]", "é", "\xff", "\xc3", "\u2028", "\u2029", "<", "&", "\x80"}
	for n := range 41 {
		plain := strings.Repeat("abcdefgh/", 5)[:n]
		check(plain)
		for i := 0; i <= n; i++ {
			for _, sp := range specials {
				check(plain[:i] + sp + plain[i:])
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			if r.IntN(8) == 0 {
				b[i] = byte(r.IntN(256))
			} else {
				b[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		check(string(b))
	}
}

// TestAppendTimeKeepsSeveralSeconds checks that times of two seconds in
// one location, written in turn (an event's time and an older document
// time it carries), are both written from kept forms, without working
// either out again.
func TestAppendTimeKeepsSeveralSeconds(t *testing.T) {
	now := time.Date(2026, 12, 8, 0, 30, 5, 123456789, time.UTC)
	older := now.Add(-41*time.Second - 7*time.Millisecond)
	buf := make([]byte, 0, 64)
	for _, tm := range []time.Time{now, older} {
		got, ok := appendTime(buf[:0], tm)
		if want := tm.AppendFormat(nil, time.RFC3339Nano); !ok || string(got) != string(want) {
			t.Fatalf("appendTime(%v) = %q, %v; want %q", tm, got, ok, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		buf, _ = appendTime(buf[:0], now)
		buf, _ = appendTime(buf[:0], older)
	}); n != 0 {
		t.Errorf("writing two seconds in turn allocates %v times, want 0", n)
	}
}
