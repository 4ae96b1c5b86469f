package lsp

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
)

// Incremental re-diagnosis. Linting a 1 MB ruleset takes most of a second
// (parse, compile, a program per rule); an edit usually touches one of the
// match blocks directly under the service's root match (a unit). The
// diagnostics of the other units cannot change when the edit leaves
// every fact they share with it as it was, so only the edited unit is
// linted again — in a copy of the file where every other unit is blanked
// (same length, same lines, so positions match) — and the other units'
// diagnostics are carried over, moved by the edit's length.
//
// The facts one unit shares with the rest of the file, and what keeps
// each unchanged (anything else falls back to a full lint):
//   - the header (service, root match, functions declared outside every
//     unit): the edit lies strictly inside one unit, and the units around
//     it are the same text;
//   - whether a header function is used (UNUSED): the edited unit calls
//     each header function as many times before and after;
//   - rules that share a path shape across units (SHARED_GATE): the edited
//     unit's first path segment is no other unit's;
//   - the file as a whole: a parse error drops whole-ruleset findings
//     everywhere, leaving each unit's mistakes; the edited unit may be
//     broken (before, after or both) when no other unit is and the parser
//     recovers by the next unit, but from broken back to clean the other
//     units' findings are unknown; the linter did not fail;
//   - line numbers inside messages (SHARED_GATE names a peer's line): a
//     unit after the edit carries none when the edit adds or removes lines;
//   - SOURCE_SIZE depends only on the length, which the blanked copy
//     keeps (unless a multi-byte character sits at the limit, where the
//     blanking would move the reported start).
//
// TestIncrementalEqualsFull compares the result with a full lint over
// chains of random edits of the conformance corpus.

// linted is a full (or exactly composed) lint of one text.
type linted struct {
	kind        Kind
	text        string
	diags       source.Diagnostics
	parseFailed bool
	units       []unit
}

// unit is a top-level match block inside the root match: [start, end)
// from the match keyword to its closing brace, and the shape of its first
// path segment.
type unit struct {
	start, end int
	first      string
}

// newLinted lints text fully.
func newLinted(kind Kind, f *source.File) *linted {
	ds, failed := diagnose(kind, f)
	return &linted{kind: kind, text: f.Text, diags: ds, parseFailed: failed, units: scanUnits(f.Text)}
}

