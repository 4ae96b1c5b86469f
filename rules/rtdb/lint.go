package rtdb

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/rtdb/expr"
	"github.com/pyric/pyric/rules/source"
)

// Codes lists every diagnostic code Compile and Lint emit, with a short
// description (the SARIF rule catalogue).
var Codes = map[string]string{
	"INVALID_RULES_JSON": "The file is not valid JSON or not a valid rules tree.",
	"PARSE_ERROR":        "A rule expression has a syntax error.",
	"UNKNOWN_METHOD":     "A method or property that does not exist on the value (production: No such method/property).",
	"UNKNOWN_IDENTIFIER": "A name that RTDB rules don't define.",
	"NEWDATA_IN_READ":    "newData used in a .read rule, where it is undefined.",
	"TYPE_ERROR":         "An operator or method applied to a value of the wrong type.",
	"INVALID_REGEX":      "A regular expression literal that does not compile.",
	"HARDCODED_TRUE":     "A .read or .write that is always true at the root or on a wildcard.",
	"LOOSE_EQUALITY":     "== or != converts types before comparing.",
	"DATA_IN_WRITE":      "A .write that checks only the old value (data), never the new one (newData).",
	"MISSING_INDEX":      "A collection whose entries validate an ordered field that has no .indexOn.",
}

// Metrics summarizes a rules file for lint output.
type Metrics struct {
	SourceSize int `json:"sourceSize"`
	Locations  int `json:"locations"`
	Rules      int `json:"rules"`
	Wildcards  int `json:"wildcards"`
	MaxDepth   int `json:"maxDepth"`
}

// LintResult is what Lint found.
type LintResult struct {
	Diagnostics source.Diagnostics
	Metrics     Metrics
	// Unparseable is set when the file is not JSON at all, so no rule could
	// be checked.
	Unparseable bool
}

// Lint reports every compile error of the file plus warnings about rules
// that compile but are probably wrong:
//
//   - HARDCODED_TRUE: .read or .write always true (true, "true", or only
//     literals under ! && ||) at the root or on a $wildcard location, which
//     opens the whole database or a whole collection.
//   - LOOSE_EQUALITY: == or !=, which convert types ('1' == 1). A
//     comparison with the null literal is exact and not flagged.
//   - DATA_IN_WRITE: a .write that uses data but never newData, so what is
//     being written is never checked. Presence tests alone (`data.exists()`,
//     `data.val() == null`: create-only and exists-gated writes) are not
//     flagged.
//   - MISSING_INDEX: a location L with a $wildcard child W, where a .validate
//     orders a field f of the entries (<, <=, > or >= on
//     newData.val() in W/f, or on newData.child('f').val() in W), and f is
//     not in L's .indexOn. Ordered fields (timestamps, scores, counters)
//     are what clients orderByChild on; without the index RTDB sends the
//     whole collection to filter on the client.
func Lint(file *source.File) *LintResult {
	c := compileFile(file)
	res := &LintResult{Unparseable: c.syntax}
	res.Metrics.SourceSize = len(file.Text)
	for _, n := range c.nodes {
		res.Metrics.Locations++
		if strings.HasPrefix(n.key, "$") {
			res.Metrics.Wildcards++
		}
		if d := strings.Count(n.path, "/"); n.path != "/" && d > res.Metrics.MaxDepth {
			res.Metrics.MaxDepth = d
		}
	}
	res.Metrics.Rules = len(c.rules)
	l := &linter{c: c}
	for _, r := range c.rules {
		if r.ast == nil {
			continue
		}
		l.hardcodedTrue(r)
		l.looseEquality(r)
		l.dataInWrite(r)
	}
	for _, n := range c.nodes {
		l.missingIndex(n)
	}
	res.Diagnostics = c.diags
	res.Diagnostics.Sort()
	return res
}

type linter struct{ c *compiler }

func (l *linter) warn(r *rule, code string, pos, end int, fix, format string, args ...any) {
	l.c.diags = append(l.c.diags, source.Diagnostic{
		Severity: source.Warning, Code: code, Message: fmt.Sprintf(format, args...),
		Span: r.span(pos, end), Fix: fix,
	})
}

