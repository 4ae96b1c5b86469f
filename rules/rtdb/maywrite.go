package rtdb

import (
	"strings"

	"github.com/pyric/pyric/rules/rtdb/expr"
)

// MayWrite reports whether some caller, with some data, could be allowed
// to write at path (a set, an update or a delete of it): false only when
// no .write rule on the way to path or anywhere below it can be anything
// but false. A server can then refuse a write before reading its body —
// the answer no rule evaluation could change. Rules that do not compile
// deny, as in evaluation.
func (rs *Ruleset) MayWrite(path string) bool {
	if rs == nil || rs.root == nil {
		return false
	}
	var keys []string
	for _, k := range strings.Split(path, "/") {
		if k != "" {
			keys = append(keys, k)
		}
	}
	level := []*node{rs.root}
	for _, k := range keys {
		var next []*node
		for _, n := range level {
			if canGrant(n.write) {
				return true
			}
			if c := n.children[k]; c != nil {
				next = append(next, c)
			}
			if n.wildcard != nil {
				next = append(next, n.wildcard)
			}
		}
		if len(next) == 0 {
			return false // below the rules tree: only ancestors' rules apply
		}
		level = next
	}
	for _, n := range level {
		if subtreeGrants(n) {
			return true
		}
	}
	return false
}

// canGrant reports whether a .write rule could ever evaluate to true.
func canGrant(r *rule) bool {
	if r == nil || r.ast == nil {
		return false
	}
	if lit, ok := r.ast.(*expr.Literal); ok && lit.Kind == expr.LitBool && !lit.Bool {
		return false
	}
	return true
}

func subtreeGrants(n *node) bool {
	if canGrant(n.write) {
		return true
	}
	for _, c := range n.children {
		if subtreeGrants(c) {
			return true
		}
	}
	return n.wildcard != nil && subtreeGrants(n.wildcard)
}
