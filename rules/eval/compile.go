package eval

import (
	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/value"
)

// compiled is an expression turned into a Go closure when the program is
// prepared: evaluating it is a call per node instead of a type switch, a
// map lookup for its literal or call plan, and an operator switch on a
// string. Closures evaluate exactly as Run.eval does for a run that is
// neither traced nor counted (nothing observes the nodes one by one):
// the same values and errors, the same expression budget and clock
// checks. Traced and counted runs walk the tree (eval), which records
// each node.
type compiled func(r *Run, fr *frame) value.Value

// compiledFunc is a user function's body compiled: its lets, in
// declaration order, and its return expression.
type compiledFunc struct {
	lets []compiled
	ret  compiled
}

// compiledCall is a call site's compiled receiver (a method call), its
// arguments and the callee (a user function), read by callWith.
type compiledCall struct {
	recv compiled
	args []compiled
	user *compiledFunc
}

// compiler compiles the expressions of one program.
type compiler struct {
	p     *Program
	funcs map[*ast.Function]*compiledFunc
}

// compile prepares the compiled form of every allow condition and user
// function of p.
func (p *Program) compile() {
	c := &compiler{p: p, funcs: map[*ast.Function]*compiledFunc{}}
	var fns []*ast.Function
	fns = append(fns, p.Ruleset.Functions...)
	var collect func(b *Block)
	collect = func(b *Block) {
		if b.Match != nil {
			fns = append(fns, b.Match.Functions...)
		} else if p.Ruleset.Service != nil {
			fns = append(fns, p.Ruleset.Service.Functions...)
		}
		for _, k := range b.Children {
			collect(k)
		}
	}
	collect(p.Root)
	// Every function gets its (empty) compiled form first, so calls can
	// refer to a callee not compiled yet, recursion included.
	for _, f := range fns {
		if c.funcs[f] == nil {
			c.funcs[f] = &compiledFunc{lets: make([]compiled, len(f.Lets))}
		}
	}
	for f, cf := range c.funcs {
		for i, l := range f.Lets {
			cf.lets[i] = c.expr(l.Value, f)
		}
		if f.Return != nil {
			cf.ret = c.expr(f.Return, f)
		}
	}
	p.conds = map[ast.Expr]compiled{}
	var conds func(b *Block)
	conds = func(b *Block) {
		if b.Match != nil {
			for i, a := range b.Match.Allows {
				if a.Cond != nil {
					cc := c.expr(a.Cond, nil)
					b.allows[i].compiled = cc
					p.conds[a.Cond] = cc
				}
			}
		}
		for _, k := range b.Children {
			conds(k)
		}
	}
	conds(p.Root)
}

// enter counts one expression as eval does before evaluating a node; a
// non-nil result is the error of a budget that ran out. The common case
// (budget left, no clock reading due) is inlined.
func (r *Run) enter(off int) value.Value {
	if !r.exhausted && r.count < r.max && (r.count+1)&clockEvery != 0 {
		r.count++
		return nil
	}
	return r.enterSlow(off)
}

func (r *Run) enterSlow(off int) value.Value {
	if r.exhausted {
		return &value.Error{Kind: value.Exhausted, Message: r.exhaustedMessage(), Offset: off}
	}
	r.count++
	if r.count > r.max {
		r.exhausted = true
		return &value.Error{Kind: value.Exhausted, Message: r.exhaustedMessage(), Offset: off}
	}
	if r.count&clockEvery == 0 && r.clockOut() {
		return &value.Error{Kind: value.Exhausted, Message: r.exhaustedMessage(), Offset: off}
	}
	return nil
}

// walk evaluates e by walking the tree, for the nodes without a compiled
// form of their own; its depth is unobservable in an untraced run.
func walk(e ast.Expr) compiled {
	return func(r *Run, fr *frame) value.Value { return r.eval(e, fr, 0) }
}

