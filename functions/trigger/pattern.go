package trigger

import (
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
)

// Pattern is a compiled path pattern as Eventarc and firebase-functions
// read them: segments separated by "/", each a literal, "*" (exactly one
// segment), "**" (any number of segments, none included), "{name}" or
// "{name=*}" (one segment, captured), "{name=**}" (any number, captured
// joined by "/"). v1 resources use only literals and "{name}".
type Pattern struct {
	raw  string
	segs []segment
}

type segment struct {
	lit   string // a literal segment
	name  string // the capture's name ("" for none)
	multi bool   // matches zero or more segments
	wild  bool   // matches any one segment (or more, with multi)
}

// splitPath splits a path into its non-empty segments ("/a//b/" → a, b),
// as firebase-functions' pathParts does.
func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Compile parses a path pattern. It never fails: anything that is not a
// wildcard is a literal, as in firebase-functions.
func Compile(raw string) Pattern {
	p := Pattern{raw: raw}
	for _, part := range splitPath(raw) {
		var s segment
		switch {
		case strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}") && strings.Count(part, "{") == 1:
			name := part[1 : len(part)-1]
			s.wild = true
			if i := strings.IndexByte(name, '='); i >= 0 {
				s.multi = strings.Contains(name[i+1:], "**")
				name = name[:i]
			}
			s.name = name
		case part == "**":
			s.wild, s.multi = true, true
		case part == "*":
			s.wild = true
		default:
			s.lit = part
		}
		p.segs = append(p.segs, s)
	}
	return p
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.raw }

// HasWildcards reports whether the pattern matches more than one path.
func (p Pattern) HasWildcards() bool {
	for _, s := range p.segs {
		if s.wild {
			return true
		}
	}
	return false
}

// Match matches a whole path (segments) and returns its captures, values
// URL-decoded as firebase-functions decodes them.
func (p Pattern) Match(path []string) (map[string]string, bool) {
	params := map[string]string{}
	if !matchSegs(p.segs, path, params) {
		return nil, false
	}
	return params, true
}

func matchSegs(segs []segment, path []string, params map[string]string) bool {
	if len(segs) == 0 {
		return len(path) == 0
	}
	s := segs[0]
	if s.multi {
		// The longest match first, as firebase-functions' extractMatches
		// gives a multi-segment capture every segment the rest leaves.
		for n := len(path); n >= 0; n-- {
			if matchSegs(segs[1:], path[n:], params) {
				if s.name != "" {
					params[s.name] = decode(strings.Join(path[:n], "/"))
				}
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return false
	}
	if !s.wild && s.lit != path[0] {
		return false
	}
	if !matchSegs(segs[1:], path[1:], params) {
		return false
	}
	if s.name != "" {
		params[s.name] = decode(path[0])
	}
	return true
}

func decode(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// prefixOf reports whether path could be a proper prefix of a matching
// path: its segments match the pattern's first len(path) segments with
// at least one pattern segment (or a multi-segment wildcard) left over.
// It decides whether a change at path can fire the pattern at a
// descendant.
func (p Pattern) prefixOf(path []string) bool {
	return prefixSegs(p.segs, path)
}

func prefixSegs(segs []segment, path []string) bool {
	if len(path) == 0 {
		return len(segs) > 0
	}
	if len(segs) == 0 {
		return false
	}
	s := segs[0]
	if s.multi {
		return true // it can absorb the rest of path and still match below
	}
	if !s.wild && s.lit != path[0] {
		return false
	}
	return prefixSegs(segs[1:], path[1:])
}

// compiled caches Compile for the patterns of the loaded functions,
// which every change is matched against; it stops growing past
// maxCachedPatterns (reloads that keep changing patterns).
var (
	patternCache  sync.Map // string → Pattern
	cachedPattern atomic.Int64
)

const maxCachedPatterns = 4096

func compiled(raw string) Pattern {
	if p, ok := patternCache.Load(raw); ok {
		return p.(Pattern)
	}
	p := Compile(raw)
	if cachedPattern.Add(1) <= maxCachedPatterns {
		patternCache.Store(raw, p)
	}
	return p
}