// rediagnose returns the diagnostics of text, a later version of
// prev.text, as Diagnose would, and whether they could be composed from
// prev (false: the caller lints fully).
func rediagnose(prev *linted, f *source.File) (*linted, bool) {
	text := f.Text
	if prev == nil || (prev.kind != Firestore && prev.kind != Storage) {
		return nil, false
	}
	old := prev.text
	p := 0
	for p < len(old) && p < len(text) && old[p] == text[p] {
		p++
	}
	q := 0
	for q < len(old)-p && q < len(text)-p && old[len(old)-1-q] == text[len(text)-1-q] {
		q++
	}
	delta := len(text) - len(old)
	k := -1
	for i, u := range prev.units {
		if u.start < p && len(old)-q < u.end {
			k = i
			break
		}
	}
	if k < 0 {
		return nil, false
	}
	units := scanUnits(text)
	if len(units) != len(prev.units) {
		return nil, false
	}
	for i, u := range units {
		o := prev.units[i]
		d := 0
		if i > k {
			d = delta
		}
		if i == k {
			if u.start != o.start || u.end != o.end+delta {
				return nil, false
			}
			continue
		}
		if u.start != o.start+d || u.end != o.end+d {
			return nil, false
		}
		if u.first == units[k].first || o.first == prev.units[k].first {
			return nil, false
		}
	}
	for _, d := range prev.diags {
		if d.Code == lint.CodeInternal {
			return nil, false
		}
	}
	lineDelta := strings.Count(text[p:len(text)-q], "\n") - strings.Count(old[p:len(old)-q], "\n")
	header := headerFunctions(old, prev.units)
	if !sameNames(header, old[prev.units[k].start:prev.units[k].end], text[units[k].start:units[k].end]) {
		return nil, false
	}
	if len(text) > lint.MaxSourceBytes {
		for i := max(lint.MaxSourceBytes-utf8.UTFMax, 0); i < min(lint.MaxSourceBytes+utf8.UTFMax, len(text)); i++ {
			if text[i] >= utf8.RuneSelf {
				return nil, false
			}
		}
	}

	// Lint the edited unit with the header, every other unit blanked.
	stub := []byte(text)
	for i, u := range units {
		if i == k {
			continue
		}
		for j := u.start; j < u.end; j++ {
			if stub[j] != '\n' {
				stub[j] = ' '
			}
		}
	}
	sf := source.NewFile(f.Name, string(stub))
	svc := lint.Firestore
	if prev.kind == Storage {
		svc = lint.Storage
	}
	r := lint.Lint(sf, lint.Options{Service: svc})
	// A file that does not parse gets only the findings of its partial
	// tree (lint.Result.ParseFailed): the edited unit's parse errors, and
	// in the other units the mistakes, which a clean lint reports the
	// same way. From a broken file back to a clean one, the other units'
	// whole-ruleset findings are not known: lint fully.
	broken := r.ParseFailed
	if prev.parseFailed && !broken {
		return nil, false
	}
	if broken && k+1 < len(units) && !recovers(stub, text, units[k+1], f.Name) {
		return nil, false
	}

	var out source.Diagnostics
	for _, d := range r.Diagnostics {
		if d.Code == lint.CodeInternal {
			return nil, false
		}
		i := unitAt(units, d.Span.Start.Offset)
		if broken && i != k && (d.Code == parser.CodeParse || d.Code == lint.CodeInvalidOperator) {
			return nil, false // the parse went wrong outside the edit
		}
		if i == k || i < 0 && (broken || d.Code != check.CodeUnused) {
			out = append(out, d)
		}
	}
	for _, d := range prev.diags {
		i := unitAt(prev.units, d.Span.Start.Offset)
		if i != k && (d.Code == parser.CodeParse || d.Code == lint.CodeInvalidOperator) {
			return nil, false // another unit is broken too: lint fully
		}
		if i == k || i < 0 && (broken || d.Code != check.CodeUnused) {
			continue
		}
		if broken && !partialTreeCodes[d.Code] {
			continue
		}
		shift := 0
		if d.Span.Start.Offset >= prev.units[k].end {
			shift = delta
			if lineDelta != 0 && d.Code == lint.CodeSharedGate {
				return nil, false
			}
		}
		end := d.Span.End.Offset
		if !d.Span.End.IsValid() || end < d.Span.Start.Offset {
			end = d.Span.Start.Offset
		}
		d.Span = f.Span(d.Span.Start.Offset+shift, end+shift)
		if d.Edit != nil {
			e := *d.Edit
			e.Span = f.Span(e.Span.Start.Offset+shift, e.Span.End.Offset+shift)
			d.Edit = &e
		}
		out = append(out, d)
	}
	out.Sort()
	return &linted{kind: prev.kind, text: text, diags: out, parseFailed: broken, units: units}, true
}

// partialTreeCodes are the findings lint reports in every unit of a file
// that does not parse (its mistakes pass), besides the parse errors.
var partialTreeCodes = map[string]bool{
	lint.CodeHallucinatedMethod: true, lint.CodeHallucinatedGlobal: true, lint.CodeWrongContextPath: true,
	lint.CodeLengthProperty: true, lint.CodeMissingParens: true, lint.CodeInvalidPathInterpolation: true,
}

// recovers reports whether the parser, after the edited unit's error,
// reads the next unit as the match block it is (from its match keyword
// to its closing brace): it is then where a clean parse would be, and
// every later unit parses as before. A parse that bails out or runs on
// into the next unit changes what the whole file reports.
func recovers(stub []byte, text string, next unit, name string) bool {
	b := append([]byte(nil), stub...)
	copy(b[next.start:next.end], text[next.start:next.end])
	rs, _ := parser.Parse(source.NewFile(name, string(b)))
	if rs == nil || rs.Service == nil {
		return false
	}
	for _, root := range rs.Service.Matches {
		for _, m := range root.Matches {
			if m.Span.Start.Offset == next.start && (m.Span.End.Offset == next.end || m.Span.End.Offset == next.end-1) {
				return true
			}
		}
	}
	return false
}

