package eval

import (
	"math"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/value"
)

// DefaultMaxExpressions is production's documented cap on expressions
// evaluated for one request.
const DefaultMaxExpressions = 1000

// DefaultMaxDuration bounds the wall-clock time one request's rules may
// take. Production bounds evaluation cost and denies a request that
// exceeds it; pyric bounds time too, so no request (a 100,000-element
// hasAll, a deep chain of calls over large lists) can stall others.
const DefaultMaxDuration = time.Second

// MaxCallDepth is production's cap on nested user-function calls.
const MaxCallDepth = 20

// clockEvery+1 is how many expressions pass between readings of the
// clock for the time limit; one expression is bounded by the budget of
// its operands, so a coarse interval still bounds the time.
const clockEvery = 127

// Builtin is a function a service provides, such as get() or exists().
// Arguments arrive evaluated; errors among them are passed through unless
// the builtin handles them.
type Builtin func(args []value.Value) value.Value

// Env is what a service supplies for one request.
type Env struct {
	Program *Program
	// Globals are the top-level bindings such as request and resource. A
	// name that is absent is unbound: reading it is "Null value error.",
	// which is how production's Rules Test API treats an absent resource.
	Globals map[string]value.Value
	// Vars are more top-level bindings, looked up before Globals: the
	// allocation-free form for a service that binds a fixed few names.
	Vars []Var
	// Funcs are service builtins callable by name: get, exists, getAfter…
	Funcs map[string]Builtin
	// Service resolves service builtins without a per-request map of
	// closures; it is consulted before Funcs.
	Service ServiceFuncs
	// Namespaces are service namespaces beyond the standard library, such
	// as Storage's firestore.get.
	Namespaces map[string]map[string]Builtin
	// MaxExpressions bounds expressions evaluated over the whole request;
	// 0 means DefaultMaxExpressions.
	MaxExpressions int
	// MaxDuration bounds the time spent evaluating the whole request; 0
	// means DefaultMaxDuration. The clock is read every few expressions.
	MaxDuration time.Duration
	// Trace records a sub-expression trace for every evaluated rule. It is
	// read when the Run starts.
	Trace bool
	// Count, when set, sees every node evaluation, traced or not: rule
	// coverage counts through it without paying for a trace. Like Trace,
	// it is read when the Run starts.
	Count Counter
	// Prove decides an operation involving a value.Constraint (a field of
	// any document a list query could return): op is ==, !=, <, <=, >, >=,
	// "in" (x in y) or "is" (y is the type name as a String). Nil means
	// constraints can't be decided: every such operation is an error.
	Prove func(op string, x, y value.Value) value.Value
}

// Counter sees each evaluation of a node: v is its value (a *value.Error
// for an error), nil when short-circuiting left the node unevaluated.
// Parenthesized expressions are seen as what they enclose.
type Counter interface {
	Count(n ast.Expr, v value.Value)
}

// Var is one top-level binding of Env.Vars.
type Var struct {
	Name  string
	Value value.Value
}

// ServiceFuncs are a service's builtins for one request.
type ServiceFuncs interface {
	// HasFunc reports whether name is a builtin (checked before its
	// arguments are evaluated).
	HasFunc(name string) bool
	// CallFunc calls it with evaluated arguments.
	CallFunc(name string, args []value.Value) value.Value
}

// Run evaluates the rules of one request; it carries the expression budget
// shared by every rule evaluated for that request.
type Run struct {
	// A Run is allocated for every decision: it stays within 256 bytes
	// (TestRunSize), half of what it was; what only some runs need
	// (function frames, the trace buffer) is in aux, allocated on first
	// use.
	env       *Env
	trace     bool // Env.Trace
	counting  bool // Env.Count != nil
	exhausted bool
	// timedOut says the time limit (not the expression count) ran out.
	timedOut bool
	cur      int32 // index of the step being evaluated, -1 at the root
	max      int32
	count    int32
	steps    []Step // the current condition's trace when Env.Trace
	// argStack holds call arguments while their call runs (see args).
	argStack []value.Value
	aux      *runAux
	// match is the Matched a public Condition call evaluates in.
	match Matched
	// global is the last global found in Env.Globals (see global).
	global1 binding
	// root is the frame of the condition being evaluated (nothing refers
	// to it once the condition is decided); frames are handed out by
	// newFrame for function calls, a few per allocation.
	root frame
}

// runAux is the part of a run's state that only some runs need, with
// the first frames, thunks and call arguments in the same allocation: a
// typical decision calls a few functions with a few params and lets. The
// clock is read (and aux allocated) only by runs past clockEvery
// expressions.
type runAux struct {
	started int64  // when the clock was first read (clockNow), 0 before
	free    []Step // unused step buffer after the last condition's
	traced  int    // steps recorded over the whole request
	// thunks are handed out by newThunks for functions' params and lets,
	// frames by newFrame.
	thunks     []thunk
	frames     []frame
	thunksMade int32
	framesMade int32 // size of the last chunk of frames
	argArr     [4]value.Value
	firstF     [2]frame
	firstT     [3]thunk
}

