package rtdb

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/pyric/pyric/rules/rtdb/expr"
	"github.com/pyric/pyric/rules/sim"
)

// env is what one rule sees: its location and the request's bindings.
type env struct {
	auth  *lazyAuth // its value is nil or map[string]any{uid, provider, token}
	root  any       // the database before the request
	post  *lazyPost // its value is the database after the write; nil for reads
	now   float64
	path  []string          // the rule's location, a concrete data path
	vars  map[string]string // $name → key, with the $
	read  bool              // newData is undefined in .read rules
	query map[string]any    // the `query` of a read (Query.value)
	// reads, when non-nil, collects the data locations the rules observe
	// (Decision.DataReads).
	reads *[][]string
}

// evaluator evaluates one rule's condition, recording a trace on request.
type evaluator struct {
	env   *env
	r     *rule
	trace bool
	exprs []sim.Expr
	depth int
	tally *tally // counts each evaluation for Request.Coverage; nil when not counting
}

// evalError is a runtime error of a rule expression. It denies the rule.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errf(format string, args ...any) error {
	return &evalError{msg: fmt.Sprintf(format, args...)}
}

// run evaluates the rule and reports whether it grants, with the error that
// denied it when one did.
func (e *evaluator) run() (bool, error) {
	if e.r.ast == nil {
		return false, errors.New("the rule did not compile")
	}
	v, err := e.eval(e.r.ast)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, errf("%s evaluated to %s, not a boolean", e.r.kind, formatValue(v))
	}
	return b, nil
}

func (e *evaluator) eval(n expr.Node) (any, error) {
	if e.tally == nil {
		return e.evalTraced(n)
	}
	v, err := e.evalTraced(n)
	switch n.(type) {
	case *expr.Paren, *expr.Literal, *expr.Regex:
	default:
		e.tally.add(e.r, n, outcomeOf(v, err))
	}
	return v, err
}

func (e *evaluator) evalTraced(n expr.Node) (any, error) {
	if !e.trace {
		return e.evalNode(n)
	}
	switch n.(type) {
	case *expr.Paren, *expr.Literal, *expr.Regex:
		return e.evalNode(n)
	}
	i := len(e.exprs)
	e.exprs = append(e.exprs, e.traceEntry(n))
	e.depth++
	v, err := e.evalNode(n)
	e.depth--
	if err != nil {
		e.exprs[i].Error = err.Error()
	} else {
		e.exprs[i].Value = formatValue(v)
	}
	return v, err
}

func (e *evaluator) traceEntry(n expr.Node) sim.Expr {
	start := e.r.span(n.Pos(), n.Pos()).Start
	src := ""
	if n.Pos() >= 0 && n.End() <= len(e.r.text) && n.Pos() <= n.End() {
		src = e.r.text[n.Pos():n.End()]
	}
	return sim.Expr{Source: src, Line: start.Line, Column: start.Column, Depth: e.depth}
}

// skip records a sub-expression short-circuiting left unevaluated.
func (e *evaluator) skip(n expr.Node) {
	if e.tally != nil {
		x := n
		for p, ok := x.(*expr.Paren); ok; p, ok = x.(*expr.Paren) {
			x = p.X
		}
		e.tally.add(e.r, x, outcomeSkipped)
	}
	if e.trace {
		x := e.traceEntry(n)
		x.Skipped = true
		e.exprs = append(e.exprs, x)
	}
}