// unitAt returns the index of the unit holding offset off, or -1.
func unitAt(units []unit, off int) int {
	lo, hi := 0, len(units)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case off < units[m].start:
			hi = m
		case off >= units[m].end:
			lo = m + 1
		default:
			return m
		}
	}
	return -1
}

var functionDecl = regexp.MustCompile(`\bfunction\s+([A-Za-z_][A-Za-z0-9_]*)`)

// headerFunctions lists the names of functions declared outside every unit.
func headerFunctions(text string, units []unit) map[string]bool {
	names := map[string]bool{}
	at := 0
	add := func(s string) {
		for _, m := range functionDecl.FindAllStringSubmatch(s, -1) {
			names[m[1]] = true
		}
	}
	for _, u := range units {
		add(text[at:u.start])
		at = u.end
	}
	add(text[at:])
	return names
}

// sameNames reports whether a and b call the functions of the set the
// same number of times (strings and comments aside; a method call
// x.f() is not a call of f).
func sameNames(set map[string]bool, a, b string) bool {
	if len(set) == 0 {
		return true
	}
	x, y := calls(set, a), calls(set, b)
	if len(x) != len(y) {
		return false
	}
	for w, n := range x {
		if y[w] != n {
			return false
		}
	}
	return true
}

// calls counts the calls in text of the functions of the set.
func calls(set map[string]bool, text string) map[string]int {
	out := map[string]int{}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += 2 + end + 1
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(text) && text[j] != c && text[j] != '\n' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case isIdent(c):
			start := i
			for i+1 < len(text) && isIdent(text[i+1]) {
				i++
			}
			name := text[start : i+1]
			if !set[name] || start > 0 && text[start-1] == '.' {
				continue
			}
			j := i + 1
			for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r') {
				j++
			}
			if j < len(text) && text[j] == '(' {
				out[name]++
			}
		}
	}
	return out
}

// scanUnits finds the match blocks at brace depth 2 (inside the service
// and its root match), skipping strings and comments. A brace right after
// a slash is a path wildcard, not a body.
func scanUnits(text string) []unit {
	var units []unit
	depth := 0
	cur := -1 // start of the unit being read
	body := false
	pathStart := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return nil
			}
			i += 2 + end + 1
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(text) && text[j] != c && text[j] != '\n' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case c == '{':
			if depth == 2 && cur >= 0 && !body && (i == 0 || text[i-1] != '/') {
				body = true
				units[len(units)-1].first = firstSegment(text[pathStart:i])
			}
			depth++
		case c == '}':
			depth--
			if depth < 0 {
				return nil
			}
			if depth == 2 && cur >= 0 && body {
				units[len(units)-1].end = i + 1
				cur, body = -1, false
			}
		case c == 'm' && depth == 2 && cur < 0 && strings.HasPrefix(text[i:], "match") &&
			(i == 0 || !isIdent(text[i-1])) && (i+5 >= len(text) || !isIdent(text[i+5])):
			cur, pathStart = i, i+5
			units = append(units, unit{start: i, end: -1})
			i += 4
		case isIdent(c):
			for i+1 < len(text) && isIdent(text[i+1]) {
				i++
			}
		}
	}
	if cur >= 0 {
		return nil
	}
	return units
}

// firstSegment is the shape of a match path's first segment: its text, or
// {*} / {**} for a wildcard.
func firstSegment(path string) string {
	path = strings.TrimSpace(path)
	path = strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(path, '/'); i >= 0 {
		path = path[:i]
	}
	if strings.HasPrefix(path, "{") {
		if strings.Contains(path, "**") {
			return "{**}"
		}
		return "{*}"
	}
	return path
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
