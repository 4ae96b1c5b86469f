package firestoreserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	engine "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/rules/ast"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

// Rule coverage, as the official emulator's GET …:ruleCoverage reports it:
// every expression of every allow condition and function body (literals
// left out), as a tree following the source, each with the values it
// evaluated to and how often. A skipped (short-circuited) evaluation counts
// as the empty value {}, an error as {"undefined": {"causeMessage": …}}.
//
// The values come from the rules engine's own explanation of each decision
// (the sub-expression trace of rules/firestore), so no hook in the
// evaluator is needed: the handler wraps the engine's rules gate with a
// recorder. Values are re-read from the trace's printed form; values the
// trace shortens or that have no JSON form here are given as
// {"display": "<printed value>"}.

// coverage counts evaluations of each project's live rules.
type coverage struct {
	s *Server

	startOnce sync.Once
	mu        sync.Mutex
	byProject map[string]*projectCoverage
}

// projectCoverage is one project's counts for the rules that made them.
type projectCoverage struct {
	rules  *liveRules
	counts map[string]*exprCounts // by exprKey
}

// exprCounts are the values one expression evaluated to, in first-seen order.
type exprCounts struct {
	order []string       // value JSON
	n     map[string]int // value JSON -> count
}

// newCoverage prepares rule coverage; it records once started.
func newCoverage(s *Server) *coverage {
	return &coverage{s: s, byProject: map[string]*projectCoverage{}}
}

// start records every decision from now on. Coverage starts when rules are
// loaded through the emulator endpoint (as @firebase/rules-unit-testing and
// firebase-tools do before a test run) or when a report is first asked
// for, because tracing every decision costs several times an untraced one.
func (c *coverage) start() {
	c.startOnce.Do(func() { c.s.Rules().Observe(c.record) })
}

func exprKey(line, col int, src string) string { return fmt.Sprintf("%d:%d:%s", line, col, src) }

// record counts the expressions a decision evaluated; new rules for a
// project start its counts afresh.
func (c *coverage) record(project string, lr *liveRules, d engine.Decision) {
	exp, ok := d.Explanation.(*fsrules.Decision)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.byProject[project]
	if pc == nil || pc.rules != lr {
		pc = &projectCoverage{rules: lr, counts: map[string]*exprCounts{}}
		c.byProject[project] = pc
	}
	for _, r := range exp.Trace {
		for _, x := range r.Expressions {
			k := exprKey(x.Line, x.Column, x.Source)
			ec := pc.counts[k]
			if ec == nil {
				ec = &exprCounts{n: map[string]int{}}
				pc.counts[k] = ec
			}
			v := traceValue(x)
			if ec.n[v] == 0 {
				ec.order = append(ec.order, v)
			}
			ec.n[v]++
		}
	}
}

// covNode is one expression of the report.
type covNode struct {
	SourcePosition sourcePosition `json:"sourcePosition"`
	Values         []covValue     `json:"values,omitempty"`
	Children       []*covNode     `json:"children,omitempty"`
	source         string
}

type covValue struct {
	Value json.RawMessage `json:"value"`
	Count int             `json:"count"`
}

type coverageReport struct {
	Rules  *rulesSource `json:"rules,omitempty"`
	Report []*covNode   `json:"report,omitempty"`
}