func (e *evaluator) evalNode(n expr.Node) (any, error) {
	switch n := n.(type) {
	case *expr.Literal:
		switch n.Kind {
		case expr.LitBool:
			return n.Bool, nil
		case expr.LitNumber:
			return n.Num, nil
		case expr.LitString:
			return n.Str, nil
		}
		return nil, nil
	case *expr.Paren:
		return e.eval(n.X)
	case *expr.Ident:
		return e.ident(n)
	case *expr.Regex:
		if re := e.r.regexes[n]; re != nil {
			return re, nil
		}
		return nil, errf("invalid regular expression")
	case *expr.Array:
		out := make([]any, 0, len(n.Elems))
		for _, el := range n.Elems {
			v, err := e.eval(el)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *expr.Unary:
		v, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		if n.Op == "!" {
			b, ok := v.(bool)
			if !ok {
				return nil, errf("! only operates on booleans, got %s", typeName(v))
			}
			return !b, nil
		}
		f, ok := v.(float64)
		if !ok {
			return nil, errf("unary - only operates on numbers, got %s", typeName(v))
		}
		return -f, nil
	case *expr.Binary:
		return e.binary(n)
	case *expr.Cond:
		c, err := e.eval(n.Cond)
		if err != nil {
			return nil, err
		}
		b, ok := c.(bool)
		if !ok {
			return nil, errf("the condition of ?: must be a boolean, got %s", typeName(c))
		}
		if b {
			v, err := e.eval(n.Then)
			e.skip(n.Else)
			return v, err
		}
		e.skip(n.Then)
		return e.eval(n.Else)
	case *expr.Member:
		x, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		return property(x, n.Name)
	case *expr.Index:
		x, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		i, err := e.eval(n.Index)
		if err != nil {
			return nil, err
		}
		return index(x, i)
	case *expr.Call:
		return e.call(n)
	}
	return nil, errf("unsupported expression")
}

func (e *evaluator) ident(n *expr.Ident) (any, error) {
	switch n.Name {
	case "auth":
		return e.env.auth.value(), nil
	case "now":
		return e.env.now, nil
	case "query":
		if !e.env.read {
			return nil, errf("query is only defined in .read rules")
		}
		return e.env.query, nil
	case "root":
		return &snapshot{root: e.env.root, val: e.env.root}, nil
	case "data":
		return &snapshot{root: e.env.root, path: e.env.path, val: lookup(e.env.root, e.env.path)}, nil
	case "newData":
		if e.env.read {
			return nil, errf("newData is not defined in .read rules")
		}
		post := e.env.post.value()
		return &snapshot{root: post, path: e.env.path, val: lookup(post, e.env.path)}, nil
	}
	if v, ok := e.env.vars[n.Name]; ok {
		return v, nil
	}
	return nil, errf("unknown identifier %s", n.Name)
}

func (e *evaluator) binary(n *expr.Binary) (any, error) {
	x, err := e.eval(n.X)
	if err != nil {
		return nil, err
	}
	if n.Op == "&&" || n.Op == "||" {
		b, ok := x.(bool)
		if !ok {
			return nil, errf("%s only operates on booleans, got %s", n.Op, typeName(x))
		}
		if (n.Op == "&&") != b {
			e.skip(n.Y)
			return b, nil
		}
		y, err := e.eval(n.Y)
		if err != nil {
			return nil, err
		}
		b, ok = y.(bool)
		if !ok {
			return nil, errf("%s only operates on booleans, got %s", n.Op, typeName(y))
		}
		return b, nil
	}
	y, err := e.eval(n.Y)
	if err != nil {
		return nil, err
	}
	return binaryOp(n.Op, x, y)
}

// binaryOp applies an arithmetic, comparison or equality operator.
func binaryOp(op string, x, y any) (any, error) {
	switch op {
	case "===":
		return strictEqual(x, y), nil
	case "!==":
		return !strictEqual(x, y), nil
	case "==":
		return looseEqual(x, y), nil
	case "!=":
		return !looseEqual(x, y), nil
	case "+":
		if xs, ok := x.(string); ok {
			if ys, ok := jsString(y); ok {
				return xs + ys, nil
			}
		} else if ys, ok := y.(string); ok {
			if xs, ok := jsString(x); ok {
				return xs + ys, nil
			}
		} else if xf, ok := x.(float64); ok {
			if yf, ok := y.(float64); ok {
				return xf + yf, nil
			}
		}
		return nil, errf("+ only operates on numbers and strings, got %s and %s", typeName(x), typeName(y))
	case "<", "<=", ">", ">=":
		var c int
		switch xv := x.(type) {
		case float64:
			yv, ok := y.(float64)
			if !ok {
				return nil, errf("%s cannot compare a number with %s", op, typeName(y))
			}
			if math.IsNaN(xv) || math.IsNaN(yv) {
				return false, nil
			}
			switch {
			case xv < yv:
				c = -1
			case xv > yv:
				c = 1
			}
		case string:
			yv, ok := y.(string)
			if !ok {
				return nil, errf("%s cannot compare a string with %s", op, typeName(y))
			}
			c = compareStrings(xv, yv)
		default:
			return nil, errf("%s only operates on numbers and strings, got %s", op, typeName(x))
		}
		switch op {
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		}
		return c >= 0, nil
	}
	xf, ok1 := x.(float64)
	yf, ok2 := y.(float64)
	if !ok1 || !ok2 {
		return nil, errf("%s only operates on numbers, got %s and %s", op, typeName(x), typeName(y))
	}
	switch op {
	case "-":
		return xf - yf, nil
	case "*":
		return xf * yf, nil
	case "/":
		return xf / yf, nil
	case "%":
		return math.Mod(xf, yf), nil
	}
	return nil, errf("unknown operator %s", op)
}

// property reads x.name: a key of an object, or a string's length.
func property(x any, name string) (any, error) {
	switch x := x.(type) {
	case map[string]any:
		return norm(x[name]), nil
	case string:
		if name == "length" {
			return jsLength(x), nil
		}
		return nil, errf("No such method/property '%s' on a string", name)
	case nil:
		return nil, errf("cannot read property '%s' of null", name)
	}
	return nil, errf("No such method/property '%s' on a %s", name, typeName(x))
}

// index reads x[i], which RTDB allows only on objects such as auth.token.
func index(x, i any) (any, error) {
	switch x := x.(type) {
	case map[string]any:
		k, ok := i.(string)
		if !ok {
			if f, isNum := i.(float64); isNum {
				k, ok = jsNumberString(f), true
			}
		}
		if !ok {
			return nil, errf("an object key must be a string, got %s", typeName(i))
		}
		return norm(x[k]), nil
	case []any:
		f, ok := i.(float64)
		if !ok || f != math.Trunc(f) || f < 0 || f >= float64(len(x)) {
			return nil, nil
		}
		return norm(x[int(f)]), nil
	case nil:
		return nil, errf("cannot read property %s of null", formatValue(i))
	}
	return nil, errf("No such method/property: [] cannot index a %s", typeName(x))
}

func (e *evaluator) call(n *expr.Call) (any, error) {
	m, ok := expr.Unparen(n.Fun).(*expr.Member)
	if !ok {
		return nil, errf("not a function")
	}
	recv, err := e.eval(m.X)
	if err != nil {
		return nil, err
	}
	args := make([]any, len(n.Args))
	for i, a := range n.Args {
		if args[i], err = e.eval(a); err != nil {
			return nil, err
		}
	}
	switch r := recv.(type) {
	case *snapshot:
		e.observe(r, m.Name, args)
		return snapshotMethod(r, m.Name, args)
	case string:
		return stringMethod(r, m.Name, args)
	case nil:
		return nil, errf("cannot call %s() on null", m.Name)
	}
	return nil, errf("No such method/property '%s' on a %s", m.Name, typeName(recv))
}

// observe records the data location a snapshot method reads, when the
// request collects them: the snapshot's own location, or the child that
// hasChild names. child() and parent() only move and read nothing.
func (e *evaluator) observe(s *snapshot, name string, args []any) {
	if e.env.reads == nil {
		return
	}
	switch name {
	case "child", "parent":
		return
	case "hasChild":
		if len(args) == 1 {
			if keys, err := childPath(name, args[0]); err == nil {
				*e.env.reads = append(*e.env.reads, s.child(keys).path)
				return
			}
		}
	}
	*e.env.reads = append(*e.env.reads, append([]string(nil), s.path...))
}

func snapshotMethod(s *snapshot, name string, args []any) (any, error) {
	switch name {
	case "val":
		v, ok := leafValue(s.val)
		if !ok {
			return nil, errf("the data at %s is not a JSON value", joinPath(s.path))
		}
		return v, nil
	case "child", "hasChild":
		if len(args) != 1 {
			return nil, errf("%s() takes 1 argument", name)
		}
		keys, err := childPath(name, args[0])
		if err != nil {
			return nil, err
		}
		c := s.child(keys)
		if name == "hasChild" {
			return exists(c.val), nil
		}
		return c, nil
	case "parent":
		if len(s.path) == 0 {
			return nil, nil
		}
		p := s.path[:len(s.path)-1]
		return &snapshot{root: s.root, path: p, val: lookup(s.root, p)}, nil
	case "hasChildren":
		if len(args) == 0 {
			return hasChildren(s.val), nil
		}
		list, ok := args[0].([]any)
		if !ok {
			return nil, errf("hasChildren() takes an array of child names")
		}
		for _, el := range list {
			keys, err := childPath(name, el)
			if err != nil {
				return nil, err
			}
			if !exists(lookup(s.val, keys)) {
				return false, nil
			}
		}
		return true, nil
	case "exists":
		return exists(s.val), nil
	case "getPriority":
		return priority(s.val), nil
	case "isNumber", "isString", "isBoolean":
		v, _ := leafValue(s.val)
		switch v.(type) {
		case float64:
			return name == "isNumber", nil
		case string:
			return name == "isString", nil
		case bool:
			return name == "isBoolean", nil
		}
		return false, nil
	}
	return nil, errf("No such method/property '%s' on a snapshot", name)
}

// childPath splits the argument of child()/hasChild() into keys.
func childPath(method string, arg any) ([]string, error) {
	var p string
	switch a := arg.(type) {
	case string:
		p = a
	case float64:
		p = jsNumberString(a)
	default:
		return nil, errf("%s() takes a path string, got %s", method, typeName(arg))
	}
	var keys []string
	for _, k := range strings.Split(p, "/") {
		if k == "" {
			continue
		}
		if err := checkKey(k); err != nil {
			return nil, errf("%s(%s): invalid path: key %s contains a character RTDB keys cannot contain", method, quote(p), quote(k))
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func stringMethod(s, name string, args []any) (any, error) {
	str := func(i int) (string, error) {
		if i >= len(args) {
			return "", errf("%s() is missing an argument", name)
		}
		a, ok := args[i].(string)
		if !ok {
			return "", errf("%s() takes a string argument, got %s", name, typeName(args[i]))
		}
		return a, nil
	}
	switch name {
	case "contains", "beginsWith", "endsWith":
		a, err := str(0)
		if err != nil {
			return nil, err
		}
		switch name {
		case "contains":
			return strings.Contains(s, a), nil
		case "beginsWith":
			return strings.HasPrefix(s, a), nil
		}
		return strings.HasSuffix(s, a), nil
	case "matches":
		if len(args) != 1 {
			return nil, errf("matches() takes 1 argument")
		}
		re, ok := args[0].(*regexp.Regexp)
		if !ok {
			return nil, errf("matches() takes a regular expression, got %s", typeName(args[0]))
		}
		return re.MatchString(s), nil
	case "replace":
		// RTDB replaces every occurrence, unlike JavaScript's first-only
		// String.prototype.replace.
		a, err := str(0)
		if err != nil {
			return nil, err
		}
		b, err := str(1)
		if err != nil {
			return nil, err
		}
		return strings.ReplaceAll(s, a, b), nil
	case "toLowerCase":
		return strings.ToLower(s), nil
	case "toUpperCase":
		return strings.ToUpper(s), nil
	case "length":
		return nil, errf("length is a property, not a method")
	}
	return nil, errf("No such method/property '%s' on a string", name)
}
