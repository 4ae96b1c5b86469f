package databaseserver

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

func newFuzzDB() (*database.Database, error) {
	return database.New(service.Env{Project: "fuzz"}, database.Options{Rules: `{"rules":{".read":true,".write":true}}`})
}

// FuzzFrames feeds arbitrary frame sequences to the assembler and the
// message decoder: no panic, bounded buffering, and split messages
// reassemble to the original.
func FuzzFrames(f *testing.F) {
	f.Add("0", `{"t":"d","d":{"r":1,"a":"s","b":{}}}`, "", 0)
	f.Add("2", `{"t":"d","d":{"r":1,`, `"a":"p","b":{"p":"/a","d":1}}}`, 1)
	f.Add("999999", "x", "y", 2)
	f.Add(`{"t":"c","d":{"t":"p","d":{}}}`, "", "", 0)
	f.Add(`{"t":"d","d":{"r":"x"}}`, "12", "", 3)
	f.Fuzz(func(t *testing.T, a, b, c string, n int) {
		asm := assembler{max: 1 << 16}
		for _, fr := range []string{a, b, c} {
			msg, ok, err := asm.feed(fr)
			if err != nil {
				return
			}
			if len(asm.parts) > asm.max {
				t.Fatalf("buffered %d bytes over the limit", len(asm.parts))
			}
			if ok {
				_, _, _, _ = decodeMessage(msg)
			}
		}
		// Round trip: split then reassemble.
		if !utf8.ValidString(a) {
			return
		}
		msg := strings.Repeat(a, 1+(n&0xff)) + "x"
		if len(msg) > 1<<16 {
			return
		}
		frames := split(msg)
		asm = assembler{max: 1 << 16}
		var got string
		for i, fr := range frames {
			if len(frames) > 1 && i > 0 && (len(fr) > MaxFrame || !utf8.ValidString(fr)) {
				t.Fatalf("frame %d: %d bytes, valid UTF-8 %v", i, len(fr), utf8.ValidString(fr))
			}
			m, ok, err := asm.feed(fr)
			if err != nil {
				t.Fatalf("reassembly: %v", err)
			}
			if ok {
				got = m
			}
		}
		if len(frames) > 1 && got != msg {
			t.Fatalf("reassembled %d bytes, want %d", len(got), len(msg))
		}
	})
}

// FuzzLongPollSegments feeds arbitrary long-poll query strings to a
// session's segment reassembly: an error or handled messages, never a
// panic.
func FuzzLongPollSegments(f *testing.F) {
	f.Add("seg0=0&ts0=1&d0=eyJ0IjoiZCIsImQiOnsiciI6MSwiYSI6InMiLCJiIjp7fX19")
	f.Add("seg0=0&ts0=2&d0=eyJ0&seg1=1&ts1=2&d1=IjoiYyJ9")
	f.Add("seg0=5&ts0=1&d0=...")
	f.Add("seg0=-1&ts0=0&d0=")
	db, err := newFuzzDB()
	if err != nil {
		f.Fatal(err)
	}
	h := NewHandler(db, Options{})
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return
		}
		s := &lpSession{session: &session{h: h, conn: db.Connect("fuzz", identity.Anonymous())}, segs: map[int]lpSeg{},
			sessions: &h.lp, release: make(chan struct{})}
		defer s.conn.Close()
		r := &http.Request{Method: "GET", URL: &url.URL{Path: "/.lp", RawQuery: raw}}
		_ = s.ingest(r)
		if len(s.segs) > 10000 {
			t.Fatalf("%d segments buffered", len(s.segs))
		}
	})
}