// report builds the coverage tree of project's live rules.
func (c *coverage) report(project string) coverageReport {
	lr := c.s.Rules().rules(project)
	if lr == nil {
		return coverageReport{}
	}
	name, text := lr.name, lr.text
	if name == "" {
		name = "firestore.rules"
	}
	out := coverageReport{Rules: &rulesSource{Files: []rulesFile{{Name: name, Content: text}}}}
	file := source.NewFile(name, text)
	rs, _ := parser.Parse(file)
	if rs == nil {
		return out
	}
	var roots []ast.Expr
	addFuncs := func(fs []*ast.Function) {
		for _, f := range fs {
			for _, l := range f.Lets {
				roots = append(roots, l.Value)
			}
			if f.Return != nil {
				roots = append(roots, f.Return)
			}
		}
	}
	addFuncs(rs.Functions)
	var walk func(ms []*ast.Match)
	walk = func(ms []*ast.Match) {
		for _, m := range ms {
			addFuncs(m.Functions)
			for _, a := range m.Allows {
				if a.Cond != nil {
					roots = append(roots, a.Cond)
				}
			}
			walk(m.Matches)
		}
	}
	if rs.Service != nil {
		addFuncs(rs.Service.Functions)
		walk(rs.Service.Matches)
	}
	slices.SortStableFunc(roots, func(a, b ast.Expr) int { return a.Span().Start.Offset - b.Span().Start.Offset })
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := map[string]*exprCounts{}
	if pc := c.byProject[project]; pc != nil && pc.rules == lr {
		counts = pc.counts
	}
	for _, e := range roots {
		if n := node(counts, text, e); n != nil {
			out.Report = append(out.Report, n)
		}
	}
	return out
}

// node builds the report node of e (nil for a literal).
func node(counts map[string]*exprCounts, text string, e ast.Expr) *covNode {
	for {
		p, ok := e.(*ast.Paren)
		if !ok {
			break
		}
		e = p.X
	}
	if e == nil {
		return nil
	}
	if _, lit := e.(*ast.Literal); lit {
		return nil
	}
	sp := e.Span()
	end := reportEnd(e) - 1
	if end < sp.Start.Offset {
		end = sp.Start.Offset
	}
	n := &covNode{SourcePosition: sourcePosition{Line: sp.Start.Line, Column: sp.Start.Column,
		CurrentOffset: sp.Start.Offset, EndOffset: end}, source: traceSource(text, sp)}
	if ec := counts[exprKey(sp.Start.Line, sp.Start.Column, n.source)]; ec != nil {
		for _, v := range ec.order {
			n.Values = append(n.Values, covValue{Value: json.RawMessage(v), Count: ec.n[v]})
		}
	}
	for _, ch := range children(e) {
		if cn := node(counts, text, ch); cn != nil {
			n.Children = append(n.Children, cn)
		}
	}
	return n
}

// reportEnd is where the emulator's report ends an expression: a call
// ends with the function's name (isA() is reported as isA), and an
// operation ends where its last operand does.
func reportEnd(e ast.Expr) int {
	switch x := e.(type) {
	case *ast.Call:
		return reportEnd(x.Fn)
	case *ast.Binary:
		return reportEnd(x.Y)
	case *ast.Unary:
		return reportEnd(x.X)
	case *ast.In:
		return reportEnd(x.Collection)
	case *ast.Ternary:
		return reportEnd(x.Else)
	}
	return e.Span().End.Offset
}

// children are the sub-expressions of e, in source order.
func children(e ast.Expr) []ast.Expr {
	switch x := e.(type) {
	case *ast.Unary:
		return []ast.Expr{x.X}
	case *ast.Binary:
		return []ast.Expr{x.X, x.Y}
	case *ast.In:
		return []ast.Expr{x.X, x.Collection}
	case *ast.Is:
		return []ast.Expr{x.X}
	case *ast.Ternary:
		return []ast.Expr{x.Cond, x.Then, x.Else}
	case *ast.Member:
		return []ast.Expr{x.X}
	case *ast.Index:
		return []ast.Expr{x.X, x.Index}
	case *ast.Slice:
		return []ast.Expr{x.X, x.Lo, x.Hi}
	case *ast.Call:
		var out []ast.Expr
		if m, ok := x.Fn.(*ast.Member); ok {
			out = append(out, m.X) // the receiver of a method call
		}
		return append(out, x.Args...)
	case *ast.List:
		return x.Elems
	case *ast.Map:
		var out []ast.Expr
		for _, en := range x.Entries {
			out = append(out, en.Key, en.Value)
		}
		return out
	}
	return nil
}

