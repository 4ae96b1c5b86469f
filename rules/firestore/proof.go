package firestore

import (
	"strings"

	"github.com/pyric/pyric/rules/value"
)

// Rules are not filters: a list request is allowed only when its rule holds
// for every document the query could return. As the official emulator does,
// a list rule sees resource.data as the document the query's filters
// describe: a field pinned by an equality filter holds that value, a field
// constrained otherwise (range, in, not-in, !=, array-contains) holds a
// value.Constraint whose comparisons are decided here from the filters
// alone — true only when they guarantee it — and a field the query says
// nothing about is absent, so reading it errors and the query is denied.

// queryDocument builds resource.data for a list rule from the filters.
func queryDocument(cs []Constraint) value.Map {
	doc := value.Map{}
	pinned := map[string]bool{}
	set := func(field string, v value.Value, overwrite bool) {
		parts := strings.Split(field, ".")
		m := doc
		for i, part := range parts {
			if i == len(parts)-1 {
				if _, exists := m[part]; !exists || overwrite {
					m[part] = v
				}
				return
			}
			next, ok := m[part].(value.Map)
			if !ok {
				if _, exists := m[part]; exists {
					return // a pinned scalar already holds this prefix
				}
				next = value.Map{}
				m[part] = next
			}
			m = next
		}
	}
	for _, c := range cs {
		switch c.Op {
		case "==":
			set(c.Field, c.Value, true)
			pinned[c.Field] = true
		case "is-null":
			set(c.Field, value.Null{}, true)
			pinned[c.Field] = true
		}
	}
	for _, c := range cs {
		if pinned[c.Field] || c.Field == "__name__" {
			continue
		}
		switch c.Op {
		case "<", "<=", ">", ">=", "in", "not-in", "!=", "array-contains", "array-contains-any", "is-nan", "is-not-null", "is-not-nan":
			set(c.Field, value.Constraint{Field: strings.Split(c.Field, ".")}, false)
		}
	}
	return doc
}

// prover decides constraint operations from a query's top-level filters.
type prover struct {
	byField map[string][]Constraint
}

func newProver(cs []Constraint) *prover {
	p := &prover{byField: map[string][]Constraint{}}
	for _, c := range cs {
		p.byField[c.Field] = append(p.byField[c.Field], c)
	}
	return p
}

func fieldKey(c value.Constraint) string { return strings.Join(c.Field, ".") }

// prove implements eval.Env.Prove.
func (p *prover) prove(op string, x, y value.Value) value.Value {
	cx, xc := x.(value.Constraint)
	cy, yc := y.(value.Constraint)
	switch {
	case xc && yc:
		return value.Bool(false)
	case op == "is":
		return value.Bool(p.is(cx, string(y.(value.String))))
	case op == "in" && yc:
		// v in resource.data.tags: the query must ask array-contains v.
		return value.Bool(p.contains(cy, x))
	case op == "in":
		return value.Bool(p.in(cx, y))
	case yc:
		// Put the constraint on the left: v < f is f > v.
		return p.prove(flip(op), y, x)
	}
	switch op {
	case "==":
		return value.Bool(p.equals(cx, y))
	case "!=":
		return value.Bool(p.notEquals(cx, y))
	default:
		return value.Bool(p.ordered(cx, op, y))
	}
}

func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

// pinned returns the values the filters allow for the field when they pin
// it to a finite set (== or in), and whether they do.
func (p *prover) pinned(c value.Constraint) ([]value.Value, bool) {
	var set []value.Value
	found := false
	for _, f := range p.byField[fieldKey(c)] {
		switch f.Op {
		case "==":
			if !found || containsVal(set, f.Value) {
				set = []value.Value{f.Value}
			} else {
				set = nil
			}
			found = true
		case "in":
			l, _ := f.Value.(value.List)
			if !found {
				set = append([]value.Value(nil), l...)
			} else {
				var keep []value.Value
				for _, v := range set {
					if containsVal(l, v) {
						keep = append(keep, v)
					}
				}
				set = keep
			}
			found = true
		case "is-null":
			if !found {
				set = []value.Value{value.Null{}}
			}
			found = true
		}
	}
	return set, found
}

func containsVal(l []value.Value, v value.Value) bool {
	for _, x := range l {
		if value.Equal(x, v) && x.Type() == v.Type() {
			return true
		}
	}
	return false
}

func (p *prover) equals(c value.Constraint, v value.Value) bool {
	set, ok := p.pinned(c)
	if !ok || len(set) == 0 {
		return false
	}
	for _, s := range set {
		if !value.Equal(s, v) {
			return false
		}
	}
	return true
}

