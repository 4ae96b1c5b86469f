package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Env binds the names an expression may read. Values are JSON-like Go
// values: nil, bool, integers, floats, string, []any, map[string]any (and
// time.Time, which compares and passes through).
type Env map[string]any

// maxResult bounds the size of a string or list an expression builds.
const maxResult = 1 << 20

// Eval evaluates a parsed expression. Errors are *EvalError.
func (x *Expr) Eval(env Env) (any, error) {
	e := &evaluator{src: x.Source, env: env}
	return e.eval(x.Root)
}

// Eval parses and evaluates src.
func Eval(src string, env Env) (any, error) {
	x, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return x.Eval(env)
}

type evaluator struct {
	src string
	env Env
}

func (e *evaluator) errorf(n Node, format string, args ...any) error {
	return &EvalError{Pos: posAt(e.src, n.Offset()), Msg: fmt.Sprintf(format, args...)}
}

// norm brings numbers to int64 or float64.
func norm(v any) any {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int8:
		return int64(n)
	case int16:
		return int64(n)
	case int32:
		return int64(n)
	case uint8:
		return int64(n)
	case uint16:
		return int64(n)
	case uint32:
		return int64(n)
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n)
		}
		return float64(n)
	case uint:
		return norm(uint64(n))
	case float32:
		return float64(n)
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
		if f, err := n.Float64(); err == nil {
			return f
		}
		return n.String()
	}
	return v
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "map"
	case time.Time:
		return "timestamp"
	}
	return fmt.Sprintf("%T", v)
}

func (e *evaluator) eval(n Node) (any, error) {
	switch n := n.(type) {
	case *Lit:
		return n.Value, nil
	case *Name:
		v, ok := e.env[n.Name]
		if !ok {
			names := make([]string, 0, len(e.env))
			for k := range e.env {
				names = append(names, k)
			}
			sort.Strings(names)
			return nil, e.errorf(n, "unknown name %s (defined: %s)", n.Name, strings.Join(names, ", "))
		}
		return norm(v), nil
	case *Member:
		x, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		m, ok := x.(map[string]any)
		if !ok {
			if x == nil {
				return nil, e.errorf(n, "%s is null (the document may not exist), so it has no field %s", n.X, n.Name)
			}
			return nil, e.errorf(n, "%s is a %s, not a map: it has no field %s", n.X, typeName(x), n.Name)
		}
		v, ok := m[n.Name]
		if !ok {
			return nil, e.errorf(n, "%s has no field %s", n.X, n.Name)
		}
		return norm(v), nil
	case *Index:
		x, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		i, err := e.eval(n.I)
		if err != nil {
			return nil, err
		}
		switch c := x.(type) {
		case []any:
			k, ok := i.(int64)
			if !ok {
				return nil, e.errorf(n, "a list index must be an int, not a %s", typeName(i))
			}
			if k < 0 || k >= int64(len(c)) {
				return nil, e.errorf(n, "index %d is out of range for a list of %d", k, len(c))
			}
			return norm(c[k]), nil
		case map[string]any:
			k, ok := i.(string)
			if !ok {
				return nil, e.errorf(n, "a map key must be a string, not a %s", typeName(i))
			}
			v, ok := c[k]
			if !ok {
				return nil, e.errorf(n, "%s has no key %q", n.X, k)
			}
			return norm(v), nil
		}
		return nil, e.errorf(n, "cannot index a %s", typeName(x))
	case *Unary:
		x, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case "!":
			b, ok := x.(bool)
			if !ok {
				return nil, e.errorf(n, "! needs a bool, not a %s", typeName(x))
			}
			return !b, nil
		default:
			switch v := x.(type) {
			case int64:
				if v == math.MinInt64 {
					return nil, e.errorf(n, "integer overflow")
				}
				return -v, nil
			case float64:
				return -v, nil
			}
			return nil, e.errorf(n, "- needs a number, not a %s", typeName(x))
		}
	case *Cond:
		c, err := e.eval(n.C)
		if err != nil {
			return nil, err
		}
		b, ok := c.(bool)
		if !ok {
			return nil, e.errorf(n, "the condition of ?: must be a bool, not a %s", typeName(c))
		}
		if b {
			return e.eval(n.T)
		}
		return e.eval(n.F)
	case *Binary:
		return e.binary(n)
	case *List:
		out := make([]any, len(n.Elems))
		for i, a := range n.Elems {
			v, err := e.eval(a)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *Call:
		args := make([]any, len(n.Args))
		for i, a := range n.Args {
			v, err := e.eval(a)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		v, msg := builtins[n.Fn](args)
		if msg != "" {
			return nil, e.errorf(n, "%s: %s", n.Fn, msg)
		}
		return v, nil
	}
	return nil, fmt.Errorf("expr: unknown node %T", n)
}

func (e *evaluator) binary(n *Binary) (any, error) {
	x, err := e.eval(n.X)
	if err != nil {
		return nil, err
	}
	if n.Op == "&&" || n.Op == "||" {
		b, ok := x.(bool)
		if !ok {
			return nil, e.errorf(n, "%s needs bools, not a %s on the left", n.Op, typeName(x))
		}
		if (n.Op == "&&" && !b) || (n.Op == "||" && b) {
			return b, nil
		}
		y, err := e.eval(n.Y)
		if err != nil {
			return nil, err
		}
		c, ok := y.(bool)
		if !ok {
			return nil, e.errorf(n, "%s needs bools, not a %s on the right", n.Op, typeName(y))
		}
		return c, nil
	}
	y, err := e.eval(n.Y)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case "==":
		return equal(x, y), nil
	case "!=":
		return !equal(x, y), nil
	case "<", "<=", ">", ">=":
		c, ok := compare(x, y)
		if !ok {
			return nil, e.errorf(n, "cannot compare a %s with a %s", typeName(x), typeName(y))
		}
		switch n.Op {
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		}
		return c >= 0, nil
	case "+":
		switch a := x.(type) {
		case string:
			if b, ok := y.(string); ok {
				if len(a)+len(b) > maxResult {
					return nil, e.errorf(n, "string result over %d bytes", maxResult)
				}
				return a + b, nil
			}
		case []any:
			if b, ok := y.([]any); ok {
				if len(a)+len(b) > maxResult {
					return nil, e.errorf(n, "list result over %d elements", maxResult)
				}
				return append(append([]any{}, a...), b...), nil
			}
		}
	}
	return e.arith(n, x, y)
}

