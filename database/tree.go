package database

import "maps"

// getAt returns the stored value at keys under root, or nil. A trailing
// ".priority" key reads the priority.
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

// setAt returns a new root with v stored at keys, copying the maps along
// the path and nothing else, so every earlier root stays valid. Setting
// null prunes ancestors that become empty; setting below a leaf turns the
// leaf into a node (keeping its priority), as production does.
func setAt(root any, keys []string, v any) any {
	if len(keys) == 0 {
		return v
	}
	if keys[0] == ".priority" && len(keys) == 1 {
		return setPriority(root, v)
	}
	var m map[string]any
	if cur, ok := isNode(root); ok {
		m = maps.Clone(cur)
	} else {
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

// setPriority returns v with its priority replaced; an absent value has
// no priority to set.
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
