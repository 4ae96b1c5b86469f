package rtdb

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/rtdb/expr"
	"github.com/pyric/pyric/rules/rtdb/jsonc"
	"github.com/pyric/pyric/rules/source"
)

// Ruleset is a compiled database.rules.json. It is immutable and safe for
// concurrent use.
type Ruleset struct {
	file *source.File
	root *node
}

// File returns the source the ruleset was compiled from.
func (rs *Ruleset) File() *source.File { return rs.file }

// node is one location of the rules tree.
type node struct {
	key      string // "" at the root, else a literal key or "$name"
	path     string // e.g. /users/$uid
	parent   *node
	children map[string]*node // literal children
	wildcard *node            // the $name child, if any
	read     *rule
	write    *rule
	validate *rule
	indexOn  []string
	// indexOnSpan is the span of the .indexOn value, for lint.
	indexOnSpan source.Span
	keySpan     source.Span
}

// rule is one compiled .read, .write or .validate expression.
type rule struct {
	kind    string   // ".read", ".write" or ".validate"
	ops     []string // {kind}: every decision's sim.Rule.Operations shares it (read only)
	node    *node
	text    string    // the condition as written
	ast     expr.Node // nil when it did not compile
	val     *jsonc.Value
	file    *source.File
	regexes map[*expr.Regex]*regexp.Regexp
	start   source.Pos // where the condition starts in the file
}

// constant reports whether the condition is a boolean literal
// (`.write: true`, `".read": "false"`), and its value.
func (r *rule) constant() (value, ok bool) {
	lit, ok := r.ast.(*expr.Literal)
	if !ok || lit.Kind != expr.LitBool {
		return false, false
	}
	return lit.Bool, true
}

// offset maps an offset in the condition text to a byte offset of the file.
func (r *rule) offset(i int) int {
	if r.val.Kind == jsonc.String {
		return r.val.Offset(i)
	}
	return r.val.Start + i
}

// span maps a range of the condition text to a file span. The offset of
// the byte after the range is the exclusive end, even when the last
// character was written as an escape.
func (r *rule) span(start, end int) source.Span {
	s, e := r.offset(start), r.offset(end)
	if e < s {
		e = s
	}
	return r.file.Span(s, e)
}

// compiler turns the JSON tree into nodes and rules, collecting diagnostics.
type compiler struct {
	file  *source.File
	diags source.Diagnostics
	rules []*rule
	nodes []*node
	// syntax is set when the file is not JSON at all.
	syntax bool
}

// Compile parses and checks a database.rules.json. It returns the ruleset
// and no error-severity diagnostics, or nil and every problem found.
func Compile(file *source.File) (*Ruleset, source.Diagnostics) {
	c := compileFile(file)
	c.diags.Sort()
	if c.diags.HasErrors() {
		return nil, c.diags
	}
	return &Ruleset{file: file, root: c.nodes[0]}, c.diags
}

// compileFile compiles as much of the file as it can.
func compileFile(file *source.File) *compiler {
	c := &compiler{file: file}
	top, err := jsonc.Parse(file.Text)
	if err != nil {
		c.syntax = true
		c.errorAt("INVALID_RULES_JSON", err.Start, err.End, "", "invalid JSON: %s", err.Msg)
		return c
	}
	if top.Kind != jsonc.Object {
		c.errorAt("INVALID_RULES_JSON", top.Start, top.End, `wrap the rules: {"rules": {...}}`,
			"database.rules.json must be a JSON object with a \"rules\" key, not a %s", top.Kind)
		return c
	}
	var rules *jsonc.Value
	seen := map[string]bool{}
	for _, m := range top.Members {
		if seen[m.Key] {
			c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, "remove one of them", "duplicate key %q", m.Key)
			continue
		}
		seen[m.Key] = true
		if m.Key == "rules" {
			rules = m.Value
			continue
		}
		c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, `put every rule under "rules"`,
			"unknown top-level key %q: database.rules.json holds only \"rules\"", m.Key)
	}
	if rules == nil {
		c.errorAt("INVALID_RULES_JSON", top.Start, top.Start+1, `add {"rules": {".read": false, ".write": false}}`,
			"database.rules.json has no \"rules\" key")
		return c
	}
	if rules.Kind != jsonc.Object {
		c.errorAt("INVALID_RULES_JSON", rules.Start, rules.End, "", "\"rules\" must be an object, not a %s", rules.Kind)
		return c
	}
	root := &node{path: "/"}
	c.nodes = append(c.nodes, root)
	c.walk(root, rules, nil)
	return c
}

func (c *compiler) errorAt(code string, start, end int, fix, format string, args ...any) {
	c.diags = append(c.diags, source.Diagnostic{
		Severity: source.Error, Code: code, Message: fmt.Sprintf(format, args...),
		Span: c.file.Span(start, end), Fix: fix,
	})
}

var ruleKeys = []string{".read", ".write", ".validate", ".indexOn"}