func (e *evaluator) arith(n *Binary, x, y any) (any, error) {
	ai, aInt := x.(int64)
	bi, bInt := y.(int64)
	if aInt && bInt {
		switch n.Op {
		case "+":
			r := ai + bi
			if (r > ai) != (bi > 0) {
				return nil, e.errorf(n, "integer overflow")
			}
			return r, nil
		case "-":
			r := ai - bi
			if (r < ai) != (bi > 0) {
				return nil, e.errorf(n, "integer overflow")
			}
			return r, nil
		case "*":
			if ai != 0 && bi != 0 {
				r := ai * bi
				if r/bi != ai || (ai == -1 && bi == math.MinInt64) || (bi == -1 && ai == math.MinInt64) {
					return nil, e.errorf(n, "integer overflow")
				}
				return r, nil
			}
			return int64(0), nil
		case "/":
			if bi == 0 {
				return nil, e.errorf(n, "division by zero")
			}
			if ai == math.MinInt64 && bi == -1 {
				return nil, e.errorf(n, "integer overflow")
			}
			if ai%bi == 0 {
				return ai / bi, nil
			}
			return float64(ai) / float64(bi), nil
		case "%":
			if bi == 0 {
				return nil, e.errorf(n, "modulo by zero")
			}
			if bi == -1 {
				return int64(0), nil
			}
			return ai % bi, nil
		}
	}
	a, ok1 := toFloat(x)
	b, ok2 := toFloat(y)
	if !ok1 || !ok2 {
		return nil, e.errorf(n, "%s needs numbers (or + two strings or two lists), not a %s and a %s", n.Op, typeName(x), typeName(y))
	}
	switch n.Op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, e.errorf(n, "division by zero")
		}
		return a / b, nil
	default:
		if b == 0 {
			return nil, e.errorf(n, "modulo by zero")
		}
		return math.Mod(a, b), nil
	}
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func equal(x, y any) bool {
	x, y = norm(x), norm(y)
	if a, ok := toFloat(x); ok {
		if b, ok := toFloat(y); ok {
			return a == b
		}
		return false
	}
	switch a := x.(type) {
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case time.Time:
		b, ok := y.(time.Time)
		return ok && a.Equal(b)
	}
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	if reflect.TypeOf(x) != reflect.TypeOf(y) || !reflect.TypeOf(x).Comparable() {
		return false
	}
	return x == y
}

