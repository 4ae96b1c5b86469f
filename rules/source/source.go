// Package source is the bottom layer shared by every rules language: source
// files, positions and spans, and positioned diagnostics with a renderer that
// prints the offending line with a caret under the span.
package source

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Pos is a position in a source file. Line and Column are 1-based; Column
// counts characters (runes), not bytes. The zero Pos is "no position".
type Pos struct {
	Offset int // byte offset, 0-based
	Line   int
	Column int
}

// IsValid reports whether p is a real position.
func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string {
	if !p.IsValid() {
		return "-"
	}
	return fmt.Sprintf("%d:%d", p.Line, p.Column)
}

// Span is a half-open range [Start, End) of a source file.
type Span struct {
	Start, End Pos
}

// File is a named source text with a line index.
type File struct {
	Name  string
	Text  string
	lines []int  // byte offset of the start of each line
	ascii []bool // whether each line is pure ASCII (column = byte offset)
}

// NewFile indexes text for position lookups.
func NewFile(name, text string) *File {
	f := &File{Name: name, Text: text, lines: []int{0}}
	ascii := true
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\n':
			f.ascii = append(f.ascii, ascii)
			f.lines = append(f.lines, i+1)
			ascii = true
		case text[i] >= utf8.RuneSelf:
			ascii = false
		}
	}
	f.ascii = append(f.ascii, ascii)
	return f
}

// Pos converts a byte offset into a position. Offsets past the end clamp to
// the end of the file.
func (f *File) Pos(offset int) Pos {
	if offset < 0 {
		offset = 0
	}
	if offset > len(f.Text) {
		offset = len(f.Text)
	}
	i := sort.Search(len(f.lines), func(i int) bool { return f.lines[i] > offset }) - 1
	col := offset - f.lines[i] + 1
	if !f.ascii[i] {
		col = utf8.RuneCountInString(f.Text[f.lines[i]:offset]) + 1
	}
	return Pos{Offset: offset, Line: i + 1, Column: col}
}

// Span converts a byte range into a span.
func (f *File) Span(start, end int) Span { return Span{Start: f.Pos(start), End: f.Pos(end)} }

// Line returns the text of the 1-based line n without its newline.
func (f *File) Line(n int) string {
	if n < 1 || n > len(f.lines) {
		return ""
	}
	start := f.lines[n-1]
	end := len(f.Text)
	if n < len(f.lines) {
		end = f.lines[n] - 1
	}
	return strings.TrimSuffix(f.Text[start:end], "\r")
}

// Severity ranks a diagnostic.
type Severity int

// Severities, least to most severe.
const (
	Info Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	default:
		return "error"
	}
}

// MarshalText encodes a severity as its name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one problem found in a source file.
type Diagnostic struct {
	Severity Severity
	Code     string // stable machine-readable code, e.g. PARSE_ERROR, CHAIN_DEPTH
	Message  string // one line, written for a person
	Span     Span
	Fix      string // a concrete suggestion, when there is one
	// Edit is the fix as a change to the source, when it is mechanical
	// (an editor offers it as a quick fix).
	Edit *Edit
}

// Edit replaces the text of a span (an insertion when the span is empty).
type Edit struct {
	Span Span
	Text string
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s", d.Span.Start, d.Severity, d.Message)
}

// Diagnostics is a list of diagnostics; as an error it reports the first.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	switch len(ds) {
	case 0:
		return "no errors"
	case 1:
		return ds[0].String()
	}
	return fmt.Sprintf("%s (and %d more)", ds[0], len(ds)-1)
}

// HasErrors reports whether any diagnostic has Error severity.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders diagnostics by position, then by code.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Span.Start, ds[j].Span.Start
		if a.Offset != b.Offset {
			return a.Offset < b.Offset
		}
		return ds[i].Code < ds[j].Code
	})
}

// Output limits of the renderers: a ruleset with thousands of problems on
// one 170 KB line must print a screenful, not gigabytes.
const (
	// MaxTextDiagnostics is how many diagnostics WriteText prints before
	// "… and N more".
	MaxTextDiagnostics = 50
	// MaxMachineDiagnostics caps the JSON and SARIF renderers.
	MaxMachineDiagnostics = 1000
	// MaxLineWidth is how many characters of a source line Render shows,
	// clipped around the caret.
	MaxLineWidth = 200
	// MaxMessageBytes bounds one diagnostic's message and fix.
	MaxMessageBytes = 500
)

// Render writes d as `file:line:col: severity: message [CODE]`, followed by
// the source line (clipped to MaxLineWidth characters around the span), a
// caret line under the span, and the fix when present.
func Render(f *File, d Diagnostic) string {
	var b strings.Builder
	name := "<input>"
	if f != nil && f.Name != "" {
		name = f.Name
	}
	pos := d.Span.Start
	msg := ClipText(d.Message, MaxMessageBytes)
	if pos.IsValid() {
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s", name, pos.Line, pos.Column, d.Severity, msg)
	} else {
		fmt.Fprintf(&b, "%s: %s: %s", name, d.Severity, msg)
	}
	if d.Code != "" {
		fmt.Fprintf(&b, " [%s]", d.Code)
	}
	b.WriteByte('\n')
	if f != nil && pos.IsValid() {
		line, caret := Excerpt(f.Line(pos.Line), pos, d.Span.End, MaxLineWidth)
		b.WriteString("    ")
		b.WriteString(line)
		b.WriteByte('\n')
		b.WriteString("    ")
		b.WriteString(caret)
		b.WriteByte('\n')
	}
	if d.Fix != "" {
		fmt.Fprintf(&b, "    fix: %s\n", ClipText(d.Fix, MaxMessageBytes))
	}
	return b.String()
}

// ClipText cuts s to at most max bytes (on a character boundary), ending
// with "…" when it was cut.
func ClipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Excerpt returns the source line with tabs expanded and the caret line
// under [start, end), showing at most width characters: a longer line is
// clipped around the span's start, with "…" marking each cut.
func Excerpt(line string, start, end Pos, width int) (text, caret string) {
	runes := []rune(line)
	col := start.Column - 1
	if col < 0 {
		col = 0
	}
	if col > len(runes) {
		col = len(runes)
	}
	span := 1
	if end.Line == start.Line && end.Column > start.Column {
		span = end.Column - start.Column
	}
	lo, hi := 0, len(runes)
	if width > 0 && len(runes) > width {
		// Keep a third of the window before the caret.
		lo = max(0, col-width/3)
		hi = min(len(runes), lo+width)
		if hi-lo < width {
			lo = max(0, hi-width)
		}
	}
	if col+span > hi {
		span = max(1, hi-col)
	}
	var t, c strings.Builder
	if lo > 0 {
		t.WriteString("…")
		c.WriteByte(' ')
	}
	for i := lo; i < hi; i++ {
		if runes[i] == '\t' {
			t.WriteString("    ")
			if i < col {
				c.WriteString("    ")
			}
			continue
		}
		t.WriteRune(runes[i])
		if i < col {
			c.WriteByte(' ')
		}
	}
	if hi < len(runes) {
		t.WriteString("…")
	}
	c.WriteString(strings.Repeat("^", span))
	return t.String(), c.String()
}