// constTrue folds ! && || over boolean literals.
func constTrue(n expr.Node) (value, constant bool) {
	switch n := expr.Unparen(n).(type) {
	case *expr.Literal:
		return n.Bool, n.Kind == expr.LitBool
	case *expr.Unary:
		if n.Op == "!" {
			v, ok := constTrue(n.X)
			return !v, ok
		}
	case *expr.Binary:
		x, okx := constTrue(n.X)
		y, oky := constTrue(n.Y)
		switch n.Op {
		case "&&":
			if okx && !x || oky && !y {
				return false, true
			}
			return true, okx && oky
		case "||":
			if okx && x || oky && y {
				return true, true
			}
			return false, okx && oky
		}
	}
	return false, false
}

func (l *linter) hardcodedTrue(r *rule) {
	if r.kind != ".read" && r.kind != ".write" {
		return
	}
	wildcard := strings.HasPrefix(r.node.key, "$")
	if r.node.parent != nil && !wildcard {
		return
	}
	if v, ok := constTrue(r.ast); !ok || !v {
		return
	}
	verb := "read"
	if r.kind == ".write" {
		verb = "write"
	}
	var msg, fix string
	if wildcard {
		msg = fmt.Sprintf("%s is always true on %s: anyone, signed in or not, can %s every entry", r.kind, r.node.path, verb)
		fix = fmt.Sprintf(`require the owner, e.g. "auth != null && auth.uid === %s"`, r.node.key)
	} else {
		msg = fmt.Sprintf("%s is always true at the root: anyone, signed in or not, can %s the whole database", r.kind, verb)
		fix = `require sign-in at least ("auth != null"), and grant narrower locations instead of the root`
	}
	l.warn(r, "HARDCODED_TRUE", 0, len(r.text), fix, "%s", msg)
}

func (l *linter) looseEquality(r *rule) {
	expr.Walk(r.ast, func(n expr.Node) bool {
		b, ok := n.(*expr.Binary)
		if !ok || (b.Op != "==" && b.Op != "!=") || isNull(b.X) || isNull(b.Y) {
			// x == null converts nothing: it is exact in RTDB, which has no
			// undefined, so the common `auth != null` is not flagged.
			return true
		}
		strict := "==="
		if b.Op == "!=" {
			strict = "!=="
		}
		l.warn(r, "LOOSE_EQUALITY", b.OpPos, b.OpPos+len(b.Op), fmt.Sprintf("use `%s`", strict),
			"%s converts types before comparing ('1' == 1 is true); %s compares exactly", b.Op, strict)
		return true
	})
}

func (l *linter) dataInWrite(r *rule) {
	if r.kind != ".write" {
		return
	}
	var first *expr.Ident
	usesNew, onlyExists := false, true
	// Parents of each data identifier, to recognize data.exists().
	var stack []expr.Node
	var visit func(n expr.Node)
	visit = func(n expr.Node) {
		if id, ok := n.(*expr.Ident); ok {
			switch id.Name {
			case "newData":
				usesNew = true
			case "data":
				if first == nil {
					first = id
				}
				if !isPresenceCheck(id, stack) {
					onlyExists = false
				}
			}
		}
		stack = append(stack, n)
		expr.Walk(n, func(c expr.Node) bool {
			if c == n {
				return true
			}
			visit(c)
			return false
		})
		stack = stack[:len(stack)-1]
	}
	visit(r.ast)
	if first == nil || usesNew || onlyExists {
		return
	}
	l.warn(r, "DATA_IN_WRITE", first.Pos(), first.End(),
		"check the incoming value with `newData` (e.g. `newData.child('owner').val() === auth.uid`), or add a .validate",
		".write checks only data, the value before the write; the value being written (newData) is never checked")
}

// isPresenceCheck reports whether the data identifier id only tests
// whether data exists: data.exists(), or data.val() compared with null.
// stack holds id's ancestors, innermost last.
func isPresenceCheck(id *expr.Ident, stack []expr.Node) bool {
	if len(stack) < 2 {
		return false
	}
	m, ok := stack[len(stack)-1].(*expr.Member)
	if !ok || m.X != id {
		return false
	}
	call, ok := stack[len(stack)-2].(*expr.Call)
	if !ok || call.Fun != m || len(call.Args) != 0 {
		return false
	}
	switch m.Name {
	case "exists":
		return true
	case "val":
		i := len(stack) - 3
		for i >= 0 {
			if _, paren := stack[i].(*expr.Paren); !paren {
				break
			}
			i--
		}
		if i < 0 {
			return false
		}
		b, ok := stack[i].(*expr.Binary)
		if !ok {
			return false
		}
		switch b.Op {
		case "==", "===", "!=", "!==":
			return isNull(b.X) || isNull(b.Y)
		}
	}
	return false
}