// traceSource renders a span's text as the evaluator's trace does
// (whitespace collapsed, long text shortened), so nodes and trace entries
// meet on the same key.
func traceSource(text string, sp source.Span) string {
	if sp.Start.Offset < 0 || sp.End.Offset > len(text) || sp.Start.Offset > sp.End.Offset {
		return ""
	}
	s := strings.Join(strings.Fields(text[sp.Start.Offset:sp.End.Offset]), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// traceValue renders one trace entry's value in the emulator's JSON form.
func traceValue(x sim.Expr) string {
	var v any
	switch {
	case x.Skipped:
		v = map[string]any{}
	case x.Error != "":
		v = map[string]any{"undefined": map[string]any{"causeMessage": x.Error}}
	default:
		p := &shownParser{s: x.Value}
		val, ok := p.value()
		if !ok || p.i != len(p.s) {
			val = map[string]any{"display": x.Value}
		}
		v = val
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// shownParser reads a value printed by rules/value.Show back into the
// emulator's JSON value form.
type shownParser struct {
	s string
	i int
}

func (p *shownParser) peek(prefix string) bool { return strings.HasPrefix(p.s[p.i:], prefix) }

func (p *shownParser) eat(prefix string) bool {
	if p.peek(prefix) {
		p.i += len(prefix)
		return true
	}
	return false
}

func (p *shownParser) value() (any, bool) {
	switch {
	case p.eat("null"):
		return map[string]any{"nullValue": nil}, true
	case p.eat("true"):
		return map[string]any{"boolValue": true}, true
	case p.eat("false"):
		return map[string]any{"boolValue": false}, true
	case p.peek("'"):
		s, ok := p.str()
		return map[string]any{"stringValue": s}, ok
	case p.eat("b'"):
		j := strings.IndexByte(p.s[p.i:], '\'')
		if j < 0 {
			return nil, false
		}
		raw := strings.ReplaceAll(p.s[p.i:p.i+j], `\x`, "")
		p.i += j + 1
		b := make([]byte, 0, len(raw)/2)
		for k := 0; k+1 < len(raw); k += 2 {
			n, err := strconv.ParseUint(raw[k:k+2], 16, 8)
			if err != nil {
				return nil, false
			}
			b = append(b, byte(n))
		}
		return map[string]any{"bytesValue": base64.StdEncoding.EncodeToString(b)}, true
	case p.eat("timestamp("):
		s, ok := p.str()
		return map[string]any{"timestampValue": s}, ok && p.eat(")")
	case p.eat("path("):
		s, ok := p.str()
		var segs []any
		for _, seg := range strings.Split(strings.Trim(s, "/"), "/") {
			if seg != "" {
				segs = append(segs, map[string]any{"simple": seg})
			}
		}
		return map[string]any{"pathValue": map[string]any{"segments": segs}}, ok && p.eat(")")
	case p.eat("set("):
		l, ok := p.list()
		return map[string]any{"setValue": map[string]any{"values": l}}, ok && p.eat(")")
	case p.peek("["):
		l, ok := p.list()
		return map[string]any{"listValue": map[string]any{"values": l}}, ok
	case p.eat("{"):
		fields := map[string]any{}
		for !p.eat("}") {
			if len(fields) > 0 && !p.eat(", ") {
				return nil, false
			}
			k, ok := p.str()
			if !ok || !p.eat(": ") {
				return nil, false
			}
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			fields[k] = v
		}
		return map[string]any{"mapValue": map[string]any{"fields": fields}}, true
	}
	// A number.
	j := p.i
	for j < len(p.s) && strings.IndexByte("+-0123456789.eEInfinityNa", p.s[j]) >= 0 {
		j++
	}
	num := p.s[p.i:j]
	if num == "" {
		return nil, false
	}
	p.i = j
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		return map[string]any{"intValue": strconv.FormatInt(n, 10)}, true
	}
	if _, err := strconv.ParseFloat(num, 64); err == nil || num == "NaN" || strings.HasSuffix(num, "Infinity") {
		return map[string]any{"floatValue": json.RawMessage(floatJSON(num))}, true
	}
	return nil, false
}

func floatJSON(num string) string {
	if f, err := strconv.ParseFloat(num, 64); err == nil && !strings.Contains(num, "Inf") && num != "NaN" {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.Quote(num)
}

func (p *shownParser) list() ([]any, bool) {
	if !p.eat("[") {
		return nil, false
	}
	out := []any{}
	for !p.eat("]") {
		if len(out) > 0 && !p.eat(", ") {
			return nil, false
		}
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// str reads a single-quoted string as value.Show writes it (Go escapes,
// quotes inside unescaped): it ends at the first quote followed by a
// delimiter or the end.
func (p *shownParser) str() (string, bool) {
	if !p.eat("'") {
		return "", false
	}
	for j := p.i; j < len(p.s); j++ {
		if p.s[j] == '\\' {
			j++
			continue
		}
		if p.s[j] != '\'' {
			continue
		}
		if rest := p.s[j+1:]; rest != "" && !strings.HasPrefix(rest, ", ") && !strings.HasPrefix(rest, ": ") &&
			!strings.HasPrefix(rest, "]") && !strings.HasPrefix(rest, "}") && !strings.HasPrefix(rest, ")") {
			continue
		}
		inner := p.s[p.i:j]
		p.i = j + 1
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.ReplaceAll(inner, `"`, `\"`), `'`, `\'`) + `"`)
		if err != nil {
			s, err = strconv.Unquote(`"` + strings.ReplaceAll(inner, `"`, `\"`) + `"`)
		}
		if err != nil {
			return inner, true
		}
		return s, true
	}
	return "", false
}

func (h *httpHandler) ruleCoverage(w http.ResponseWriter, ep emulatorPath) {
	h.cov.start()
	writeJSONValue(w, h.cov.report(ep.project))
}

// ruleCoverageHTML renders the report for a person: the rules source, and
// under it every evaluated expression with its values.
func (h *httpHandler) ruleCoverageHTML(w http.ResponseWriter, ep emulatorPath) {
	h.cov.start()
	rep := h.cov.report(ep.project)
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><meta charset=\"utf-8\"><title>Firestore rule coverage</title>" +
		"<style>body{font-family:sans-serif}pre{background:#f6f6f6;padding:1em}td{padding:2px 8px;vertical-align:top}.none{color:#999}code{white-space:pre-wrap}</style></head><body>")
	if rep.Rules == nil {
		b.WriteString("<p>No rules are loaded.</p></body></html>")
		writeHTML(w, b.String())
		return
	}
	f := rep.Rules.Files[0]
	fmt.Fprintf(&b, "<h1>Rule coverage: %s</h1><pre>", html.EscapeString(f.Name))
	for i, line := range strings.Split(f.Content, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, html.EscapeString(line))
	}
	b.WriteString("</pre><table><tr><th>where</th><th>expression</th><th>values</th></tr>")
	var rows func(n *covNode, depth int)
	rows = func(n *covNode, depth int) {
		cls := ""
		if len(n.Values) == 0 {
			cls = ` class="none"`
		}
		var vals []string
		for _, v := range n.Values {
			vals = append(vals, fmt.Sprintf("%s × %d", string(v.Value), v.Count))
		}
		if len(vals) == 0 {
			vals = []string{"never evaluated"}
		}
		fmt.Fprintf(&b, "<tr%s><td>L%d:%d</td><td><code>%s%s</code></td><td><code>%s</code></td></tr>", cls, n.SourcePosition.Line, n.SourcePosition.Column,
			strings.Repeat("&nbsp;&nbsp;", depth), html.EscapeString(n.source), html.EscapeString(strings.Join(vals, ", ")))
		for _, c := range n.Children {
			rows(c, depth+1)
		}
	}
	for _, n := range rep.Report {
		rows(n, 0)
	}
	b.WriteString("</table></body></html>")
	writeHTML(w, b.String())
}

func writeHTML(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(s))
}
