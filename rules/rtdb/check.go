package rtdb

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/rtdb/expr"
	"github.com/pyric/pyric/rules/source"
)

// typ is the static type the checker infers for an expression. Production
// RTDB type-checks rules when they are deployed (it rejects
// `newData.val()['kind']` with "No such method/property"), so pyric does too:
// anything definitely wrong is a compile error; anything that depends on
// data (val() results, auth.token claims) is checked when it runs.
type typ uint8

const (
	tInvalid typ = iota // already reported; accepted everywhere
	tAny                // unknown: an auth claim, a ternary of mixed types
	tPrim               // val(): string, number, boolean or null
	tString
	tNumber
	tBool
	tNull
	tSnap // data, newData, root and what child()/parent() return
	tMap  // auth
	tRegex
	tArray
)

func (t typ) String() string {
	return [...]string{"invalid", "value", "value", "string", "number", "boolean", "null",
		"snapshot", "object", "regular expression", "array"}[t]
}

func (t typ) boolish() bool   { return t == tInvalid || t == tAny || t == tPrim || t == tBool }
func (t typ) numberish() bool { return t == tInvalid || t == tAny || t == tPrim || t == tNumber }
func (t typ) stringish() bool { return t == tInvalid || t == tAny || t == tPrim || t == tString }

// method describes a method: how many arguments and what it returns.
type method struct {
	min, max int
	result   typ
}

var snapshotMethods = map[string]method{
	"val":         {0, 0, tPrim},
	"child":       {1, 1, tSnap},
	"parent":      {0, 0, tSnap},
	"hasChild":    {1, 1, tBool},
	"hasChildren": {0, 1, tBool},
	"exists":      {0, 0, tBool},
	"getPriority": {0, 0, tPrim},
	"isNumber":    {0, 0, tBool},
	"isString":    {0, 0, tBool},
	"isBoolean":   {0, 0, tBool},
}

var stringMethods = map[string]method{
	"contains":    {1, 1, tBool},
	"beginsWith":  {1, 1, tBool},
	"endsWith":    {1, 1, tBool},
	"matches":     {1, 1, tBool},
	"replace":     {2, 2, tString},
	"toLowerCase": {0, 0, tString},
	"toUpperCase": {0, 0, tString},
}

// jsLookalikes maps methods agents reach for to the RTDB spelling.
var jsLookalikes = map[string]string{
	"startsWith": "beginsWith", "includes": "contains", "test": "matches", "match": "matches",
	"replaceAll": "replace", "toLower": "toLowerCase", "toUpper": "toUpperCase", "lower": "toLowerCase",
	"upper": "toUpperCase", "size": "length", "has": "hasChild",
	"getChild": "child", "value": "val", "getValue": "val", "exist": "exists",
}

// checker type-checks one rule expression.
type checker struct {
	c    *compiler
	r    *rule
	vars []string // wildcard names in scope, with their $
}

func (k *checker) errorf(code string, n expr.Node, fix, format string, args ...any) {
	k.errorAt(code, n.Pos(), n.End(), fix, format, args...)
}

func (k *checker) errorAt(code string, pos, end int, fix, format string, args ...any) {
	k.c.diags = append(k.c.diags, source.Diagnostic{
		Severity: source.Error, Code: code, Message: fmt.Sprintf(format, args...),
		Span: k.r.span(pos, end), Fix: fix,
	})
}

// checkRule checks the whole condition, which must be a boolean.
func (k *checker) checkRule(n expr.Node) {
	t := k.check(n)
	if !t.boolish() {
		k.errorf("TYPE_ERROR", n, "compare it, e.g. `... === true` or `.exists()`",
			"%s rule must evaluate to a boolean, but this expression is a %s", k.r.kind, t)
	}
}