// expr compiles e, an expression of function fn's body (nil for an allow
// condition).
func (c *compiler) expr(e ast.Expr, fn *ast.Function) compiled {
	for p, ok := e.(*ast.Paren); ok; p, ok = e.(*ast.Paren) {
		e = p.X
	}
	off := e.Span().Start.Offset
	switch e := e.(type) {
	case *ast.Literal:
		v := literalInPlace(e)
		if v == nil {
			return walk(e)
		}
		return func(r *Run, fr *frame) value.Value {
			if x := r.enter(off); x != nil {
				return x
			}
			return v
		}
	case *ast.Ident:
		return c.ident(e, fn, off)
	case *ast.Unary:
		x := c.expr(e.X, fn)
		not, opOff := e.Op == "!", e.OpPos.Offset
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			v := x(r, fr)
			if value.IsError(v) {
				return v
			}
			if not {
				v = value.Not(v)
			} else {
				v = value.Negate(v)
			}
			return withOffset(v, opOff)
		}
	case *ast.Binary:
		return c.binary(e, fn, off)
	case *ast.In:
		x, coll := c.expr(e.X, fn), c.expr(e.Collection, fn)
		opOff := e.OpSpan.Start.Offset
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			cv := coll(r, fr)
			if value.IsError(cv) {
				return cv
			}
			if err := inReceiverError(cv, opOff, off); err != nil {
				return err
			}
			xv := x(r, fr)
			if value.IsError(xv) {
				return xv
			}
			return r.inResult(xv, cv, opOff)
		}
	case *ast.Is:
		x, typ := c.expr(e.X, fn), e.Type
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			v := x(r, fr)
			if value.IsError(v) {
				return v
			}
			if isConstraint(v) {
				return withOffset(r.prove("is", v, value.String(typ)), off)
			}
			return value.Bool(value.Is(v, typ))
		}
	case *ast.Ternary:
		cond, then, els := c.expr(e.Cond, fn), c.expr(e.Then, fn), c.expr(e.Else, fn)
		condNode := e.Cond
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			cv := cond(r, fr)
			if value.IsError(cv) {
				return cv
			}
			b, ok := cv.(value.Bool)
			if !ok {
				return withPos(value.ErrType(cv.Type(), "bool"), condNode)
			}
			if b {
				return then(r, fr)
			}
			return els(r, fr)
		}
	case *ast.Member:
		return c.member(e, fn, off)
	case *ast.Index:
		x, idx := c.expr(e.X, fn), c.expr(e.Index, fn)
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			xv := x(r, fr)
			if value.IsError(xv) {
				return xv
			}
			if err := indexReceiverError(xv, off); err != nil {
				return err
			}
			i := idx(r, fr)
			if value.IsError(i) {
				return i
			}
			return r.indexResult(xv, i, off)
		}
	case *ast.Call:
		return c.call(e, fn, off)
	case *ast.List:
		return c.list(e, fn, off)
	case *ast.Path:
		cs := make([]compiled, len(e.Segments))
		for i, s := range e.Segments {
			if s.Interp != nil {
				cs[i] = c.expr(s.Interp, fn)
			}
		}
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			return r.path(e, cs, fr, 0)
		}
	}
	// Slices, map literals and malformed nodes: rare in rules, walked.
	return walk(e)
}

// ident compiles a name: a param or let of fn is resolved to its slot
// once (the last declaration of a name wins, as frame.localThunk finds);
// any other name is looked up among the path variables and globals.
func (c *compiler) ident(e *ast.Ident, fn *ast.Function, off int) compiled {
	name := e.Name
	slot := -1
	if fn != nil {
		np := len(fn.Params)
		for i := len(fn.Lets) - 1; i >= 0 && slot < 0; i-- {
			if fn.Lets[i].Name.Name == name {
				slot = np + i
			}
		}
		for i := np - 1; i >= 0 && slot < 0; i-- {
			if fn.Params[i].Name == name {
				slot = i
			}
		}
	}
	if slot >= 0 {
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			return r.force(&fr.local[slot])
		}
	}
	return func(r *Run, fr *frame) value.Value {
		if v := r.enter(off); v != nil {
			return v
		}
		if v, ok := lookupBinding(fr.bv, name); ok {
			return v
		}
		if v, ok := r.global(name); ok {
			return v
		}
		return withOffset(value.ErrNull(), off)
	}
}

