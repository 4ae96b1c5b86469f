// Package coverage counts, over many decisions of one compiled ruleset of
// the rules language (firestore.rules, storage.rules), the values each
// expression evaluated to, and reports them as the official Firestore
// emulator's rule coverage (GET …:ruleCoverage) and as the Studio's
// true/false/error counts per expression.
//
// Counts come from either path of the evaluator: a Tally is an
// eval.Counter that sees every node evaluation of an untraced decision (the
// cheap path, for allowed requests on a hot path), and Record reads the
// typed traces of a traced one. Both key counts by the ruleset's own AST
// nodes, so they must come from the ruleset the Coverage was made for.
package coverage

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// Coverage is the counts of one ruleset: every expression of every allow
// condition and function body (literals left out), each with the values
// it evaluated to and how often. A skipped (short-circuited) evaluation
// counts as the empty value {}, an error as {"undefined": {"causeMessage":
// …}}; values keep their type whatever their size. It is safe for
// concurrent use.
type Coverage struct {
	tree *ast.Ruleset
	file *source.File

	mu      sync.Mutex
	counts  map[ast.Expr]*valueCounts
	tallies sync.Pool
}

// valueCounts are the values one expression evaluated to, in first-seen
// order.
type valueCounts struct {
	order  []string       // value JSON
	counts []int          // parallel to order
	idx    map[string]int // value JSON -> index in order
	bytes  int            // the size of the distinct values kept
}

// Bounds of what one expression keeps: a long-running server evaluates
// `request` (whose time differs every request) or a document's data to
// new values forever. Beyond them, further distinct values are counted
// under Elided.
const (
	MaxValues     = 100
	MaxValueBytes = 64 << 10
)

// maxPooledBuf bounds the rendering buffer a recycled Tally keeps.
const maxPooledBuf = 1 << 20

// Elided is the value the report counts distinct values under once an
// expression has kept MaxValues of them or MaxValueBytes (the Summary
// counts it as another value).
const Elided = `{"elidedValues":{}}`

// New starts empty counts for the ruleset tree parsed from file.
func New(tree *ast.Ruleset, file *source.File) *Coverage {
	return &Coverage{tree: tree, file: file, counts: map[ast.Expr]*valueCounts{}}
}

// add counts one evaluation (caller holds c.mu).
// A value already kept is found without allocating (the key conversion in
// a map index does not copy).
func (c *Coverage) add(n ast.Expr, v []byte) {
	vc := c.counts[n]
	if vc == nil {
		vc = &valueCounts{idx: map[string]int{}}
		c.counts[n] = vc
	}
	if i, ok := vc.idx[string(v)]; ok {
		vc.counts[i]++
		return
	}
	key := Elided
	if len(vc.order) < MaxValues && vc.bytes+len(v) <= MaxValueBytes {
		key = string(v)
	}
	if i, ok := vc.idx[key]; ok {
		vc.counts[i]++
		return
	}
	vc.idx[key] = len(vc.order)
	vc.order = append(vc.order, key)
	vc.counts = append(vc.counts, 1)
	vc.bytes += len(key)
}

// Record counts every expression of traced rule results (a decision's
// Explanation.Rules).
func (c *Coverage) Record(rules []eval.RuleResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var buf []byte
	for _, r := range rules {
		for _, st := range r.Steps {
			if st.Node != nil {
				buf = appendCoverage(buf[:0], st.Value, st.Skipped, nil)
				c.add(st.Node, buf)
			}
		}
	}
}

// Tally is the counter of one decision: give it to the evaluator
// (eval.Env.Count), then Flush it into its Coverage. It is not safe for
// concurrent use; a Tally is used by one decision at a time.
type Tally struct {
	c     *Coverage
	nodes []ast.Expr
	vals  []value.Value
	// Flush's scratch: every value rendered into buf, ends[i] where the
	// i-th ends, and the renderings of maps by identity.
	buf  []byte
	ends []int
	seen map[uintptr][2]int
}

// Tally returns an empty counter for one decision.
func (c *Coverage) Tally() *Tally {
	if t, ok := c.tallies.Get().(*Tally); ok {
		return t
	}
	return &Tally{c: c}
}

// Count implements eval.Counter.
func (t *Tally) Count(n ast.Expr, v value.Value) {
	t.nodes = append(t.nodes, n)
	t.vals = append(t.vals, v)
}