func (k *checker) check(n expr.Node) typ {
	switch n := n.(type) {
	case *expr.Literal:
		switch n.Kind {
		case expr.LitNull:
			return tNull
		case expr.LitBool:
			return tBool
		case expr.LitNumber:
			return tNumber
		}
		return tString
	case *expr.Paren:
		return k.check(n.X)
	case *expr.Ident:
		return k.ident(n)
	case *expr.Regex:
		k.errorf("TYPE_ERROR", n, "use it as `string.matches(/.../)`",
			"a regular expression literal can only be the argument of matches()")
		return tInvalid
	case *expr.Array:
		k.errorf("TYPE_ERROR", n, "", "an array literal can only be the argument of hasChildren()")
		return tInvalid
	case *expr.Unary:
		t := k.check(n.X)
		if n.Op == "!" {
			if !t.boolish() {
				k.errorf("TYPE_ERROR", n, "", "! only operates on booleans, not on a %s", t)
			}
			return tBool
		}
		if !t.numberish() {
			k.errorf("TYPE_ERROR", n, "", "unary - only operates on numbers, not on a %s", t)
		}
		return tNumber
	case *expr.Binary:
		return k.binary(n)
	case *expr.Cond:
		ct := k.check(n.Cond)
		if !ct.boolish() {
			k.errorf("TYPE_ERROR", n.Cond, "", "the condition of ?: must be a boolean, not a %s", ct)
		}
		a, b := k.check(n.Then), k.check(n.Else)
		switch {
		case a == b:
			return a
		case a == tInvalid || b == tInvalid:
			return tInvalid
		case a == tSnap || b == tSnap || a == tMap || b == tMap:
			return tAny
		}
		return tPrim
	case *expr.Member:
		t, _ := k.member(n, false)
		return t
	case *expr.Index:
		return k.index(n)
	case *expr.Call:
		return k.call(n)
	}
	return tInvalid
}

func (k *checker) ident(n *expr.Ident) typ {
	switch n.Name {
	case "auth":
		return tMap
	case "data", "root":
		return tSnap
	case "now":
		return tNumber
	case "query":
		if k.r.kind != ".read" {
			k.errorf("QUERY_OUTSIDE_READ", n, "use `query` in .read rules only",
				"query is only defined in .read rules: it describes the query a read makes")
		}
		return tMap
	case "newData":
		if k.r.kind == ".read" {
			k.errorf("NEWDATA_IN_READ", n, "use `data` (the stored value) in .read rules",
				"newData is not defined in .read rules: a read writes nothing")
			return tSnap // keep checking the rest of the expression
		}
		return tSnap
	}
	if strings.HasPrefix(n.Name, "$") {
		for _, v := range k.vars {
			if v == n.Name {
				return tString
			}
		}
		fix := ""
		if len(k.vars) > 0 {
			fix = "wildcards in scope here: " + strings.Join(k.vars, ", ")
			if s := suggest(n.Name, k.vars); s != "" {
				fix = fmt.Sprintf("did you mean `%s`?", s)
			}
		}
		k.errorf("UNKNOWN_IDENTIFIER", n, fix, "unknown variable %s: no %s wildcard encloses this rule", n.Name, n.Name)
		return tInvalid
	}
	known := append([]string{"auth", "data", "newData", "root", "now", "query"}, k.vars...)
	fix := ""
	switch n.Name {
	case "request":
		fix = "RTDB rules use `auth` (e.g. `auth.uid`), not `request.auth`"
	case "resource":
		fix = "RTDB rules use `data` for the stored value and `newData` for the value being written"
	case "undefined":
		fix = "use `null`"
	default:
		if s := suggest(n.Name, known); s != "" {
			fix = fmt.Sprintf("did you mean `%s`?", s)
		}
	}
	k.errorf("UNKNOWN_IDENTIFIER", n, fix, "unknown identifier '%s': RTDB rules know auth, data, newData, root, now, query and $wildcards", n.Name)
	return tInvalid
}

func (k *checker) binary(n *expr.Binary) typ {
	x, y := k.check(n.X), k.check(n.Y)
	switch n.Op {
	case "&&", "||":
		for _, side := range []struct {
			t typ
			n expr.Node
		}{{x, n.X}, {y, n.Y}} {
			if !side.t.boolish() {
				k.errorf("TYPE_ERROR", side.n, "", "%s only operates on booleans, not on a %s", n.Op, side.t)
			}
		}
		return tBool
	case "==", "!=", "===", "!==":
		for _, side := range []struct {
			t typ
			n expr.Node
		}{{x, n.X}, {y, n.Y}} {
			switch side.t {
			case tSnap:
				k.errorf("TYPE_ERROR", side.n, "compare `.val()`, or use `.exists()` to test for presence",
					"%s cannot compare a snapshot", n.Op)
			case tRegex, tArray:
				k.errorf("TYPE_ERROR", side.n, "", "%s cannot compare a %s", n.Op, side.t)
			}
		}
		return tBool
	case "<", "<=", ">", ">=":
		for _, side := range []struct {
			t typ
			n expr.Node
		}{{x, n.X}, {y, n.Y}} {
			if !side.t.numberish() && !side.t.stringish() {
				k.errorf("TYPE_ERROR", side.n, "", "%s only operates on numbers and strings, not on a %s", n.Op, side.t)
			}
		}
		return tBool
	case "+":
		for _, side := range []struct {
			t typ
			n expr.Node
		}{{x, n.X}, {y, n.Y}} {
			if !side.t.numberish() && !side.t.stringish() {
				k.errorf("TYPE_ERROR", side.n, "", "+ only operates on numbers and strings, not on a %s", side.t)
			}
		}
		switch {
		case x == tString || y == tString:
			return tString
		case x == tNumber && y == tNumber:
			return tNumber
		}
		return tPrim
	default: // - * / %
		for _, side := range []struct {
			t typ
			n expr.Node
		}{{x, n.X}, {y, n.Y}} {
			if !side.t.numberish() {
				k.errorf("TYPE_ERROR", side.n, "", "%s only operates on numbers, not on a %s", n.Op, side.t)
			}
		}
		return tNumber
	}
}