// binary compiles a binary operator, the operator chosen once.
func (c *compiler) binary(e *ast.Binary, fn *ast.Function, off int) compiled {
	x, y := c.expr(e.X, fn), c.expr(e.Y, fn)
	xn, yn := e.X, e.Y
	op, opOff := e.Op, e.OpSpan.Start.Offset
	switch op {
	case "&&", "||":
		decisive := value.Bool(op == "||")
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			l := logicOperand(x(r, fr), xn)
			if b, ok := l.(value.Bool); ok && b == decisive {
				return l
			}
			rv := logicOperand(y(r, fr), yn)
			if b, ok := rv.(value.Bool); ok && b == decisive {
				return rv
			}
			if value.IsError(l) {
				return l
			}
			if value.IsError(rv) {
				return rv
			}
			return !decisive
		}
	}
	var apply func(x, y value.Value) value.Value
	switch op {
	case "==":
		apply = func(x, y value.Value) value.Value {
			if b, ok := sameScalar(x, y); ok {
				return b
			}
			return equalOp(x, y)
		}
	case "!=":
		apply = func(x, y value.Value) value.Value {
			if b, ok := sameScalar(x, y); ok {
				return !b
			}
			v := equalOp(x, y)
			if b, ok := v.(value.Bool); ok {
				return !b
			}
			return v
		}
	case "<", "<=", ">", ">=":
		lt, eq, gt := op[0] == '<', len(op) == 2, op[0] == '>'
		apply = func(x, y value.Value) value.Value {
			// Two ints compare without the general comparison (which
			// gives the same answer).
			if a, ok := x.(value.Int); ok {
				if b, ok := y.(value.Int); ok {
					return value.Bool(lt && a < b || gt && a > b || eq && a == b)
				}
			}
			return value.Compare(x, y, op)
		}
	default:
		apply = func(x, y value.Value) value.Value { return value.Arith(op, x, y) }
	}
	provable := false
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		provable = true
	}
	return func(r *Run, fr *frame) value.Value {
		if v := r.enter(off); v != nil {
			return v
		}
		xv := x(r, fr)
		yv := y(r, fr)
		if value.IsError(xv) {
			return xv
		}
		if value.IsError(yv) {
			return yv
		}
		if isConstraint(xv) || isConstraint(yv) {
			if provable {
				return withOffset(r.prove(op, xv, yv), opOff)
			}
			return withOffset(r.unprovable(xv, yv), opOff)
		}
		return withOffset(apply(xv, yv), opOff)
	}
}

// member compiles a chain of field reads such as request.auth.uid. Like
// memberChain, it counts the nodes below the outermost at once when that
// neither exhausts the budget nor reaches a clock check, and otherwise
// evaluates node by node.
func (c *compiler) member(e *ast.Member, fn *ast.Function, off int) compiled {
	var chain []*ast.Member
	var x ast.Expr = e
	for {
		m, ok := x.(*ast.Member)
		if !ok {
			break
		}
		chain = append(chain, m)
		x = m.X
		for p, ok := x.(*ast.Paren); ok; p, ok = x.(*ast.Paren) {
			x = p.X
		}
	}
	inner := c.expr(x, fn)
	if len(chain) == 1 {
		return func(r *Run, fr *frame) value.Value {
			if v := r.enter(off); v != nil {
				return v
			}
			return memberOf(inner(r, fr), e)
		}
	}
	// stepwise is the chain evaluated node by node: each node below the
	// outermost is its own closure.
	stepwise := inner
	for i := len(chain) - 1; i >= 1; i-- {
		m, below, mOff := chain[i], stepwise, chain[i].Span().Start.Offset
		stepwise = func(r *Run, fr *frame) value.Value {
			if v := r.enter(mOff); v != nil {
				return v
			}
			return memberOf(below(r, fr), m)
		}
	}
	below := len(chain) - 1
	names := make([]string, len(chain))
	for i, m := range chain {
		names[i] = m.Name
	}
	return func(r *Run, fr *frame) value.Value {
		if v := r.enter(off); v != nil {
			return v
		}
		if n := int(r.count) + below; n > int(r.max) || n/(clockEvery+1) != int(r.count)/(clockEvery+1) || r.exhausted {
			return memberOf(stepwise(r, fr), e)
		}
		r.count += int32(below)
		v := inner(r, fr)
		for i := below; i >= 0; i-- {
			// A present field of a map is what memberOf returns for it.
			if m, ok := v.(value.Map); ok {
				if f, ok := m[names[i]]; ok {
					v = f
					continue
				}
			}
			v = memberOf(v, chain[i])
		}
		return v
	}
}