// Flush adds the decision's evaluations to the Coverage and recycles the
// Tally (it must not be used after). Values are rendered before the lock
// is taken.
func (t *Tally) Flush() {
	if t.seen == nil {
		t.seen = map[uintptr][2]int{}
	}
	for _, v := range t.vals {
		t.buf = appendCoverage(t.buf, v, v == nil, t.seen)
		t.ends = append(t.ends, len(t.buf))
	}
	c := t.c
	c.mu.Lock()
	start := 0
	for i, n := range t.nodes {
		c.add(n, t.buf[start:t.ends[i]])
		start = t.ends[i]
	}
	c.mu.Unlock()
	clear(t.vals)
	clear(t.seen)
	t.nodes, t.vals, t.buf, t.ends = t.nodes[:0], t.vals[:0], t.buf[:0], t.ends[:0]
	if cap(t.buf) > maxPooledBuf {
		t.buf = nil // a rare decision of many large values: do not keep its room
	}
	c.tallies.Put(t)
}

// Expr is one expression's counts by outcome, the Studio's coverage
// overlay: how often it was true, false, an error, another value, or
// skipped.
type Expr struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Text    string `json:"text"`
	True    int    `json:"true"`
	False   int    `json:"false"`
	Error   int    `json:"error"`
	Other   int    `json:"other"`
	Skipped int    `json:"skipped"`
}