// member checks x.name; called reports whether it is the callee of a call.
// For a method it also returns the method's signature.
func (k *checker) member(n *expr.Member, called bool) (typ, method) {
	x := k.check(n.X)
	switch x {
	case tInvalid:
		return tInvalid, method{}
	case tSnap:
		if m, ok := snapshotMethods[n.Name]; ok {
			if !called {
				k.errorAt("TYPE_ERROR", n.NamePos, n.End(), fmt.Sprintf("call it: `%s()`", n.Name),
					"%s is a snapshot method and must be called", n.Name)
				return tInvalid, method{}
			}
			return m.result, m
		}
		k.unknownMethod(n, "snapshot", keys(snapshotMethods))
		return tInvalid, method{}
	case tString, tPrim, tAny:
		if n.Name == "length" {
			if called {
				k.errorAt("TYPE_ERROR", n.NamePos, n.End(), "write `.length` without parentheses",
					"length is a property, not a method")
				return tInvalid, method{}
			}
			if x == tAny {
				return tAny, method{}
			}
			return tNumber, method{}
		}
		if m, ok := stringMethods[n.Name]; ok {
			if !called {
				k.errorAt("TYPE_ERROR", n.NamePos, n.End(), fmt.Sprintf("call it: `%s(...)`", n.Name),
					"%s is a string method and must be called", n.Name)
				return tInvalid, method{}
			}
			return m.result, m
		}
		if x == tAny && !called {
			return tAny, method{} // a property of an auth claim
		}
		if m, ok := snapshotMethods[n.Name]; ok && x == tAny {
			return m.result, m // a ternary that may yield a snapshot
		}
		k.unknownMethod(n, x.String(), append(keys(stringMethods), "length"))
		return tInvalid, method{}
	case tMap:
		if called {
			k.unknownMethod(n, "object", nil)
			return tInvalid, method{}
		}
		if id, ok := expr.Unparen(n.X).(*expr.Ident); ok && id.Name == "query" {
			t, ok := queryMembers[n.Name]
			if !ok {
				fix := "query has " + strings.Join(QueryMembers(), ", ")
				if s := suggest(n.Name, QueryMembers()); s != "" {
					fix = fmt.Sprintf("did you mean `query.%s`?", s)
				}
				k.errorAt("UNKNOWN_IDENTIFIER", n.NamePos, n.End(), fix, "query has no member %s", n.Name)
				return tInvalid, method{}
			}
			return t, method{}
		}
		return tAny, method{}
	}
	k.unknownMethod(n, x.String(), nil)
	return tInvalid, method{}
}

func (k *checker) unknownMethod(n *expr.Member, on string, known []string) {
	fix := ""
	if s, ok := jsLookalikes[n.Name]; ok && contains(known, s) {
		fix = fmt.Sprintf("RTDB spells it `%s`", s)
	} else if s := suggest(n.Name, known); s != "" {
		fix = fmt.Sprintf("did you mean `%s`?", s)
	} else if on == "snapshot" && contains([]string{"length", "size", "keys", "numChildren"}, n.Name) {
		fix = "RTDB rules can't count children; test specific children with hasChild()/hasChildren([...])"
	}
	article := "a"
	if strings.IndexByte("aeiou", on[0]) >= 0 {
		article = "an"
	}
	k.errorAt("UNKNOWN_METHOD", n.NamePos, n.End(), fix, "No such method/property '%s' on %s %s", n.Name, article, on)
}

func (k *checker) index(n *expr.Index) typ {
	x := k.check(n.X)
	i := k.check(n.Index)
	switch x {
	case tInvalid:
		return tInvalid
	case tMap, tAny:
		if !i.stringish() && !i.numberish() {
			k.errorf("TYPE_ERROR", n.Index, "", "an object key must be a string, not a %s", i)
		}
		return tAny
	}
	fix := ""
	if x == tSnap {
		fix = "use `.child(...)` to reach a child of a snapshot"
	} else if x == tPrim {
		fix = "val() returns only primitives; use `.child('key').val()`"
	}
	k.errorAt("UNKNOWN_METHOD", n.Lbrack, n.End(), fix,
		"No such method/property: [] only reads a key of an object such as auth.token, not of a %s", x)
	return tInvalid
}