func isNull(n expr.Node) bool {
	lit, ok := expr.Unparen(n).(*expr.Literal)
	return ok && lit.Kind == expr.LitNull
}

// missingIndex implements MISSING_INDEX for the collection location n.
func (l *linter) missingIndex(n *node) {
	w := n.wildcard
	if w == nil {
		return
	}
	type hit struct {
		r        *rule
		pos, end int
	}
	fields := map[string]hit{}
	// W/f: .validate ordering newData.val().
	for f, child := range w.children {
		if child.validate == nil || child.validate.ast == nil {
			continue
		}
		if b := orderedOn(child.validate.ast, func(x expr.Node) bool { return isNewDataVal(x, "") }); b != nil {
			fields[f] = hit{child.validate, b.Pos(), b.End()}
		}
	}
	// W: .validate ordering newData.child('f').val().
	if w.validate != nil && w.validate.ast != nil {
		expr.Walk(w.validate.ast, func(x expr.Node) bool {
			b, ok := x.(*expr.Binary)
			if !ok || !isOrdering(b.Op) {
				return true
			}
			for _, side := range []expr.Node{b.X, b.Y} {
				if f := newDataChildField(side); f != "" {
					if _, done := fields[f]; !done {
						fields[f] = hit{w.validate, b.Pos(), b.End()}
					}
				}
			}
			return true
		})
	}
	names := make([]string, 0, len(fields))
	for f := range fields {
		if !contains(n.indexOn, f) {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for _, f := range names {
		h := fields[f]
		l.warn(h.r, "MISSING_INDEX", h.pos, h.end,
			fmt.Sprintf(`add ".indexOn": [%q] to %s`, f, n.path),
			"entries of %s validate the order of %q but %s has no .indexOn for it: queries ordered by %q would download the whole collection",
			n.path, f, n.path, f)
	}
}

func isOrdering(op string) bool { return op == "<" || op == "<=" || op == ">" || op == ">=" }

// orderedOn returns the first ordering comparison with a side matching.
func orderedOn(root expr.Node, side func(expr.Node) bool) *expr.Binary {
	var found *expr.Binary
	expr.Walk(root, func(x expr.Node) bool {
		if found != nil {
			return false
		}
		if b, ok := x.(*expr.Binary); ok && isOrdering(b.Op) && (side(b.X) || side(b.Y)) {
			found = b
			return false
		}
		return true
	})
	return found
}

// isNewDataVal matches newData.val() (field == "") or
// newData.child('field').val().
func isNewDataVal(x expr.Node, field string) bool {
	c, ok := expr.Unparen(x).(*expr.Call)
	if !ok || len(c.Args) != 0 {
		return false
	}
	m, ok := c.Fun.(*expr.Member)
	if !ok || m.Name != "val" {
		return false
	}
	if field == "" {
		id, ok := expr.Unparen(m.X).(*expr.Ident)
		return ok && id.Name == "newData"
	}
	return newDataChild(m.X) == field
}

// newDataChildField returns f for newData.child('f').val().
func newDataChildField(x expr.Node) string {
	c, ok := expr.Unparen(x).(*expr.Call)
	if !ok || len(c.Args) != 0 {
		return ""
	}
	m, ok := c.Fun.(*expr.Member)
	if !ok || m.Name != "val" {
		return ""
	}
	return newDataChild(m.X)
}

// newDataChild returns f for newData.child('f') with a single-key literal.
func newDataChild(x expr.Node) string {
	c, ok := expr.Unparen(x).(*expr.Call)
	if !ok || len(c.Args) != 1 {
		return ""
	}
	m, ok := c.Fun.(*expr.Member)
	if !ok || m.Name != "child" {
		return ""
	}
	id, ok := expr.Unparen(m.X).(*expr.Ident)
	if !ok || id.Name != "newData" {
		return ""
	}
	lit, ok := expr.Unparen(c.Args[0]).(*expr.Literal)
	if !ok || lit.Kind != expr.LitString || lit.Str == "" || strings.Contains(lit.Str, "/") {
		return ""
	}
	return lit.Str
}