func (p *prover) notEquals(c value.Constraint, v value.Value) bool {
	if set, ok := p.pinned(c); ok {
		for _, s := range set {
			if value.Equal(s, v) {
				return false
			}
		}
		return true
	}
	for _, f := range p.byField[fieldKey(c)] {
		switch f.Op {
		case "!=":
			if value.Equal(f.Value, v) {
				return true
			}
		case "not-in":
			if l, ok := f.Value.(value.List); ok && containsVal(l, v) {
				return true
			}
		}
	}
	// A range that excludes v also guarantees inequality.
	return p.ordered(c, "<", v) || p.ordered(c, ">", v)
}

func (p *prover) in(c value.Constraint, coll value.Value) bool {
	var l []value.Value
	switch coll := coll.(type) {
	case value.List:
		l = coll
	case value.Set:
		l = coll
	default:
		return false
	}
	set, ok := p.pinned(c)
	if !ok || len(set) == 0 {
		return false
	}
	for _, s := range set {
		if !containsVal(l, s) {
			return false
		}
	}
	return true
}

func (p *prover) contains(c value.Constraint, v value.Value) bool {
	for _, f := range p.byField[fieldKey(c)] {
		switch f.Op {
		case "array-contains":
			if value.Equal(f.Value, v) {
				return true
			}
		case "array-contains-any":
			if l, ok := f.Value.(value.List); ok && len(l) == 1 && value.Equal(l[0], v) {
				return true
			}
		}
	}
	return false
}

// bound is one side of the range the filters allow.
type bound struct {
	v         value.Value
	inclusive bool
}

// ordered decides f op v for op in < <= > >= from the field's filters:
// Firestore range filters only match values of the filter's own type, so a
// bound also pins the type.
func (p *prover) ordered(c value.Constraint, op string, v value.Value) bool {
	var lo, hi *bound
	tighten := func(b **bound, nb bound, upper bool) {
		if *b == nil {
			*b = &nb
			return
		}
		cmp, ok := cmpVals(nb.v, (*b).v)
		if !ok {
			return
		}
		if (upper && (cmp < 0 || cmp == 0 && !nb.inclusive)) || (!upper && (cmp > 0 || cmp == 0 && !nb.inclusive)) {
			*b = &nb
		}
	}
	if set, ok := p.pinned(c); ok && len(set) > 0 {
		// A pinned field lies between its smallest and largest value.
		for _, s := range set {
			tighten(&lo, bound{s, true}, true)
			tighten(&hi, bound{s, true}, false)
		}
	}
	for _, f := range p.byField[fieldKey(c)] {
		switch f.Op {
		case "<":
			tighten(&hi, bound{f.Value, false}, true)
		case "<=":
			tighten(&hi, bound{f.Value, true}, true)
		case ">":
			tighten(&lo, bound{f.Value, false}, false)
		case ">=":
			tighten(&lo, bound{f.Value, true}, false)
		}
	}
	switch op {
	case "<", "<=":
		if hi == nil {
			return false
		}
		cmp, ok := cmpVals(hi.v, v)
		if !ok {
			return false
		}
		if op == "<" {
			return cmp < 0 || cmp == 0 && !hi.inclusive
		}
		return cmp <= 0
	case ">", ">=":
		if lo == nil {
			return false
		}
		cmp, ok := cmpVals(lo.v, v)
		if !ok {
			return false
		}
		if op == ">" {
			return cmp > 0 || cmp == 0 && !lo.inclusive
		}
		return cmp >= 0
	}
	return false
}

func cmpVals(a, b value.Value) (int, bool) {
	if v, ok := value.Compare(a, b, "<").(value.Bool); ok && bool(v) {
		return -1, true
	}
	if v, ok := value.Compare(a, b, ">").(value.Bool); ok && bool(v) {
		return 1, true
	}
	if v, ok := value.Compare(a, b, "<=").(value.Bool); ok && bool(v) {
		return 0, true
	}
	return 0, false
}

// is decides `f is type`: true when the filters pin the field to values of
// that type (an in filter).
func (p *prover) is(c value.Constraint, typ string) bool {
	if set, ok := p.pinned(c); ok && len(set) > 0 {
		for _, s := range set {
			if !value.Is(s, typ) {
				return false
			}
		}
		return true
	}
	// Range filters imply a type in Firestore, but production does not
	// use that: `x is number` is false for a query on x > 18.
	return false
}
