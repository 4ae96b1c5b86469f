package database

import (
	"strings"
	"testing"
	"unicode/utf8"
)

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
