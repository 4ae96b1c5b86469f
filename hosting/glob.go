package hosting

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A glob is a compiled `source` pattern of firebase.json: Hosting matches
// request paths the way minimatch does (the Hosting emulator's matcher, with
// its default options): `*` and `?` stay inside one segment, `**` spans
// segments, `{a,b}` and `{1..3}` expand, `[...]` classes and the
// `@(a|b)`, `+(...)`, `*(...)`, `?(...)` extended globs match as in a
// shell, a leading `!` negates, and a wildcard never matches a segment
// that starts with a dot unless the pattern's segment does.
type glob struct {
	source  string
	negate  bool
	choices [][]globSeg // one per brace expansion
	dot     bool        // wildcards may match dot segments (the `ignore` globs)
}

// globSeg is one segment of a pattern: a literal, `**`, or a regexp.
type globSeg struct {
	literal  string
	globstar bool
	re       *regexp.Regexp // nil for literals and globstars
	leadDot  bool           // the pattern segment starts with a literal "."
}

// maxBraceExpansions bounds what one pattern may expand to, so a
// firebase.json cannot make startup (or matching) unbounded.
const maxBraceExpansions = 256

func compileGlob(src string, dot bool) (*glob, error) {
	g := &glob{source: src, dot: dot}
	p := src
	for strings.HasPrefix(p, "!") {
		g.negate = !g.negate
		p = p[1:]
	}
	expanded, err := expandBraces(p)
	if err != nil {
		return nil, err
	}
	for _, e := range expanded {
		var segs []globSeg
		for _, part := range strings.Split(e, "/") {
			s, err := compileSegment(part)
			if err != nil {
				return nil, err
			}
			segs = append(segs, s)
		}
		g.choices = append(g.choices, segs)
	}
	return g, nil
}

// match reports whether the path (split on "/") matches.
func (g *glob) match(path string) bool {
	file := strings.Split(path, "/")
	for _, segs := range g.choices {
		m := &globMatch{g: g, file: file, pat: segs}
		if m.from(0, 0) {
			return !g.negate
		}
	}
	return g.negate
}

// globMatch is one path matched against one expansion of a pattern. The
// result of each (file position, pattern position) is remembered and a
// `**` either stops or swallows one segment per step, so matching costs
// at most segments × pattern length steps whatever the path: a request
// cannot make it exponential or quadratic.
type globMatch struct {
	g    *glob
	file []string
	pat  []globSeg
	memo []int8 // 0 unknown, 1 match, 2 no match
}

// from is minimatch's segment walk from file[fi] and pat[pi]: a `**`
// swallows zero or more segments (never "." / ".." or, without dot, a
// dot segment); a path with one extra empty segment at the end (a
// trailing slash) still matches.
func (m *globMatch) from(fi, pi int) bool {
	file, pat := m.file, m.pat
	for {
		switch {
		case pi == len(pat):
			return fi == len(file) || (fi == len(file)-1 && file[fi] == "")
		case fi == len(file):
			return false
		}
		if pat[pi].globstar {
			if m.memo == nil {
				m.memo = make([]int8, (len(file)+1)*(len(pat)+1))
			}
			k := fi*(len(pat)+1) + pi
			if v := m.memo[k]; v != 0 {
				return v == 1
			}
			f := file[fi]
			swallow := f != "." && f != ".." && (m.g.dot || !strings.HasPrefix(f, "."))
			// Having swallowed the last segment, the `**` is done: the
			// rest of the pattern must match nothing (minimatch never
			// tries it against an empty remainder otherwise).
			next := pi
			if fi+1 == len(file) {
				next = pi + 1
			}
			ok := m.from(fi, pi+1) || (swallow && m.from(fi+1, next))
			m.memo[k] = 2
			if ok {
				m.memo[k] = 1
			}
			return ok
		}
		if !m.g.segMatch(file[fi], pat[pi]) {
			return false
		}
		fi, pi = fi+1, pi+1
	}
}

func (g *glob) segMatch(f string, p globSeg) bool {
	if p.re == nil {
		return f == p.literal
	}
	if !g.dot && strings.HasPrefix(f, ".") && !p.leadDot {
		return false
	}
	if f == "." || f == ".." {
		if !p.leadDot {
			return false
		}
	}
	return p.re.MatchString(f)
}

