package eval

import (
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/value"
)

// call evaluates a function call, a namespaced call or a method call.
// Error positions follow production: a function or method that doesn't
// exist is reported at the start of the call, a namespaced function that
// fails at its name after the dot, a method that fails at its name.
func (r *Run) call(e *ast.Call, fr *frame, depth int) value.Value {
	return r.callWith(e, r.env.Program.calls[e], nil, fr, depth)
}

// callWith is call with the call site's plan (nil for an unplanned
// standalone expression) and, in a compiled evaluation, its compiled
// receiver, arguments and callee (cc; nil to walk the tree).
func (r *Run) callWith(e *ast.Call, plan *callPlan, cc *compiledCall, fr *frame, depth int) value.Value {
	var argc []compiled
	if cc != nil {
		argc = cc.args
	}
	switch fn := e.Fn.(type) {
	case *ast.Ident:
		var f *ast.Function
		var decl *Block
		if plan != nil {
			f, decl = plan.user, plan.decl
		} else {
			// A standalone expression (Run.Expr) is not planned.
			f, decl = r.env.Program.LookupFunc(fr.block, fn.Name)
		}
		if f != nil {
			return r.callUser(e, f, decl, cc, fr, depth)
		}
		if sf := r.env.Service; sf != nil && sf.HasFunc(fn.Name) {
			args, mark, err := r.args(e.Args, argc, fr, depth)
			if err != nil {
				return err
			}
			defer r.release(mark)
			return withPos(sf.CallFunc(fn.Name, args), e)
		}
		if b, ok := r.env.Funcs[fn.Name]; ok {
			args, mark, err := r.args(e.Args, argc, fr, depth)
			if err != nil {
				return err
			}
			defer r.release(mark)
			return withPos(b(args), e)
		}
		if g, ok := r.env.Program.lib.globals[fn.Name]; ok {
			args, mark, err := r.args(e.Args, argc, fr, depth)
			if err != nil {
				return err
			}
			defer r.release(mark)
			return withPos(g(args), e)
		}
		return withPos(value.ErrFunctionNotFound(fn.Name), e)
	case *ast.Member:
		if id, ok := fn.X.(*ast.Ident); ok {
			if _, bound := r.lookupVar(fr, id.Name); !bound {
				ns, known := r.env.Program.lib.namespaces[id.Name]
				if !known {
					ns, known = r.env.Namespaces[id.Name]
				}
				if known {
					f, ok := ns[fn.Name]
					if !ok {
						return withPos(value.ErrFunctionNotFound(id.Name+"."+fn.Name), e)
					}
					args, mark, err := r.args(e.Args, argc, fr, depth)
					if err != nil {
						return err
					}
					defer r.release(mark)
					return withOffset(f(args), fn.NameSp.Start.Offset)
				}
			}
		}
		var recv value.Value
		if cc != nil {
			recv = cc.recv(r, fr)
		} else {
			recv = r.eval(fn.X, fr, depth+1)
		}
		if value.IsError(recv) {
			return recv
		}
		if isConstraint(recv) {
			return withPos(r.unprovable(recv), e)
		}
		// The method is looked up before its arguments are evaluated.
		var m MethodFunc
		var ok bool
		if plan != nil {
			if plan.methods != nil {
				m = plan.methods[recv.Type()]
			}
			ok = m != nil
		} else {
			m, ok = r.env.Program.lib.lookupMethod(recv, fn.Name)
		}
		if !ok {
			for _, a := range e.Args {
				r.skip(a, depth+1)
			}
			if _, isNull := recv.(value.Null); isNull {
				return withPos(value.ErrNull(), e)
			}
			return withPos(value.ErrFunctionNotFound(fn.Name), e)
		}
		args, mark, err := r.args(e.Args, argc, fr, depth)
		if err != nil {
			return err
		}
		defer r.release(mark)
		return withOffset(m(recv, args), fn.NameSp.Start.Offset)
	}
	return withPos(value.Errorf("cannot call this expression"), e)
}

// args evaluates call arguments eagerly; the first error is returned.
// The arguments live on the run's argument stack until release(mark):
// builtins read their arguments and never keep the slice.
// With cs (compiled evaluation), argument i is cs[i]'s value.
func (r *Run) args(exprs []ast.Expr, cs []compiled, fr *frame, depth int) ([]value.Value, int, value.Value) {
	mark := len(r.argStack)
	n := len(exprs)
	var out []value.Value
	if mark == 0 && n > cap(r.argStack) && n <= len(runAux{}.argArr) {
		r.argStack = r.more().argArr[:0]
	}
	if mark+n <= cap(r.argStack) {
		r.argStack = r.argStack[:mark+n]
		out = r.argStack[mark : mark+n : mark+n]
	} else {
		out = make([]value.Value, n)
	}
	for i, a := range exprs {
		var v value.Value
		if cs != nil {
			v = cs[i](r, fr)
		} else {
			v = r.eval(a, fr, depth+1)
		}
		if value.IsError(v) {
			r.release(mark)
			return nil, mark, v
		}
		out[i] = v
	}
	return out, mark, nil
}

// release pops the argument stack back to mark.
func (r *Run) release(mark int) {
	if mark <= len(r.argStack) {
		clear(r.argStack[mark:])
		r.argStack = r.argStack[:mark]
	}
}

// callUser calls a user function. Arguments and lets are lazy thunks: an
// argument or let that errors only matters if the body uses it. With cc
// (compiled evaluation) the thunks and the body are compiled.
func (r *Run) callUser(e *ast.Call, f *ast.Function, decl *Block, cc *compiledCall, fr *frame, depth int) value.Value {
	if len(e.Args) != len(f.Params) {
		return withPos(value.Errorf("Incorrect number of arguments supplied to function: %s.", f.Name), e)
	}
	// Production accepts 21 functions on one stack (a call depth of 20
	// below the first) and rejects 22.
	if fr.calls > MaxCallDepth {
		return withPos(value.Errorf("Maximum allowed call depth of %d is reached for [%s] call stack.", MaxCallDepth, strings.Join(append(fr.stack(), f.Name), "->")), e)
	}
	if fr.onStack(f.Name) {
		return withPos(value.Errorf("Recursive call is not allowed."), e)
	}
	callee := r.newFrame()
	callee.block, callee.m, callee.fn, callee.caller, callee.calls = decl, fr.m, f, fr, fr.calls+1
	callee.bv = fr.m.visible(decl)
	callee.local = r.newThunks(len(f.Params) + len(f.Lets))
	for i := range f.Params {
		callee.local[i] = thunk{expr: e.Args[i], fr: fr, depth: int32(depth + 1)}
	}
	for i, l := range f.Lets {
		callee.local[len(f.Params)+i] = thunk{expr: l.Value, fr: callee, depth: int32(depth + 1)}
	}
	if f.Return == nil {
		return withPos(value.Errorf("function %s has no return statement", f.Name), e)
	}
	if cc != nil && cc.user != nil {
		for i := range f.Params {
			callee.local[i].c = cc.args[i]
		}
		for i := range f.Lets {
			callee.local[len(f.Params)+i].c = cc.user.lets[i]
		}
		return cc.user.ret(r, callee)
	}
	if r.cur >= 0 && int(r.cur) < len(r.steps) && r.steps[r.cur].Node == ast.Expr(e) {
		r.steps[r.cur].UserCall = true
	}
	return r.eval(f.Return, callee, depth+1)
}