// call compiles a call: its plan, receiver, arguments and user callee
// are bound once; callWith evaluates it as the tree walk does.
func (c *compiler) call(e *ast.Call, fn *ast.Function, off int) compiled {
	plan := c.p.calls[e]
	cc := &compiledCall{args: make([]compiled, len(e.Args))}
	for i, a := range e.Args {
		cc.args[i] = c.expr(a, fn)
	}
	if m, ok := e.Fn.(*ast.Member); ok {
		cc.recv = c.expr(m.X, fn)
	}
	if plan != nil && plan.user != nil {
		cc.user = c.funcs[plan.user]
		if cc.user == nil {
			return walk(e)
		}
	}
	if m, ok := e.Fn.(*ast.Member); ok && plan != nil {
		if _, maybeNamespace := m.X.(*ast.Ident); !maybeNamespace {
			if k := c.keysHas(e, m, plan, cc, fn, off); k != nil {
				return k
			}
			return c.method(e, m, plan, cc, off)
		}
	}
	return func(r *Run, fr *frame) value.Value {
		if v := r.enter(off); v != nil {
			return v
		}
		return r.callWith(e, plan, cc, fr, 0)
	}
}

// method compiles a method call whose receiver is not a bare name (so
// never a namespaced function): callWith's method branch with the
// receiver's implementations bound once.
func (c *compiler) method(e *ast.Call, m *ast.Member, plan *callPlan, cc *compiledCall, off int) compiled {
	methods, name, nameOff := plan.methods, m.Name, m.NameSp.Start.Offset
	recvC, args := cc.recv, e.Args
	return func(r *Run, fr *frame) value.Value {
		if v := r.enter(off); v != nil {
			return v
		}
		return r.methodOn(recvC(r, fr), methods, name, args, cc.args, fr, off, nameOff)
	}
}

// methodOn is a compiled method call's work once its receiver is
// evaluated: callWith's method branch with the implementations bound.
func (r *Run) methodOn(recv value.Value, methods *methodSet, name string, args []ast.Expr, argc []compiled, fr *frame, off, nameOff int) value.Value {
	if value.IsError(recv) {
		return recv
	}
	if isConstraint(recv) {
		return withOffset(r.unprovable(recv), off)
	}
	var f MethodFunc
	if methods != nil {
		f = methods[recv.Type()]
	}
	if f == nil {
		if _, isNull := recv.(value.Null); isNull {
			return withOffset(value.ErrNull(), off)
		}
		return withOffset(value.ErrFunctionNotFound(name), off)
	}
	vals, mark, err := r.args(args, argc, fr, 0)
	if err != nil {
		return err
	}
	// Released without a defer: a panic abandons the run (Decide
	// recovers it), so its argument stack is never read again.
	v := f(recv, vals)
	r.release(mark)
	return withOffset(v, nameOff)
}

// keysHas compiles m.keys().hasOnly(list) and m.keys().hasAll(list)
// without building the sorted key list when the answer needs only
// membership: every step the two calls take (counting, errors and their
// positions, the argument's evaluation) is the same, and any case the
// shortcut does not cover builds the list and calls the method. It
// returns nil for any other call.
func (c *compiler) keysHas(e *ast.Call, m *ast.Member, plan *callPlan, cc *compiledCall, fn *ast.Function, off int) compiled {
	if (m.Name != "hasOnly" && m.Name != "hasAll") || len(e.Args) != 1 || plan.methods == nil || plan.user != nil {
		return nil
	}
	has := plan.methods[value.TList]
	x := m.X
	for p, ok := x.(*ast.Paren); ok; p, ok = x.(*ast.Paren) {
		x = p.X
	}
	inner, ok := x.(*ast.Call)
	if !ok || len(inner.Args) != 0 || has == nil {
		return nil
	}
	im, ok := inner.Fn.(*ast.Member)
	iplan := c.p.calls[inner]
	if !ok || im.Name != "keys" || iplan == nil || iplan.user != nil || iplan.methods == nil {
		return nil
	}
	keysOf := iplan.methods
	icc := &compiledCall{args: []compiled{}, recv: c.expr(im.X, fn)}
	id, isIdent := im.X.(*ast.Ident)
	hasOnly, name, nameOff := m.Name == "hasOnly", m.Name, m.NameSp.Start.Offset
	innerOff, innerNameOff, args := inner.Span().Start.Offset, im.NameSp.Start.Offset, e.Args
	return func(r *Run, fr *frame) value.Value {
		if v := r.enter(off); v != nil {
			return v
		}
		if v := r.enter(innerOff); v != nil {
			return v
		}
		if isIdent {
			if _, bound := r.lookupVar(fr, id.Name); !bound {
				// Perhaps a namespace: the inner call as callWith makes it.
				keys := r.callWith(inner, iplan, icc, fr, 0)
				return r.methodOn(keys, plan.methods, name, args, cc.args, fr, off, nameOff)
			}
		}
		recv := icc.recv(r, fr)
		if value.IsError(recv) {
			return recv
		}
		if isConstraint(recv) {
			return withOffset(r.unprovable(recv), innerOff)
		}
		if keysOf[recv.Type()] == nil {
			if _, isNull := recv.(value.Null); isNull {
				return withOffset(value.ErrNull(), innerOff)
			}
			return withOffset(value.ErrFunctionNotFound("keys"), innerOff)
		}
		vals, mark, err := r.args(args, cc.args, fr, 0)
		if err != nil {
			return err
		}
		mp, _ := value.AsMap(recv)
		v, ok := keysMembership(mp, vals[0], hasOnly)
		if !ok {
			v = has(withOffset(mapKeys(recv, nil), innerNameOff), vals)
		}
		r.release(mark)
		return withOffset(v, nameOff)
	}
}

