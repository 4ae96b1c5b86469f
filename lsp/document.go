package lsp

import (
	"fmt"
	"unicode/utf8"

	"github.com/pyric/pyric/rules/source"
)

// document is an open text document: its text, version and the byte
// offset of each line start, for converting between the protocol's
// UTF-16 positions and source's byte offsets.
type document struct {
	uri        string
	languageID string
	version    int
	text       string
	lines      []int // byte offset of each line's first character
}

func newDocument(uri, languageID string, version int, text string) *document {
	d := &document{uri: uri, languageID: languageID, version: version}
	d.setText(text)
	return d
}

func (d *document) setText(text string) {
	d.text = text
	d.lines = lineStarts(text)
}

func lineStarts(text string) []int {
	lines := make([]int, 1, 64)
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// offset converts a protocol position to a byte offset. A line past the
// end clamps to the end of the text, a character past the end of its line
// to the line's end (as the specification asks).
func (d *document) offset(p Position) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("negative position %d:%d", p.Line, p.Character)
	}
	if p.Line >= len(d.lines) {
		return len(d.text), nil
	}
	start := d.lines[p.Line]
	end := len(d.text)
	if p.Line+1 < len(d.lines) {
		end = d.lines[p.Line+1] - 1 // the newline
	}
	if end > start && d.text[end-1] == '\r' && p.Line+1 < len(d.lines) {
		end--
	}
	units := 0
	i := start
	for i < end && units < p.Character {
		r, size := utf8.DecodeRuneInString(d.text[i:end])
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		i += size
	}
	return i, nil
}

// position converts a byte offset to a protocol position.
func (d *document) position(off int) Position {
	if off < 0 {
		off = 0
	}
	if off > len(d.text) {
		off = len(d.text)
	}
	// The line is the last start not after off.
	lo, hi := 0, len(d.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if d.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	units := 0
	for i := d.lines[lo]; i < off; {
		r, size := utf8.DecodeRuneInString(d.text[i:off])
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		i += size
	}
	return Position{Line: lo, Character: units}
}

// rangeOf converts a source span to a protocol range.
func (d *document) rangeOf(s source.Span) Range {
	start := d.position(s.Start.Offset)
	end := start
	if s.End.IsValid() && s.End.Offset >= s.Start.Offset {
		end = d.position(s.End.Offset)
	}
	return Range{Start: start, End: end}
}

// apply applies one content change: a range replaced, or the whole text.
func (d *document) apply(c TextDocumentContentChangeEvent) error {
	if c.Range == nil {
		d.setText(c.Text)
		return nil
	}
	start, err := d.offset(c.Range.Start)
	if err != nil {
		return err
	}
	end, err := d.offset(c.Range.End)
	if err != nil {
		return err
	}
	if end < start {
		return fmt.Errorf("change range ends before it starts")
	}
	d.setText(d.text[:start] + c.Text + d.text[end:])
	return nil
}
