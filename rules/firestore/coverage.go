package firestore

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/value"
)

// Coverage counts, over many decisions of one compiled ruleset, the values
// each expression evaluated to, and reports them as the official
// emulator's rule coverage (GET …:ruleCoverage): every expression of every
// allow condition and function body (literals left out) as a tree
// following the source, each with its values and how often. A skipped
// (short-circuited) evaluation counts as the empty value {}, an error as
// {"undefined": {"causeMessage": …}}; values keep their type whatever
// their size.
//
// It reads the decisions' typed traces (Decision.Rules[i].Steps, keyed by
// the ruleset's own AST nodes), so decisions must come from Decide (traced)
// on the same Ruleset. It is safe for concurrent use.
type Coverage struct {
	rs     *Ruleset
	mu     sync.Mutex
	counts map[ast.Expr]*valueCounts
}

// valueCounts are the values one expression evaluated to, in first-seen
// order.
type valueCounts struct {
	order []string       // value JSON
	n     map[string]int // value JSON -> count
}

// NewCoverage starts empty counts for rs.
func NewCoverage(rs *Ruleset) *Coverage {
	return &Coverage{rs: rs, counts: map[ast.Expr]*valueCounts{}}
}

// Ruleset returns the rules the counts are for.
func (c *Coverage) Ruleset() *Ruleset { return c.rs }

// Record counts every expression a decision evaluated.
func (c *Coverage) Record(d *Decision) {
	if d == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range d.Rules {
		for _, st := range r.Steps {
			if st.Node == nil {
				continue
			}
			vc := c.counts[st.Node]
			if vc == nil {
				vc = &valueCounts{n: map[string]int{}}
				c.counts[st.Node] = vc
			}
			v := coverageValue(st.Value, st.Skipped)
			if vc.n[v] == 0 {
				vc.order = append(vc.order, v)
			}
			vc.n[v]++
		}
	}
}

// CoverageNode is one expression of the report.
type CoverageNode struct {
	SourcePosition SourcePosition  `json:"sourcePosition"`
	Values         []CoverageValue `json:"values,omitempty"`
	Children       []*CoverageNode `json:"children,omitempty"`
	// Source is the expression's text (whitespace collapsed), for people.
	Source string `json:"-"`
}

// SourcePosition is where an expression is, in the emulator's terms: the
// end offset is inclusive, and a call ends with its function's name.
type SourcePosition struct {
	Line          int `json:"line"`
	Column        int `json:"column"`
	CurrentOffset int `json:"currentOffset"`
	EndOffset     int `json:"endOffset"`
}

// CoverageValue is a value in the emulator's JSON form and its count.
type CoverageValue struct {
	Value json.RawMessage `json:"value"`
	Count int             `json:"count"`
}

// Report builds the coverage tree of the ruleset, roots in source order.
func (c *Coverage) Report() []*CoverageNode {
	tree := c.rs.AST()
	if tree == nil {
		return nil
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
	addFuncs(tree.Functions)
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
	if tree.Service != nil {
		addFuncs(tree.Service.Functions)
		walk(tree.Service.Matches)
	}
	slices.SortStableFunc(roots, func(a, b ast.Expr) int { return a.Span().Start.Offset - b.Span().Start.Offset })
	text := c.rs.File().Text
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*CoverageNode
	for _, e := range roots {
		if n := c.node(text, e); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// node builds the report node of e (nil for a literal); a parenthesized
// expression is reported as what it encloses.
func (c *Coverage) node(text string, e ast.Expr) *CoverageNode {
	for {
		p, ok := e.(*ast.Paren)
		if !ok {
			break
		}
		if vc := c.counts[p]; vc != nil && c.counts[p.X] == nil {
			c.counts[p.X] = vc
		}
		e = p.X
	}
	if ast.IsNil(e) {
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
	n := &CoverageNode{SourcePosition: SourcePosition{Line: sp.Start.Line, Column: sp.Start.Column,
		CurrentOffset: sp.Start.Offset, EndOffset: end}}
	if sp.Start.Offset >= 0 && sp.End.Offset <= len(text) && sp.Start.Offset <= sp.End.Offset {
		n.Source = strings.Join(strings.Fields(text[sp.Start.Offset:sp.End.Offset]), " ")
	}
	if vc := c.counts[e]; vc != nil {
		for _, v := range vc.order {
			n.Values = append(n.Values, CoverageValue{Value: json.RawMessage(v), Count: vc.n[v]})
		}
	}
	for _, ch := range reportChildren(e) {
		if cn := c.node(text, ch); cn != nil {
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

// reportChildren are the sub-expressions the emulator's report nests
// under e, in source order. It differs from the syntax tree for calls: a
// method call's children are its receiver and arguments, not the member
// expression naming the method.
func reportChildren(e ast.Expr) []ast.Expr {
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
			out = append(out, m.X)
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

// coverageValue is a step's value in the emulator's JSON form.
func coverageValue(v value.Value, skipped bool) string {
	var out any
	switch {
	case skipped || v == nil:
		out = map[string]any{}
	default:
		if e, ok := v.(*value.Error); ok {
			out = map[string]any{"undefined": map[string]any{"causeMessage": e.Message}}
		} else {
			out = valueJSON(v)
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// valueJSON is a rules value in the emulator's (google.firestore.v1-like)
// JSON value form.
func valueJSON(v value.Value) any {
	switch x := v.(type) {
	case value.Null:
		return map[string]any{"nullValue": nil}
	case value.Bool:
		return map[string]any{"boolValue": bool(x)}
	case value.Int:
		return map[string]any{"intValue": strconv.FormatInt(int64(x), 10)}
	case value.Float:
		f := float64(x)
		switch {
		case math.IsNaN(f):
			return map[string]any{"floatValue": "NaN"}
		case math.IsInf(f, 1):
			return map[string]any{"floatValue": "Infinity"}
		case math.IsInf(f, -1):
			return map[string]any{"floatValue": "-Infinity"}
		}
		return map[string]any{"floatValue": f}
	case value.String:
		return map[string]any{"stringValue": string(x)}
	case value.Bytes:
		return map[string]any{"bytesValue": base64.StdEncoding.EncodeToString([]byte(x))}
	case value.Timestamp:
		return map[string]any{"timestampValue": x.UTC().Format(time.RFC3339Nano)}
	case value.Duration:
		return map[string]any{"durationValue": map[string]any{"seconds": strconv.FormatInt(x.Seconds, 10), "nanos": x.Nanos}}
	case value.LatLng:
		return map[string]any{"latlngValue": map[string]any{"latitude": x.Lat, "longitude": x.Lng}}
	case value.Path:
		segs := []any{}
		for _, s := range x.Segments {
			if s != "" {
				segs = append(segs, map[string]any{"simple": s})
			}
		}
		return map[string]any{"pathValue": map[string]any{"segments": segs}}
	case value.List:
		vals := make([]any, len(x))
		for i, e := range x {
			vals[i] = valueJSON(e)
		}
		return map[string]any{"listValue": map[string]any{"values": vals}}
	case value.Set:
		vals := make([]any, len(x))
		for i, e := range x {
			vals[i] = valueJSON(e)
		}
		return map[string]any{"setValue": map[string]any{"values": vals}}
	case value.Map:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fields := make(map[string]any, len(x))
		for _, k := range keys {
			fields[k] = valueJSON(x[k])
		}
		return map[string]any{"mapValue": map[string]any{"fields": fields}}
	}
	return map[string]any{"display": value.Show(v)}
}