// keysScan bounds the argument keysMembership scans for each key.
const keysScan = 16

// keysMembership is list.hasOnly(other) (hasOnly) or list.hasAll(other)
// for the list of m's keys, answered from the map: a list's elements
// compare strictly, so a key equals exactly the strings of other. ok is
// false when other is not a list or set, or is too long to scan (the
// caller builds the list then).
func keysMembership(m value.Map, other value.Value, hasOnly bool) (value.Value, bool) {
	elems, ok := collection(other)
	if !ok {
		return nil, false
	}
	if !hasOnly {
		for _, x := range elems {
			s, isString := x.(value.String)
			if !isString {
				return value.Bool(false), true
			}
			if _, in := m[string(s)]; !in {
				return value.Bool(false), true
			}
		}
		return value.Bool(true), true
	}
	if len(elems) > keysScan {
		return nil, false
	}
	// Every key is among the strings of elems exactly when as many
	// distinct strings of elems are keys as there are keys: lookups
	// instead of an iteration of the map.
	n := 0
	for i, x := range elems {
		s, isString := x.(value.String)
		if !isString {
			continue
		}
		if _, in := m[string(s)]; !in {
			continue
		}
		seen := false
		for _, y := range elems[:i] {
			if t, isString := y.(value.String); isString && t == s {
				seen = true
				break
			}
		}
		if !seen {
			n++
		}
	}
	return value.Bool(n == len(m)), true
}

// list compiles a list literal: a constant one is its folded value
// (counted as its elements would be) unless that would exhaust the
// budget, as Run.folded decides.
func (c *compiler) list(e *ast.List, fn *ast.Function, off int) compiled {
	elems := make([]compiled, len(e.Elems))
	for i, x := range e.Elems {
		elems[i] = c.expr(x, fn)
	}
	k, isConst := c.p.consts[e]
	return func(r *Run, fr *frame) value.Value {
		if v := r.enter(off); v != nil {
			return v
		}
		if isConst && int(r.count)+k.n-1 <= int(r.max) {
			r.count += int32(k.n - 1)
			return k.v
		}
		out, list := value.MakeList(len(elems))
		for i, x := range elems {
			v := x(r, fr)
			if value.IsError(v) {
				return v
			}
			out[i] = v
		}
		return list
	}
}

// sameScalar is x == y for two strings, two ints or two bools, which
// equalOp answers the same way through value.Equal; ok is false for any
// other pair.
func sameScalar(x, y value.Value) (value.Bool, bool) {
	switch a := x.(type) {
	case value.String:
		if b, ok := y.(value.String); ok {
			return a == b, true
		}
	case value.Int:
		if b, ok := y.(value.Int); ok {
			return a == b, true
		}
	case value.Bool:
		if b, ok := y.(value.Bool); ok {
			return a == b, true
		}
	}
	return false, false
}