func (k *checker) call(n *expr.Call) typ {
	m, ok := expr.Unparen(n.Fun).(*expr.Member)
	if !ok {
		if id, ok := expr.Unparen(n.Fun).(*expr.Ident); ok && !isKnownIdent(id.Name) && !strings.HasPrefix(id.Name, "$") {
			k.errorf("UNKNOWN_IDENTIFIER", id, "RTDB rules have no functions; use snapshot and string methods",
				"unknown function '%s'", id.Name)
		} else {
			k.check(n.Fun)
			k.errorf("TYPE_ERROR", n.Fun, "", "this expression is not a function")
		}
		for _, a := range n.Args {
			k.checkArg(a)
		}
		return tInvalid
	}
	recv, sig := k.member(m, true)
	if recv == tInvalid {
		for _, a := range n.Args {
			k.checkArg(a)
		}
		return tInvalid
	}
	if len(n.Args) < sig.min || len(n.Args) > sig.max {
		want := fmt.Sprintf("%d arguments", sig.min)
		switch {
		case sig.min == sig.max && sig.min == 1:
			want = "1 argument"
		case sig.min != sig.max:
			want = fmt.Sprintf("%d or %d arguments", sig.min, sig.max)
		case sig.min == 0:
			want = "no arguments"
		}
		k.errorAt("TYPE_ERROR", n.Lparen, n.End(), "", "%s() takes %s, got %d", m.Name, want, len(n.Args))
		return tInvalid
	}
	switch m.Name {
	case "matches":
		if _, ok := expr.Unparen(n.Args[0]).(*expr.Regex); !ok {
			k.check(n.Args[0])
			k.errorf("TYPE_ERROR", n.Args[0], "write a regular expression literal, e.g. `matches(/^[a-z]+$/)`",
				"matches() takes a regular expression literal")
			return tInvalid
		}
		k.regex(expr.Unparen(n.Args[0]).(*expr.Regex))
		return sig.result
	case "hasChildren":
		if len(n.Args) == 1 {
			arr, ok := expr.Unparen(n.Args[0]).(*expr.Array)
			if !ok {
				k.check(n.Args[0])
				k.errorf("TYPE_ERROR", n.Args[0], "write the keys as a list, e.g. `hasChildren(['name', 'age'])`",
					"hasChildren() takes an array literal of child names")
				return tInvalid
			}
			for _, e := range arr.Elems {
				if t := k.check(e); !t.stringish() {
					k.errorf("TYPE_ERROR", e, "", "hasChildren() takes child names (strings), not a %s", t)
				}
			}
		}
		return sig.result
	}
	for _, a := range n.Args {
		t := k.check(a)
		if !t.stringish() && !t.numberish() {
			k.errorf("TYPE_ERROR", a, "", "%s() takes a string argument, not a %s", m.Name, t)
		}
	}
	return sig.result
}

// checkArg checks an argument of a call already known to be wrong, without
// reporting its regex or array literal a second time.
func (k *checker) checkArg(a expr.Node) {
	switch a := expr.Unparen(a).(type) {
	case *expr.Regex:
		k.regex(a)
	case *expr.Array:
		for _, e := range a.Elems {
			k.check(e)
		}
	default:
		k.check(a)
	}
}

// regex compiles a regex literal as RE2 and remembers it for evaluation.
func (k *checker) regex(n *expr.Regex) {
	re, err := compileRegex(n.Pattern, n.Flags)
	if err != nil {
		k.errorf("INVALID_REGEX", n, "RE2 syntax has no lookaround or backreferences", "invalid regular expression: %v", err)
		return
	}
	if k.r.regexes == nil {
		k.r.regexes = map[*expr.Regex]*regexp.Regexp{}
	}
	k.r.regexes[n] = re
}

func compileRegex(pattern, flags string) (*regexp.Regexp, error) {
	prefix := ""
	for _, f := range flags {
		switch f {
		case 'i':
			prefix += "i"
		case 'm':
			prefix += "m"
		case 's':
			prefix += "s"
		default:
			return nil, fmt.Errorf("unsupported flag %q (RTDB supports i)", f)
		}
	}
	if prefix != "" {
		pattern = "(?" + prefix + ")" + pattern
	}
	return regexp.Compile(pattern)
}

func isKnownIdent(name string) bool {
	switch name {
	case "auth", "data", "newData", "root", "now", "query":
		return true
	}
	return false
}

func keys(m map[string]method) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns the candidate closest to name when it is a plausible typo.
func suggest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > len(name)/2 {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