// compileSegment turns one pattern segment into a literal or a regexp.
func compileSegment(s string) (globSeg, error) {
	if s == "**" {
		return globSeg{globstar: true}, nil
	}
	if !strings.ContainsAny(s, "*?[+@!(\\") {
		return globSeg{literal: s}, nil
	}
	var b strings.Builder
	b.WriteString("^")
	if s == "*" {
		b.WriteString("[^/]+") // a lone star needs at least one character
	} else {
		if err := translate(&b, s, 0); err != nil {
			return globSeg{}, fmt.Errorf("glob segment %q: %w", s, err)
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return globSeg{}, fmt.Errorf("glob segment %q: %v", s, err)
	}
	if re.String() == "^"+regexp.QuoteMeta(s)+"$" {
		return globSeg{literal: unescapeGlob(s)}, nil
	}
	return globSeg{re: re, leadDot: strings.HasPrefix(s, ".")}, nil
}

func unescapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// translate writes the regexp for a segment pattern (or an extglob
// alternative when depth > 0) to b.
func translate(b *strings.Builder, s string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("extended globs nest too deeply")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i+1 < len(s) && s[i+1] == '(' && strings.IndexByte("@+*?!", c) >= 0 {
			end := matchingParen(s, i+1)
			if end < 0 {
				return fmt.Errorf("unclosed %c(", c)
			}
			if c == '!' {
				return fmt.Errorf("the negated extended glob !(...) is not supported; list the paths to match instead")
			}
			b.WriteString("(?:")
			for j, alt := range splitTop(s[i+2 : end]) {
				if j > 0 {
					b.WriteString("|")
				}
				if err := translate(b, alt, depth+1); err != nil {
					return err
				}
			}
			b.WriteString(")")
			switch c {
			case '+':
				b.WriteString("+")
			case '*':
				b.WriteString("*")
			case '?':
				b.WriteString("?")
			}
			i = end
			continue
		}
		switch c {
		case '*':
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteString(regexp.QuoteMeta(string(s[i])))
			} else {
				b.WriteString(`\\`)
			}
		case '[':
			end := classEnd(s, i)
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			body := s[i+1 : end]
			b.WriteString("[")
			if strings.HasPrefix(body, "!") || strings.HasPrefix(body, "^") {
				b.WriteString("^/")
				body = body[1:]
			}
			for k := 0; k < len(body); k++ {
				switch body[k] {
				case '\\':
					if k+1 < len(body) {
						k++
						b.WriteString(regexp.QuoteMeta(string(body[k])))
					}
				case '[', ']', '^':
					b.WriteString(`\` + string(body[k]))
				default:
					b.WriteByte(body[k])
				}
			}
			b.WriteString("]")
			i = end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return nil
}

func matchingParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func classEnd(s string, open int) int {
	i := open + 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		i++
	}
	if i < len(s) && s[i] == ']' {
		i++
	}
	for ; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == ']' {
			return i
		}
	}
	return -1
}

// splitTop splits on "|" outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// expandBraces expands `{a,b}` alternatives and `{1..3}` / `{a..c}`
// sequences, as brace-expansion does for minimatch.
func expandBraces(p string) ([]string, error) {
	out := []string{p}
	for changed := true; changed; {
		changed = false
		var next []string
		for _, s := range out {
			alts, ok := expandFirst(s)
			if ok {
				changed = true
				next = append(next, alts...)
			} else {
				next = append(next, s)
			}
			if len(next) > maxBraceExpansions {
				return nil, fmt.Errorf("braces expand to more than %d patterns", maxBraceExpansions)
			}
		}
		out = next
	}
	return out, nil
}

// expandFirst expands the first brace group that has a top-level comma or
// is a sequence; ok is false when there is none.
func expandFirst(s string) ([]string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] != '{' {
			continue
		}
		depth, end := 0, -1
		var commas []int
		for j := i; j < len(s) && end < 0; j++ {
			switch s[j] {
			case '\\':
				j++
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					end = j
				}
			case ',':
				if depth == 1 {
					commas = append(commas, j)
				}
			}
		}
		if end < 0 {
			return nil, false
		}
		pre, body, post := s[:i], s[i+1:end], s[end+1:]
		var alts []string
		if len(commas) > 0 {
			start := i + 1
			for _, c := range commas {
				alts = append(alts, s[start:c])
				start = c + 1
			}
			alts = append(alts, s[start:end])
		} else if seq, ok := sequence(body); ok {
			alts = seq
		} else {
			continue
		}
		out := make([]string, len(alts))
		for k, a := range alts {
			out[k] = pre + a + post
		}
		return out, true
	}
	return nil, false
}

var seqRE = regexp.MustCompile(`^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])$`)

func sequence(body string) ([]string, bool) {
	m := seqRE.FindStringSubmatch(body)
	if m == nil {
		return nil, false
	}
	a, errA := strconv.Atoi(m[1])
	z, errZ := strconv.Atoi(m[2])
	if errA != nil || errZ != nil {
		if errA == nil || errZ == nil {
			return nil, false
		}
		a, z = int(m[1][0]), int(m[2][0])
	}
	step := 1
	if z < a {
		step = -1
	}
	var out []string
	for v := a; ; v += step {
		if errA != nil {
			out = append(out, string(rune(v)))
		} else {
			out = append(out, strconv.Itoa(v))
		}
		if v == z || len(out) > maxBraceExpansions {
			break
		}
	}
	return out, true
}