// walk fills n from the JSON object obj. vars are the wildcards of the
// enclosing nodes, with their $.
func (c *compiler) walk(n *node, obj *jsonc.Value, vars []string) {
	seen := map[string]bool{}
	if n.key != "" && strings.HasPrefix(n.key, "$") {
		vars = append(append([]string(nil), vars...), n.key)
	}
	// Rules first so that children see this node's wildcard in scope.
	for _, m := range obj.Members {
		if seen[m.Key] {
			c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, "remove one of them", "duplicate key %q", m.Key)
			continue
		}
		seen[m.Key] = true
		if !strings.HasPrefix(m.Key, ".") {
			continue
		}
		switch m.Key {
		case ".read", ".write", ".validate":
			r := c.rule(n, m, vars)
			switch m.Key {
			case ".read":
				n.read = r
			case ".write":
				n.write = r
			default:
				n.validate = r
			}
		case ".indexOn":
			c.indexOn(n, m)
		default:
			fix := "valid keys: .read, .write, .validate, .indexOn"
			if s := suggest(m.Key, ruleKeys); s != "" {
				fix = fmt.Sprintf("did you mean %q?", s)
			}
			c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, fix, "unknown rule key %q", m.Key)
		}
	}
	seen = map[string]bool{}
	for _, m := range obj.Members {
		if seen[m.Key] || strings.HasPrefix(m.Key, ".") {
			continue
		}
		seen[m.Key] = true
		if m.Value.Kind != jsonc.Object {
			c.errorAt("INVALID_RULES_JSON", m.Value.Start, m.Value.End, fmt.Sprintf(`write {".read": ...} under %q`, m.Key),
				"the rules for child %q must be an object, not a %s", m.Key, m.Value.Kind)
			continue
		}
		child := &node{key: m.Key, parent: n, keySpan: c.file.Span(m.KeyStart, m.KeyEnd)}
		child.path = strings.TrimSuffix(n.path, "/") + "/" + m.Key
		if strings.HasPrefix(m.Key, "$") {
			name := m.Key[1:]
			if !validVarName(name) {
				c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, "use letters, digits and _ after the $",
					"invalid wildcard %q: a $variable name must be an identifier", m.Key)
				continue
			}
			if contains(vars, m.Key) || n.key == m.Key {
				c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, "rename one of the wildcards",
					"wildcard %s is already declared by an enclosing location", m.Key)
				continue
			}
			if n.wildcard != nil {
				c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, "merge the two wildcard locations into one",
					"a location can have only one $wildcard child, and %s already declares %s", n.path, n.wildcard.key)
				continue
			}
			n.wildcard = child
		} else {
			if err := checkKey(m.Key); err != nil {
				c.errorAt("INVALID_RULES_JSON", m.KeyStart, m.KeyEnd, "",
					"invalid child key %q: keys cannot contain . $ # [ ] / or control characters", m.Key)
				continue
			}
			if n.children == nil {
				n.children = map[string]*node{}
			}
			n.children[m.Key] = child
		}
		c.nodes = append(c.nodes, child)
		c.walk(child, m.Value, vars)
	}
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		letter := ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
		if !letter && !(i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

func (c *compiler) indexOn(n *node, m jsonc.Member) {
	v := m.Value
	n.indexOnSpan = c.file.Span(v.Start, v.End)
	switch v.Kind {
	case jsonc.String:
		n.indexOn = []string{v.Str}
	case jsonc.Array:
		for _, e := range v.Elems {
			if e.Kind != jsonc.String {
				c.errorAt("INVALID_RULES_JSON", e.Start, e.End, "", ".indexOn lists child names, so each entry must be a string, not a %s", e.Kind)
				continue
			}
			n.indexOn = append(n.indexOn, e.Str)
		}
	default:
		c.errorAt("INVALID_RULES_JSON", v.Start, v.End, `e.g. ".indexOn": ["timestamp"]`,
			".indexOn must be a string or a list of strings, not a %s", v.Kind)
	}
}

// rule compiles a .read/.write/.validate member.
func (c *compiler) rule(n *node, m jsonc.Member, vars []string) *rule {
	v := m.Value
	r := &rule{kind: m.Key, ops: []string{m.Key}, node: n, val: v, file: c.file}
	switch v.Kind {
	case jsonc.Bool:
		r.text = "false"
		if v.Bool {
			r.text = "true"
		}
		r.ast = &expr.Literal{Kind: expr.LitBool, Bool: v.Bool, ValueEnd: len(r.text), Raw: r.text}
		r.start = c.file.Pos(v.Start)
	case jsonc.String:
		r.text = v.Str
		r.start = c.file.Pos(r.offset(leadingSpace(v.Str)))
		ast, err := expr.Parse(v.Str)
		if err != nil {
			c.diags = append(c.diags, source.Diagnostic{
				Severity: source.Error, Code: "PARSE_ERROR", Message: fmt.Sprintf("%s: %s", m.Key, err.Msg),
				Span: r.span(err.Pos, err.EndPos),
			})
			c.rules = append(c.rules, r)
			return r
		}
		r.ast = ast
		before := len(c.diags)
		k := &checker{c: c, r: r, vars: vars}
		k.checkRule(ast)
		if len(c.diags) > before {
			r.ast = nil
		}
	default:
		c.errorAt("INVALID_RULES_JSON", v.Start, v.End, fmt.Sprintf(`e.g. "%s": "auth != null"`, m.Key),
			"%s must be a string expression or a boolean, not a %s", m.Key, v.Kind)
		return nil
	}
	c.rules = append(c.rules, r)
	return r
}

func leadingSpace(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t\r\n"))
}

// Paths lists the rule locations of the ruleset, e.g. /users/$uid, in
// sorted order.
func (rs *Ruleset) Paths() []string {
	var out []string
	var walk func(n *node)
	walk = func(n *node) {
		out = append(out, n.path)
		for _, ch := range n.children {
			walk(ch)
		}
		if n.wildcard != nil {
			walk(n.wildcard)
		}
	}
	walk(rs.root)
	sort.Strings(out)
	return out
}