// Summary lists every expression evaluated at least once with its counts
// by outcome, in source order.
func (c *Coverage) Summary() []Expr {
	out := []Expr{}
	var walk func(ns []*Node)
	walk = func(ns []*Node) {
		for _, n := range ns {
			if len(n.Values) > 0 {
				x := Expr{Line: n.SourcePosition.Line, Column: n.SourcePosition.Column, Text: n.Source}
				for _, v := range n.Values {
					switch s := string(v.Value); {
					case s == valTrue:
						x.True += v.Count
					case s == valFalse:
						x.False += v.Count
					case s == valSkipped:
						x.Skipped += v.Count
					case strings.HasPrefix(s, `{"undefined"`):
						x.Error += v.Count
					default:
						x.Other += v.Count
					}
				}
				out = append(out, x)
			}
			walk(n.Children)
		}
	}
	walk(c.Report())
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

// Node is one expression of the report.
type Node struct {
	SourcePosition SourcePosition `json:"sourcePosition"`
	Values         []Value        `json:"values,omitempty"`
	Children       []*Node        `json:"children,omitempty"`
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

// Value is a value in the emulator's JSON form and its count.
type Value struct {
	Value json.RawMessage `json:"value"`
	Count int             `json:"count"`
}

// Report builds the coverage tree of the ruleset, roots in source order.
func (c *Coverage) Report() []*Node {
	tree := c.tree
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
	text := c.file.Text
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Node
	for _, e := range roots {
		if n := c.node(text, e); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// node builds the report node of e (nil for a literal); a parenthesized
// expression is reported as what it encloses.
func (c *Coverage) node(text string, e ast.Expr) *Node {
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
	n := &Node{SourcePosition: SourcePosition{Line: sp.Start.Line, Column: sp.Start.Column,
		CurrentOffset: sp.Start.Offset, EndOffset: end}}
	if sp.Start.Offset >= 0 && sp.End.Offset <= len(text) && sp.Start.Offset <= sp.End.Offset {
		n.Source = strings.Join(strings.Fields(text[sp.Start.Offset:sp.End.Offset]), " ")
	}
	if vc := c.counts[e]; vc != nil {
		for _, v := range vc.order {
			n.Values = append(n.Values, Value{Value: json.RawMessage(v), Count: vc.counts[vc.idx[v]]})
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

// The JSON forms of the values the Summary classifies.
const (
	valTrue    = `{"boolValue":true}`
	valFalse   = `{"boolValue":false}`
	valSkipped = `{}`
)

// coverageValue is a step's value in the emulator's JSON form.
func coverageValue(v value.Value, skipped bool) string {
	return string(appendCoverage(nil, v, skipped, nil))
}

// appendCoverage appends coverageValue's form of v to b, or Elided when
// that form is longer than MaxValueBytes. seen caches where in b the
// encodings of maps are, within one flush: a decision evaluates `request`
// and `resource.data` at several nodes, and each is the same map.
func appendCoverage(b []byte, v value.Value, skipped bool, seen map[uintptr][2]int) []byte {
	if skipped {
		return append(b, valSkipped...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, valSkipped...)
	case *value.Error:
		b = append(b, `{"undefined":{"causeMessage":`...)
		return append(appendString(b, x.Message), "}}"...)
	case value.Map:
		if seen != nil && len(x) > 0 {
			p := reflect.ValueOf(x).Pointer()
			if at, ok := seen[p]; ok {
				return append(b, b[at[0]:at[1]]...)
			}
			start := len(b)
			b = appendBounded(b, v)
			seen[p] = [2]int{start, len(b)}
			return b
		}
	}
	return appendBounded(b, v)
}

// appendBounded appends v's form, or Elided when it is longer than
// MaxValueBytes: add would count such a value as Elided anyway (no
// expression keeps it), so it is rendered no further than the bound. A
// decision reading a document with a 100,000-element list neither renders
// the list whole per expression nor leaves the Tally's pooled buffer
// megabytes long.
func appendBounded(b []byte, v value.Value) []byte {
	start := len(b)
	b = appendValue(b, v, start+MaxValueBytes)
	if len(b)-start > MaxValueBytes {
		b = append(b[:start], Elided...)
	}
	return b
}

// appendValue appends a rules value in the emulator's
// (google.firestore.v1-like) JSON value form, as encoding/json would write
// it (object keys sorted). Once b is longer than limit it stops: the form
// is then cut short, and the result longer than limit says so.
func appendValue(b []byte, v value.Value, limit int) []byte {
	if len(b) > limit {
		return b
	}
	switch x := v.(type) {
	case value.Null:
		return append(b, `{"nullValue":null}`...)
	case value.Bool:
		if x {
			return append(b, valTrue...)
		}
		return append(b, valFalse...)
	case value.Int:
		b = append(b, `{"intValue":"`...)
		return append(strconv.AppendInt(b, int64(x), 10), `"}`...)
	case value.Float:
		b = append(b, `{"floatValue":`...)
		f := float64(x)
		switch {
		case math.IsNaN(f):
			b = append(b, `"NaN"`...)
		case math.IsInf(f, 1):
			b = append(b, `"Infinity"`...)
		case math.IsInf(f, -1):
			b = append(b, `"-Infinity"`...)
		default:
			enc, _ := json.Marshal(f)
			b = append(b, enc...)
		}
		return append(b, '}')
	case value.String:
		if len(b)+len(x) > limit {
			return append(b, x[:limit+1-len(b)]...) // cut short
		}
		b = append(b, `{"stringValue":`...)
		return append(appendString(b, string(x)), '}')
	case value.Bytes:
		if n := len(b) + base64.StdEncoding.EncodedLen(len(x)); n > limit {
			return append(b, make([]byte, limit+1-len(b))...) // cut short
		}
		b = append(b, `{"bytesValue":"`...)
		return append(base64.StdEncoding.AppendEncode(b, []byte(x)), `"}`...)
	case value.Timestamp:
		b = append(b, `{"timestampValue":"`...)
		return append(x.UTC().AppendFormat(b, time.RFC3339Nano), `"}`...)
	case value.Duration:
		b = append(b, `{"durationValue":{"nanos":`...)
		b = strconv.AppendInt(b, int64(x.Nanos), 10)
		b = append(b, `,"seconds":"`...)
		return append(strconv.AppendInt(b, x.Seconds, 10), `"}}`...)
	case value.LatLng:
		b = append(b, `{"latlngValue":{"latitude":`...)
		lat, _ := json.Marshal(x.Lat)
		lng, _ := json.Marshal(x.Lng)
		b = append(append(b, lat...), `,"longitude":`...)
		return append(append(b, lng...), "}}"...)
	case value.Path:
		b = append(b, `{"pathValue":{"segments":[`...)
		first := true
		for _, s := range x.Segments {
			if s == "" {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, `{"simple":`...)
			b = append(appendString(b, s), '}')
		}
		return append(b, "]}}"...)
	case value.List:
		return appendValues(append(b, `{"listValue":{"values":[`...), x, limit)
	case value.Set:
		return appendValues(append(b, `{"setValue":{"values":[`...), x, limit)
	case value.Map:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, `{"mapValue":{"fields":{`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, k), ':')
			if b = appendValue(b, x[k], limit); len(b) > limit {
				return b
			}
		}
		return append(b, "}}}"...)
	}
	b = append(b, `{"display":`...)
	return append(appendString(b, value.Show(v)), '}')
}

func appendValues(b []byte, vs []value.Value, limit int) []byte {
	for i, e := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		if b = appendValue(b, e, limit); len(b) > limit {
			return b
		}
	}
	return append(b, "]}}"...)
}

// appendString appends s as encoding/json writes a string (HTML-safe).
func appendString(b []byte, s string) []byte {
	safe := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			safe = false
			break
		}
	}
	if safe {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	enc, _ := json.Marshal(s)
	return append(b, enc...)
}