// more returns the run's aux, allocating it on first use.
func (r *Run) more() *runAux {
	if r.aux == nil {
		a := &runAux{}
		a.frames, a.framesMade = a.firstF[:], int32(len(a.firstF))
		a.thunks, a.thunksMade = a.firstT[:], int32(len(a.firstT))
		r.aux = a
	}
	return r.aux
}

// newFrame returns a frame that lives as long as the run (thunks of lets
// and arguments keep pointers to their frames). It is not zeroed when the
// run is reused: the caller sets every field.
func (r *Run) newFrame() *frame {
	a := r.more()
	if len(a.frames) == 0 {
		a.framesMade = min(2*max(a.framesMade, 1), 16)
		a.frames = make([]frame, a.framesMade)
	}
	f := &a.frames[0]
	a.frames = a.frames[1:]
	return f
}

// clockBase is the origin of runAux.started: readings are monotonic.
var clockBase = time.Now()

// clockNow is the time since clockBase, at least 1 (0 means unread).
func clockNow() int64 { return int64(time.Since(clockBase)) | 1 }

// NewRun starts evaluating one request.
func NewRun(env *Env) *Run {
	max := env.MaxExpressions
	if max <= 0 {
		max = DefaultMaxExpressions
	}
	max = min(max, math.MaxInt32-1)
	// The clock is first read at the first time check (after clockEvery+1
	// expressions), so short evaluations never pay for it.
	r, _ := runs.Get().(*Run)
	if r == nil {
		return &Run{env: env, trace: env.Trace, counting: env.Count != nil, max: int32(max), cur: -1}
	}
	// A released run is zero but for its aux (see Release).
	r.env, r.trace, r.counting, r.max, r.cur = env, env.Trace, env.Count != nil, int32(max), -1
	return r
}

// runs are released runs (Release) for NewRun to reuse, with their aux.
var runs sync.Pool

// Release hands the run back for a later NewRun to reuse, with its
// frames, thunks and argument buffer: a service calls it once it has
// read the run's results, so a decision does not allocate them anew.
// Neither the run nor its Steps buffer may be used afterwards by the
// caller; the values and steps it returned stay valid (a traced run's
// step buffer is not reused).
func (r *Run) Release() {
	if a := r.aux; a != nil {
		if a.framesMade != int32(len(a.firstF)) || a.thunksMade != int32(len(a.firstT)) {
			// Chunks beyond the first were allocated: drop the aux
			// rather than keep a run's largest use alive.
			r.aux = nil
		} else {
			// Frames and thunks are not cleared: callUser sets every
			// field of the ones it takes (what they still point to is
			// kept only until reuse, or until the pool is emptied).
			a.started, a.free, a.traced = 0, nil, 0
			a.frames, a.thunks = a.firstF[:], a.firstT[:]
		}
	}
	aux := r.aux
	*r = Run{aux: aux}
	runs.Put(r)
}

// maxDur is the run's time limit.
func (r *Run) maxDur() time.Duration {
	if d := r.env.MaxDuration; d > 0 {
		return d
	}
	return DefaultMaxDuration
}

// Limit names the budget that ran out, "" while none has.
func (r *Run) Limit() string {
	switch {
	case r.timedOut:
		return "time"
	case r.exhausted:
		return "expressions"
	}
	return ""
}

// Count is the number of expressions evaluated so far.
func (r *Run) Count() int { return int(r.count) }

// Exhausted reports whether the expression budget ran out.
func (r *Run) Exhausted() bool { return r.exhausted }

// traceValueLimit bounds how much of each traced value is rendered.
const traceValueLimit = 120

// maxTrace bounds the trace of one rule so explanations stay readable.
const maxTrace = 400

// Condition evaluates an allow condition of a matched block. A nil
// condition (`allow read;`) is true. The rendered trace is nil unless
// Env.Trace; Steps returns its typed form.
func (r *Run) Condition(m Matched, cond ast.Expr) (value.Value, []sim.Expr) {
	r.match = m
	v := r.condition(&r.match, cond, r.env.Program.conds[cond])
	return v, renderSteps(r.env.Program.Text, r.steps, traceValueLimit)
}

// ConditionSteps is Condition with the trace in typed form only (nil
// unless Env.Trace); nothing is rendered.
func (r *Run) ConditionSteps(m Matched, cond ast.Expr) (value.Value, []Step) {
	r.match = m
	v := r.condition(&r.match, cond, r.env.Program.conds[cond])
	return v, r.steps
}