func compare(x, y any) (int, bool) {
	if a, ok := toFloat(x); ok {
		if b, ok := toFloat(y); ok {
			switch {
			case a < b:
				return -1, true
			case a > b:
				return 1, true
			}
			return 0, true
		}
		return 0, false
	}
	switch a := x.(type) {
	case string:
		if b, ok := y.(string); ok {
			return strings.Compare(a, b), true
		}
	case time.Time:
		if b, ok := y.(time.Time); ok {
			return a.Compare(b), true
		}
	}
	return 0, false
}

// builtin returns a value, or an error message.
type builtin func(args []any) (any, string)

var builtins map[string]builtin

func init() {
	builtins = map[string]builtin{
		"min":    extremum(-1),
		"max":    extremum(1),
		"length": length,
		"concat": concat,
		"abs": func(args []any) (any, string) {
			if len(args) != 1 {
				return nil, "takes one number"
			}
			switch v := args[0].(type) {
			case int64:
				if v == math.MinInt64 {
					return nil, "integer overflow"
				}
				if v < 0 {
					return -v, ""
				}
				return v, ""
			case float64:
				return math.Abs(v), ""
			}
			return nil, "takes a number, not a " + typeName(args[0])
		},
		"floor": rounding(math.Floor),
		"ceil":  rounding(math.Ceil),
		"round": rounding(math.Round),
	}
}

func builtinNames() []string {
	out := make([]string, 0, len(builtins))
	for k := range builtins {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func extremum(dir int) builtin {
	return func(args []any) (any, string) {
		if len(args) == 0 {
			return nil, "takes at least one argument"
		}
		best := args[0]
		for _, a := range args[1:] {
			c, ok := compare(a, best)
			if !ok {
				return nil, fmt.Sprintf("cannot compare a %s with a %s", typeName(a), typeName(best))
			}
			if c*dir > 0 {
				best = a
			}
		}
		if _, ok := compare(best, best); !ok {
			return nil, "takes numbers, strings or timestamps, not a " + typeName(best)
		}
		return best, ""
	}
}

func length(args []any) (any, string) {
	if len(args) != 1 {
		return nil, "takes one argument"
	}
	switch v := args[0].(type) {
	case string:
		return int64(utf8.RuneCountInString(v)), ""
	case []any:
		return int64(len(v)), ""
	case map[string]any:
		return int64(len(v)), ""
	}
	return nil, "takes a string, list or map, not a " + typeName(args[0])
}

func concat(args []any) (any, string) {
	if len(args) == 0 {
		return nil, "takes at least one argument"
	}
	switch args[0].(type) {
	case string:
		var b strings.Builder
		for _, a := range args {
			s, ok := a.(string)
			if !ok {
				return nil, "mixes a string with a " + typeName(a)
			}
			if b.Len()+len(s) > maxResult {
				return nil, fmt.Sprintf("result over %d bytes", maxResult)
			}
			b.WriteString(s)
		}
		return b.String(), ""
	case []any:
		var out []any
		for _, a := range args {
			l, ok := a.([]any)
			if !ok {
				return nil, "mixes a list with a " + typeName(a)
			}
			if len(out)+len(l) > maxResult {
				return nil, fmt.Sprintf("result over %d elements", maxResult)
			}
			out = append(out, l...)
		}
		if out == nil {
			out = []any{}
		}
		return out, ""
	}
	return nil, "takes strings or lists, not a " + typeName(args[0])
}

func rounding(f func(float64) float64) builtin {
	return func(args []any) (any, string) {
		if len(args) != 1 {
			return nil, "takes one number"
		}
		switch v := args[0].(type) {
		case int64:
			return v, ""
		case float64:
			r := f(v)
			if r >= -(1<<63) && r < 1<<63 {
				return int64(r), ""
			}
			return r, ""
		}
		return nil, "takes a number, not a " + typeName(args[0])
	}
}
