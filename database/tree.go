package database

import "maps"

// The live tree of a namespace is mutated in place under the namespace's
// write lock, so a write costs the size of what it writes, not of the
// nodes it passes through (a child write into a 10,000-child collection
// does not copy the collection). The invariant that makes this safe: no
// map reachable from a namespace's root is referenced from outside the
// tree. Every value that leaves the lock — read results, pushes, window
// caches, events, errors — is a clone, or a subtree a write detached
// from the tree (nothing reaches it any more, so nothing mutates it).

// getAt returns the stored value at keys under root, or nil. A trailing
// ".priority" key reads the priority. The result is live: clone it
// before it leaves the namespace's lock.
func getAt(root any, keys []string) any {
	v := root
	for i, k := range keys {
		if k == ".priority" && i == len(keys)-1 {
			return priorityOf(v)
		}
		m, ok := isNode(v)
		if !ok {
			return nil
		}
		v = m[k]
		if v == nil {
			return nil
		}
	}
	return v
}

// setAt stores v at keys under root in place and returns the new root
// (a different value only when the root itself changes shape). The nodes
// along the path are mutated; the value replaced at keys is detached.
// Setting null prunes ancestors that become empty, and below a leaf does
// nothing; setting a value below a leaf turns the leaf into a node
// (keeping its priority), as production does.
// v must be owned by the tree from now on (a fresh normalized value).
func setAt(root any, keys []string, v any) any {
	if len(keys) == 0 {
		return v
	}
	if keys[0] == ".priority" && len(keys) == 1 {
		return setPriority(root, v)
	}
	m, ok := isNode(root)
	if !ok && v == nil {
		// Removing below a leaf (or nothing) leaves it as it is, as
		// production's and the SDKs' trees do (LeafNode.updateChild).
		return root
	}
	if !ok {
		m = map[string]any{}
		if p := priorityOf(root); p != nil && root != nil {
			m[".priority"] = p
		}
	}
	child := setAt(m[keys[0]], keys[1:], v)
	if child == nil {
		delete(m, keys[0])
	} else {
		m[keys[0]] = child
	}
	if numChildren(m) == 0 {
		return nil
	}
	return m
}

// setPriority returns v with its priority replaced, sharing v's children;
// an absent value has no priority to set.
func setPriority(v any, p any) any {
	if v == nil {
		return nil
	}
	if m, ok := isNode(v); ok {
		out := maps.Clone(m)
		if p == nil {
			delete(out, ".priority")
		} else {
			out[".priority"] = p
		}
		return out
	}
	return withPriority(leafOf(v), p)
}

// clone is a deep copy of a stored value's maps (leaves are immutable
// and shared): what a reader takes out of the live tree.
func clone(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, c := range m {
		out[k] = clone(c)
	}
	return out
}

// nodeShape records, for each prefix keys[:i] of a location's keys,
// whether it is a node: bit i (so no slice per write; a prefix past the
// 64th reads as no node, which persist takes for a changed shape and so
// rewrites below it, correct at any depth).
type nodeShape uint64

// node reports whether keys[:i] was a node.
func (s nodeShape) node(i int) bool { return i < 64 && s&(1<<i) != 0 }

// shapeAlong reports, for each prefix keys[:i] (i < len(keys)), whether
// the value there is a node: what persistence compares after a write to
// find the shallowest location whose shape changed.
func shapeAlong(root any, keys []string) nodeShape {
	var out nodeShape
	v := root
	for i, k := range keys {
		m, ok := isNode(v)
		if !ok || i >= 64 {
			break
		}
		out |= 1 << i
		v = m[k]
	}
	return out
}