// condition evaluates cond, by its compiled form c when the run is
// neither traced nor counted and c is not nil.
func (r *Run) condition(m *Matched, cond ast.Expr, c compiled) value.Value {
	r.steps, r.cur = nil, -1
	if cond == nil {
		return value.Bool(true)
	}
	if r.trace {
		// The conditions of one request share one step buffer: each
		// takes the free space the previous one left.
		a := r.more()
		if cap(a.free) < 16 {
			a.free = make([]Step, 0, max(16, int(r.env.Program.stepHint.Load())))
		}
		r.steps = a.free[:0]
		defer func() {
			n := len(r.steps)
			a.free = r.steps[n:]
			r.steps = r.steps[:n:n]
			a.traced += n
			if h := &r.env.Program.stepHint; int64(a.traced) > h.Load() && a.traced <= 4*maxTrace {
				h.Store(int64(a.traced))
			}
		}()
	}
	r.root = frame{block: m.Block, m: m, bv: m.vars}
	var v value.Value
	if c != nil && !r.trace && !r.counting {
		v = c(r, &r.root)
	} else {
		v = r.eval(cond, &r.root, 0)
	}
	if _, ok := v.(value.Bool); !ok && !value.IsError(v) {
		v = withPos(value.ErrType(v.Type(), "bool"), cond)
		if len(r.steps) > 0 {
			r.steps[0].Value = v
		}
	}
	return v
}

// Expr evaluates a standalone expression in the scope of a matched block,
// for tools (simulate one expression, REPLs).
func (r *Run) Expr(m Matched, e ast.Expr) value.Value {
	return r.eval(e, &frame{block: m.Block, m: &m, bv: m.vars}, 0)
}

// frame is the scope of one evaluation: a rule condition or a function body.
type frame struct {
	block *Block   // lexical scope for function lookup and path variables
	m     *Matched // the matched chain the request is evaluated on
	bv    []binding
	// fn is the function whose body this is (nil for a rule condition);
	// local holds its params then its lets, in declaration order.
	fn     *ast.Function
	local  []thunk
	caller *frame // the frame the call was made from
	calls  int    // user-function nesting depth
}

// thunk is a lazily evaluated, memoised binding: production evaluates lets
// and arguments only when used (an unused `let x = 1/0` does not deny).
type thunk struct {
	expr  ast.Expr
	c     compiled // expr compiled, in a compiled evaluation
	fr    *frame
	v     value.Value
	depth int32
	state uint8 // 0 unforced, 1 being forced, 2 done
}

func (r *Run) force(t *thunk) value.Value {
	switch t.state {
	case 1:
		return value.Errorf("a binding refers to itself")
	case 0:
		t.state = 1
		var v value.Value
		if t.c != nil {
			v = t.c(r, t.fr)
		} else {
			v = r.eval(t.expr, t.fr, int(t.depth))
		}
		t.v, t.state = v, 2
	}
	return t.v
}

// localThunk finds a param or let of the frame's function: a later
// declaration of a name shadows an earlier one.
func (fr *frame) localThunk(name string) *thunk {
	f := fr.fn
	if f == nil {
		return nil
	}
	np := len(f.Params)
	for i := len(f.Lets) - 1; i >= 0; i-- {
		if f.Lets[i].Name.Name == name {
			return &fr.local[np+i]
		}
	}
	for i := np - 1; i >= 0; i-- {
		if f.Params[i].Name == name {
			return &fr.local[i]
		}
	}
	return nil
}

