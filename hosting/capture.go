package hosting

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Redirect captures: a redirect whose destination names a segment
// (`/:name`, `/:rest*`) takes its values from the source, read as a route
// pattern (`/blog/:post`, `/docs/:path*`, a bare `*` capturing anything),
// or from a `regex` source's groups (`:1`, `:name`). These are the route
// patterns of path-to-regexp 1.x, which the Hosting emulator uses:
// case-insensitive, anchored at the start and the end, a trailing slash
// allowed.

// routeToken is a literal (name == "") or a parameter.
type routeToken struct {
	literal   string
	name      string
	prefix    string // "/" or "." written before the parameter
	delimiter string
	pattern   string
	optional  bool
	repeat    bool
	partial   bool
	asterisk  bool
}

var routeTokenRE = regexp.MustCompile(`(\\.)|([/.])?(?:(?::(\w+)(?:\(((?:\\.|[^\\()])+)\))?|\(((?:\\.|[^\\()])+)\))([+*?])?|(\*))`)

// parseRoute splits a route pattern into tokens.
func parseRoute(s string) []routeToken {
	var tokens []routeToken
	key, index := 0, 0
	var path string
	for _, m := range routeTokenRE.FindAllStringSubmatchIndex(s, -1) {
		group := func(i int) (string, bool) {
			if m[2*i] < 0 {
				return "", false
			}
			return s[m[2*i]:m[2*i+1]], true
		}
		path += s[index:m[0]]
		index = m[1]
		if esc, ok := group(1); ok {
			path += esc[1:]
			continue
		}
		var next string
		if index < len(s) {
			next = s[index : index+1]
		}
		prefix, hasPrefix := group(2)
		name, _ := group(3)
		capture, _ := group(4)
		grp, _ := group(5)
		modifier, _ := group(6)
		_, asterisk := group(7)
		if path != "" {
			tokens = append(tokens, routeToken{literal: path})
			path = ""
		}
		delimiter := "/"
		if hasPrefix {
			delimiter = prefix
		}
		pattern := capture
		if pattern == "" {
			pattern = grp
		}
		if name == "" {
			name = strconv.Itoa(key)
			key++
		}
		t := routeToken{name: name, prefix: prefix, delimiter: delimiter,
			optional: modifier == "?" || modifier == "*", repeat: modifier == "+" || modifier == "*",
			partial: hasPrefix && next != "" && next != prefix, asterisk: asterisk}
		switch {
		case pattern != "":
			t.pattern = pattern
		case asterisk:
			t.pattern = ".*"
		default:
			t.pattern = "[^" + regexp.QuoteMeta(delimiter) + "]+?"
		}
		tokens = append(tokens, t)
	}
	if index < len(s) {
		path += s[index:]
	}
	if path != "" {
		tokens = append(tokens, routeToken{literal: path})
	}
	return tokens
}

// compileRoute returns the regexp matching a route pattern and its
// parameter names in group order.
func compileRoute(s string) (*regexp.Regexp, []routeToken, error) {
	tokens := parseRoute(s)
	var b strings.Builder
	var keys []routeToken
	for _, t := range tokens {
		if t.name == "" {
			b.WriteString(regexp.QuoteMeta(t.literal))
			continue
		}
		keys = append(keys, t)
		prefix := regexp.QuoteMeta(t.prefix)
		capture := "(?:" + t.pattern + ")"
		if t.repeat {
			capture += "(?:" + prefix + capture + ")*"
		}
		if t.optional {
			if !t.partial {
				capture = "(?:" + prefix + "(" + capture + "))?"
			} else {
				capture = prefix + "(" + capture + ")?"
			}
		} else {
			capture = prefix + "(" + capture + ")"
		}
		b.WriteString(capture)
	}
	route := b.String()
	route = strings.TrimSuffix(route, `/`)
	route = "(?i)^" + route + "(?:/)?$"
	re, err := regexp.Compile(route)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read %q as a route pattern for captures: %v", s, err)
	}
	return re, keys, nil
}

// fillRoute writes a destination pattern with the captured values; ok is
// false when a value a non-optional segment needs is missing or does not
// fit its pattern (the emulator then does not redirect).
func fillRoute(tokens []routeToken, params map[string][]string) (string, bool) {
	var b strings.Builder
	for _, t := range tokens {
		if t.name == "" {
			b.WriteString(t.literal)
			continue
		}
		vals, set := params[t.name]
		if !set {
			if t.optional {
				if t.partial {
					b.WriteString(t.prefix)
				}
				continue
			}
			return "", false
		}
		re, err := regexp.Compile("^(?:" + t.pattern + ")$")
		if err != nil {
			return "", false
		}
		if len(vals) > 1 || (len(vals) == 1 && t.repeat) {
			if !t.repeat {
				return "", false
			}
			for j, v := range vals {
				seg := url.QueryEscape(v)
				seg = strings.ReplaceAll(seg, "+", "%20")
				if !re.MatchString(seg) {
					return "", false
				}
				if j == 0 {
					b.WriteString(t.prefix)
				} else {
					b.WriteString(t.delimiter)
				}
				b.WriteString(v)
			}
			continue
		}
		v := ""
		if len(vals) == 1 {
			v = vals[0]
		}
		seg := strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
		if !re.MatchString(seg) {
			return "", false
		}
		b.WriteString(t.prefix)
		b.WriteString(v)
	}
	return b.String(), true
}

// hasCaptureRefs reports whether a destination names a captured segment:
// a ":" at its start or right after a "/".
func hasCaptureRefs(dest string) bool {
	return strings.HasPrefix(dest, ":") || strings.Contains(dest, "/:")
}