// stack lists the function names on the call stack, outermost first.
func (fr *frame) stack() []string {
	var out []string
	for f := fr; f != nil; f = f.caller {
		if f.fn != nil {
			out = append(out, f.fn.Name)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// onStack reports whether a function named name is being evaluated.
func (fr *frame) onStack(name string) bool {
	for f := fr; f != nil; f = f.caller {
		if f.fn != nil && f.fn.Name == name {
			return true
		}
	}
	return false
}

func (r *Run) lookupVar(fr *frame, name string) (value.Value, bool) {
	if t := fr.localThunk(name); t != nil {
		return r.force(t), true
	}
	if v, ok := lookupBinding(fr.bv, name); ok {
		return v, true
	}
	return r.global(name)
}

// global looks a name up in Env.Globals. Conditions read the same few
// globals over and over (request, resource), so the last found is
// remembered and compared before the map is hashed.
func (r *Run) global(name string) (value.Value, bool) {
	for _, v := range r.env.Vars {
		if v.Name == name {
			return v.Value, true
		}
	}
	if g := &r.global1; g.v != nil && g.name == name {
		return g.v, true
	}
	v, ok := r.env.Globals[name]
	if ok {
		r.global1 = binding{name, v}
	}
	return v, ok
}

// newThunks returns n thunks that live as long as the run; like
// newFrame's, they are not zeroed when the run is reused.
func (r *Run) newThunks(n int) []thunk {
	if n > 16 {
		return make([]thunk, n)
	}
	a := r.more()
	if len(a.thunks) < n {
		a.thunksMade = min(max(2*a.thunksMade, 4, int32(n)), 32)
		a.thunks = make([]thunk, a.thunksMade)
	}
	t := a.thunks[:n:n]
	a.thunks = a.thunks[n:]
	return t
}

// withPos attaches the node's start position to an error that has none.
// inReceiverError is what `x in c` gives, before x is evaluated, for a
// collection c without `in` (production evaluates it as a method of c);
// nil when c has it. opOff is the operator's offset, off the expression's.
func inReceiverError(c value.Value, opOff, off int) value.Value {
	switch c.(type) {
	case value.List, value.Set, value.Map, value.Record, value.Constraint:
		return nil
	}
	return inReceiverFailure(c, opOff, off)
}

func inReceiverFailure(c value.Value, opOff, off int) value.Value {
	if _, ok := c.(value.Null); ok {
		return withOffset(value.ErrNull(), opOff)
	}
	return withOffset(value.ErrFunctionNotFound("in"), off)
}

// inResult is `x in c` with both evaluated (c passed inReceiverError).
func (r *Run) inResult(x, c value.Value, opOff int) value.Value {
	if isConstraint(x) || isConstraint(c) {
		return withOffset(r.prove("in", x, c), opOff)
	}
	return withOffset(in(x, c), opOff)
}

// indexReceiverError is what `x[i]` gives, before i is evaluated, for an
// x that cannot be indexed (indexing is a method production looks up
// first: "Function not found error: Name: [[]]."); nil when x can be.
func indexReceiverError(x value.Value, off int) value.Value {
	switch x.(type) {
	case value.List, value.String, value.Map, value.Record, value.Path, value.Constraint:
		return nil
	}
	return indexReceiverFailure(x, off)
}

func indexReceiverFailure(x value.Value, off int) value.Value {
	if _, ok := x.(value.Null); ok {
		return withOffset(value.ErrNull(), off)
	}
	return withOffset(value.ErrFunctionNotFound("[]"), off)
}

// indexResult is `x[i]` with both evaluated (x passed indexReceiverError).
func (r *Run) indexResult(x, i value.Value, off int) value.Value {
	if c, ok := x.(value.Constraint); ok {
		if k, ok := i.(value.String); ok {
			return value.Constraint{Field: append(append([]string(nil), c.Field...), string(k))}
		}
		return withOffset(r.unprovable(x), off)
	}
	return withOffset(index(x, i), off)
}

func withPos(v value.Value, n ast.Expr) value.Value {
	if e, ok := v.(*value.Error); ok && e.Offset < 0 {
		e.Offset = n.Span().Start.Offset
	}
	return v
}

func withOffset(v value.Value, offset int) value.Value {
	if e, ok := v.(*value.Error); ok && e.Offset < 0 {
		e.Offset = offset
	}
	return v
}

func (r *Run) record(e ast.Expr, depth int) int {
	if !r.trace || len(r.steps) >= maxTrace {
		return -1
	}
	r.steps = append(r.steps, Step{Node: e, Parent: r.cur, Depth: int32(depth)})
	return len(r.steps) - 1
}

func (r *Run) skip(e ast.Expr, depth int) {
	if i := r.record(e, depth); i >= 0 {
		r.steps[i].Skipped = true
	}
	if r.counting {
		for p, ok := e.(*ast.Paren); ok; p, ok = e.(*ast.Paren) {
			e = p.X
		}
		r.env.Count.Count(e, nil)
	}
}

func (r *Run) eval(e ast.Expr, fr *frame, depth int) value.Value {
	if p, ok := e.(*ast.Paren); ok {
		return r.eval(p.X, fr, depth)
	}
	if r.exhausted {
		return &value.Error{Kind: value.Exhausted, Message: r.exhaustedMessage(), Offset: e.Span().Start.Offset}
	}
	r.count++
	if r.count > r.max {
		r.exhausted = true
		return &value.Error{Kind: value.Exhausted, Message: r.exhaustedMessage(), Offset: e.Span().Start.Offset}
	}
	if r.count&clockEvery == 0 && r.clockOut() {
		return &value.Error{Kind: value.Exhausted, Message: r.exhaustedMessage(), Offset: e.Span().Start.Offset}
	}
	var v value.Value
	if i := r.record(e, depth); i < 0 {
		v = r.evalNode(e, fr, depth)
	} else {
		parent := r.cur
		r.cur = int32(i)
		v = r.evalNode(e, fr, depth)
		r.cur = parent
		// Traces and counters hand values to other packages: they see
		// records as the maps they stand for (built once per record).
		r.steps[i].Value = value.Plain(v)
	}
	if r.counting {
		r.env.Count.Count(e, value.Plain(v))
	}
	return v
}

// clockOut reads the clock for the time limit, true (and the run
// exhausted) when it has run out; the first reading starts the clock.
func (r *Run) clockOut() bool {
	now, a := clockNow(), r.more()
	if a.started == 0 {
		a.started = now
		return false
	}
	if time.Duration(now-a.started) > r.maxDur() {
		r.exhausted, r.timedOut = true, true
		return true
	}
	return false
}

func (r *Run) exhaustedMessage() string {
	if r.timedOut {
		return "Evaluation time limit exceeded: this request's rules ran longer than " + r.maxDur().String() + " (production bounds evaluation cost and denies)."
	}
	return "Evaluation budget exhausted: more than " + itoa(int(r.max)) + " expressions evaluated for this request (production denies silently)."
}

func itoa(n int) string { return value.Show(value.Int(n)) }

func (r *Run) evalNode(e ast.Expr, fr *frame, depth int) value.Value {
	switch e := e.(type) {
	case *ast.Literal:
		if v := literalInPlace(e); v != nil {
			return v
		}
	case *ast.Ident:
		if v, ok := r.lookupVar(fr, e.Name); ok {
			return v
		}
		return withPos(value.ErrNull(), e)
	case *ast.Unary:
		x := r.eval(e.X, fr, depth+1)
		if value.IsError(x) {
			return x
		}
		var v value.Value
		if e.Op == "!" {
			v = value.Not(x)
		} else {
			v = value.Negate(x)
		}
		return withOffset(v, e.OpPos.Offset)
	case *ast.Binary:
		return r.binary(e, fr, depth)
	case *ast.In:
		// Production evaluates `x in c` as a method of the collection: c
		// first, and a value without `in` fails before x is evaluated.
		c := r.eval(e.Collection, fr, depth+1)
		if value.IsError(c) {
			r.skip(e.X, depth+1)
			return c
		}
		if err := inReceiverError(c, e.OpSpan.Start.Offset, e.Span().Start.Offset); err != nil {
			r.skip(e.X, depth+1)
			return err
		}
		x := r.eval(e.X, fr, depth+1)
		if value.IsError(x) {
			return x
		}
		return r.inResult(x, c, e.OpSpan.Start.Offset)
	case *ast.Is:
		x := r.eval(e.X, fr, depth+1)
		if value.IsError(x) {
			return x
		}
		if isConstraint(x) {
			return withPos(r.prove("is", x, value.String(e.Type)), e)
		}
		return value.Bool(value.Is(x, e.Type))
	case *ast.Ternary:
		c := r.eval(e.Cond, fr, depth+1)
		if value.IsError(c) {
			r.skip(e.Then, depth+1)
			r.skip(e.Else, depth+1)
			return c
		}
		b, ok := c.(value.Bool)
		if !ok {
			r.skip(e.Then, depth+1)
			r.skip(e.Else, depth+1)
			return withPos(value.ErrType(c.Type(), "bool"), e.Cond)
		}
		if b {
			v := r.eval(e.Then, fr, depth+1)
			r.skip(e.Else, depth+1)
			return v
		}
		r.skip(e.Then, depth+1)
		return r.eval(e.Else, fr, depth+1)
	case *ast.Member:
		if _, inner := e.X.(*ast.Member); inner && !r.trace && !r.counting {
			if v, ok := r.memberChain(e, fr, depth); ok {
				return v
			}
		}
		return memberOf(r.eval(e.X, fr, depth+1), e)
	case *ast.Index:
		x := r.eval(e.X, fr, depth+1)
		if value.IsError(x) {
			r.skip(e.Index, depth+1)
			return x
		}
		if err := indexReceiverError(x, e.Span().Start.Offset); err != nil {
			r.skip(e.Index, depth+1)
			return err
		}
		i := r.eval(e.Index, fr, depth+1)
		if value.IsError(i) {
			return i
		}
		return r.indexResult(x, i, e.Span().Start.Offset)
	case *ast.Slice:
		x := r.eval(e.X, fr, depth+1)
		if value.IsError(x) {
			return x
		}
		switch x.(type) {
		case value.List, value.String:
		case value.Null:
			return withPos(value.ErrNull(), e)
		default:
			return withPos(value.ErrFunctionNotFound("@range"), e)
		}
		var lo, hi value.Value
		if e.Lo != nil {
			if lo = r.eval(e.Lo, fr, depth+1); value.IsError(lo) {
				return lo
			}
		}
		if e.Hi != nil {
			if hi = r.eval(e.Hi, fr, depth+1); value.IsError(hi) {
				return hi
			}
		}
		return withPos(slice(x, lo, hi), e)
	case *ast.Call:
		return r.call(e, fr, depth)
	case *ast.List:
		if v, ok := r.folded(e); ok {
			return v
		}
		out, list := value.MakeList(len(e.Elems))
		for i, x := range e.Elems {
			v := r.eval(x, fr, depth+1)
			if value.IsError(v) {
				return v
			}
			out[i] = v
		}
		return list
	case *ast.Map:
		if v, ok := r.folded(e); ok {
			return v
		}
		out := make(value.Map, len(e.Entries))
		for _, en := range e.Entries {
			k := r.eval(en.Key, fr, depth+1)
			if value.IsError(k) {
				return k
			}
			ks, ok := k.(value.String)
			if !ok {
				return withPos(value.ErrType(k.Type(), "string"), en.Key)
			}
			v := r.eval(en.Value, fr, depth+1)
			if value.IsError(v) {
				return v
			}
			out[string(ks)] = v
		}
		return out
	case *ast.Path:
		return r.path(e, nil, fr, depth)
	case *ast.Bad:
		return withPos(value.Errorf("syntax error"), e)
	}
	return withPos(value.Errorf("cannot evaluate %T", e), e)
}

// folded returns a constant literal's value when evaluating it would not
// run out of budget; it counts the expressions evaluation would have. A
// traced run evaluates it, so every element has its step.
func (r *Run) folded(e ast.Expr) (value.Value, bool) {
	if r.trace {
		return nil, false
	}
	c, ok := r.env.Program.consts[e]
	if !ok || int(r.count)+c.n-1 > int(r.max) {
		return nil, false
	}
	r.count += int32(c.n - 1)
	return c.v, true
}

// binary evaluates binary operators. && and || absorb errors in either
// order, as production does: an operand that decides the result (false for
// &&, true for ||) wins over an error in the other; a non-boolean operand is
// an error.
func (r *Run) binary(e *ast.Binary, fr *frame, depth int) value.Value {
	switch e.Op {
	case "&&", "||":
		decisive := value.Bool(e.Op == "||")
		l := logicOperand(r.eval(e.X, fr, depth+1), e.X)
		// (A type assertion, not ==: comparing interfaces calls the runtime.)
		if b, ok := l.(value.Bool); ok && b == decisive {
			r.skip(e.Y, depth+1)
			return l
		}
		rv := logicOperand(r.eval(e.Y, fr, depth+1), e.Y)
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
	x := r.eval(e.X, fr, depth+1)
	y := r.eval(e.Y, fr, depth+1)
	if value.IsError(x) {
		return x
	}
	if value.IsError(y) {
		return y
	}
	if isConstraint(x) || isConstraint(y) {
		switch e.Op {
		case "==", "!=", "<", "<=", ">", ">=":
			return withOffset(r.prove(e.Op, x, y), e.OpSpan.Start.Offset)
		}
		return withOffset(r.unprovable(x, y), e.OpSpan.Start.Offset)
	}
	var v value.Value
	switch e.Op {
	case "==":
		v = equalOp(x, y)
	case "!=":
		v = equalOp(x, y)
		if b, ok := v.(value.Bool); ok {
			v = !b
		}
	case "<", "<=", ">", ">=":
		v = value.Compare(x, y, e.Op)
	default:
		v = value.Arith(e.Op, x, y)
	}
	return withOffset(v, e.OpSpan.Start.Offset)
}

func isConstraint(v value.Value) bool {
	_, ok := v.(value.Constraint)
	return ok
}

func (r *Run) prove(op string, x, y value.Value) value.Value {
	if r.env.Prove == nil {
		return r.unprovable(x, y)
	}
	return r.env.Prove(op, x, y)
}

// unprovable is the error for using a list query's unknown document in a
// way its filters can't settle.
func (r *Run) unprovable(vals ...value.Value) value.Value {
	for _, v := range vals {
		if c, ok := v.(value.Constraint); ok {
			return value.Errorf("%s can't be checked against the query's filters here: rules are not filters, so a list query is allowed only when its filters guarantee the rule for every document it could return.", c.Desc())
		}
	}
	return value.Errorf("a list query's documents can't be checked this way against its filters.")
}

func equalOp(x, y value.Value) value.Value {
	if p, ok := x.(value.Path); ok && p.Partial {
		return value.ErrPartialPath()
	}
	if p, ok := y.(value.Path); ok && p.Partial {
		return value.ErrPartialPath()
	}
	return value.Bool(value.Equal(x, y))
}

// logicOperand turns a non-boolean operand of && or || into a type error.
func logicOperand(v value.Value, n ast.Expr) value.Value {
	switch v.(type) {
	case value.Bool, *value.Error:
		return v
	}
	return withPos(value.ErrType(v.Type(), "bool"), n)
}

// path evaluates a path literal; $(x) splices strings (split on '/'),
// numbers and booleans as text, and paths segment by segment.
// With cs (compiled evaluation), segment i's interpolation is cs[i].
func (r *Run) path(e *ast.Path, cs []compiled, fr *frame, depth int) value.Value {
	// The path and its segments in one allocation (paths are short).
	type pathBuf struct {
		p    value.Path
		segs [8]string
	}
	var pb *pathBuf
	var p value.Path
	if n := len(e.Segments) + 2; n <= len(pb.segs) {
		pb = &pathBuf{}
		p = value.Path{Absolute: true, Segments: pb.segs[:0:n]}
	} else {
		p = value.Path{Absolute: true, Segments: make([]string, 0, n)}
	}
	for si, s := range e.Segments {
		if s.Interp == nil {
			p.Segments = append(p.Segments, s.Text)
			continue
		}
		var v value.Value
		if cs != nil {
			v = cs[si](r, fr)
		} else {
			v = r.eval(s.Interp, fr, depth+1)
		}
		switch v := v.(type) {
		case *value.Error:
			return v
		case value.String:
			if strings.IndexByte(string(v), '/') < 0 {
				p.Segments = append(p.Segments, string(v))
			} else {
				p.Segments = append(p.Segments, strings.Split(string(v), "/")...)
			}
		case value.Int, value.Float, value.Bool:
			p.Segments = append(p.Segments, toString(v))
		case value.Path:
			if v.Partial {
				return withPos(value.ErrPartialPath(), s.Interp)
			}
			p.Segments = append(p.Segments, v.Segments...)
		default:
			return withPos(value.ErrUnsupportedOp("path segment "+v.Type().String(), "string, int, float, bool, path"), s.Interp)
		}
	}
	if pb != nil {
		pb.p = p
		return value.BoxPath(&pb.p)
	}
	return p
}

func in(x, c value.Value) value.Value {
	switch c := c.(type) {
	case value.List:
		for _, e := range c {
			if value.Equal(e, x) && e.Type() == x.Type() {
				return value.Bool(true)
			}
		}
		return value.Bool(false)
	case value.Set:
		return value.Bool(c.Contains(x))
	case value.Map, value.Record:
		k, ok := x.(value.String)
		if !ok {
			return value.ErrUnsupportedOp("map.in("+x.Type().String()+")", "map.in(string)")
		}
		_, has := value.Field(c, string(k))
		return value.Bool(has)
	case value.Null:
		return value.ErrNull()
	}
	return value.ErrFunctionNotFound("in")
}

// memberOf is x.name for the node e.
func memberOf(x value.Value, e *ast.Member) value.Value {
	if c, ok := x.(value.Constraint); ok {
		return value.Constraint{Field: append(append([]string(nil), c.Field...), e.Name)}
	}
	return withPos(member(x, e.Name), e)
}

// memberChain evaluates a chain of field reads such as request.auth.uid
// (e already counted) without a dispatch per node: the nodes below e are
// counted at once, the innermost operand evaluated, and the names applied
// outward, which gives the values, errors and budget of evaluating each
// node in turn. Only untraced and uncounted runs take it (nothing observes
// the nodes one by one), and only when the chain's nodes neither exhaust
// the budget nor reach a clock check; false means evaluate node by node.
func (r *Run) memberChain(e *ast.Member, fr *frame, depth int) (value.Value, bool) {
	var chain [8]*ast.Member
	n := 0
	var x ast.Expr = e
	for n < len(chain) {
		m, ok := x.(*ast.Member)
		if !ok {
			break
		}
		chain[n] = m
		n++
		x = m.X
	}
	if _, ok := x.(*ast.Member); ok {
		return nil, false // longer than chain: node by node
	}
	below := n - 1
	if c := int(r.count) + below; c > int(r.max) || c/(clockEvery+1) != int(r.count)/(clockEvery+1) {
		return nil, false
	}
	r.count += int32(below)
	v := r.eval(x, fr, depth+n)
	for i := n - 1; i >= 0; i-- {
		v = memberOf(v, chain[i])
	}
	return v, true
}

func member(x value.Value, name string) value.Value {
	switch x := x.(type) {
	case *value.Error:
		return x
	case value.Null:
		return value.ErrNull()
	case value.Map:
		if v, ok := x[name]; ok {
			return v
		}
	case value.Record:
		if v, ok := x.Field(name); ok {
			return v
		}
	case value.Path:
	default:
		return value.ErrType(x.Type(), "map,path")
	}
	return value.ErrUndefinedProperty(name)
}

func index(x, i value.Value) value.Value {
	switch x := x.(type) {
	case value.Null:
		return value.ErrNull()
	case value.List:
		n, ok := i.(value.Int)
		if !ok {
			return value.ErrUnsupportedOp("list["+i.Type().String()+"]", "list[int]")
		}
		if n < 0 || int(n) >= len(x) {
			return value.ErrIndexOutOfBounds(int64(n), int64(len(x)))
		}
		return x[n]
	case value.String:
		n, ok := i.(value.Int)
		if !ok {
			return value.ErrUnsupportedOp("string["+i.Type().String()+"]", "string[int]")
		}
		runes := []rune(string(x))
		if n < 0 || int(n) >= len(runes) {
			return value.ErrIndexOutOfBounds(int64(n), int64(len(runes)))
		}
		return value.String(runes[n])
	case value.Map, value.Record:
		k, ok := i.(value.String)
		if !ok {
			return value.ErrUnsupportedOp("map["+i.Type().String()+"]", "map[string]")
		}
		if v, ok := value.Field(x, string(k)); ok {
			return v
		}
		return value.ErrUndefinedProperty(string(k))
	case value.Path:
		if x.Partial {
			return value.ErrPartialPath()
		}
		switch i := i.(type) {
		case value.Int:
			if i < 0 || int(i) >= len(x.Segments) {
				return value.ErrIndexOutOfBounds(int64(i), int64(len(x.Segments)))
			}
			return value.String(x.Segments[i])
		}
		return value.ErrUnsupportedOp("path["+i.Type().String()+"]", "path[int]")
	}
	return value.ErrUnsupportedOp(x.Type().String()+"["+i.Type().String()+"]", "list[int], string[int], map[string], path[int]")
}

// slice implements x[lo:hi] with production's bounds: a given start must
// be an index of x, a given end must be at most len(x) and above 0 (it is
// reported as the last index it would include), and start must not pass
// end — so an empty slice such as 'abc'[1:1] is not an error but [0:0]
// and [3:] on three elements are (all measured on the emulator).
func slice(x, lo, hi value.Value) value.Value {
	var n int
	switch x := x.(type) {
	case value.List:
		n = len(x)
	case value.String:
		n = len([]rune(string(x)))
	}
	typ := x.Type().String()
	boundType := func(v value.Value) string {
		if v == nil {
			return "null"
		}
		return v.Type().String()
	}
	from, to := int64(0), int64(n)
	_, loOK := lo.(value.Int)
	_, hiOK := hi.(value.Int)
	if (lo != nil && !loOK) || (hi != nil && !hiOK) {
		return value.ErrUnsupportedOp(typ+"["+boundType(lo)+":"+boundType(hi)+"]",
			typ+"[null:null], "+typ+"[null:int], "+typ+"[int:null], "+typ+"[int:int]")
	}
	if lo != nil {
		from = int64(lo.(value.Int))
		if from < 0 || from >= int64(n) {
			return value.ErrIndexOutOfBounds(from, int64(n))
		}
	}
	if hi != nil {
		to = int64(hi.(value.Int))
		if to-1 < 0 || to > int64(n) {
			return value.ErrIndexOutOfBounds(to-1, int64(n))
		}
	}
	if from > to {
		return value.Errorf("Illegal range error. From index: [%d] , To index: [%d].", from, to)
	}
	switch x := x.(type) {
	case value.List:
		return append(value.List{}, x[from:to]...)
	case value.String:
		return value.String([]rune(string(x))[from:to])
	}
	return value.ErrNull()
}

// literalInPlace is a literal's value boxed in place in its node (nodes
// never change once parsed), so reading it allocates nothing; nil for an
// unknown kind.
func literalInPlace(e *ast.Literal) value.Value {
	switch e.Kind {
	case ast.Int:
		return value.BoxInt((*value.Int)(&e.Int))
	case ast.Float:
		return value.BoxFloat((*value.Float)(&e.Float))
	case ast.String:
		return value.BoxString((*value.String)(&e.Str))
	case ast.Bytes:
		return value.BoxBytes((*value.Bytes)(&e.Str))
	}
	return literal(e)
}

// literal is a literal's value, nil for an unknown kind.
func literal(e *ast.Literal) value.Value {
	switch e.Kind {
	case ast.Null:
		return value.Null{}
	case ast.Bool:
		return value.Bool(e.Bool)
	case ast.Int:
		return value.Int(e.Int)
	case ast.Float:
		return value.Float(e.Float)
	case ast.String:
		return value.String(e.Str)
	case ast.Bytes:
		return value.Bytes(e.Str)
	}
	return nil
}
