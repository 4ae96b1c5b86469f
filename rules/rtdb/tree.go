package rtdb

import (
	"encoding/json"
	"iter"
	"math"
	"sort"
	"strconv"
	"strings"
)

// This file reads database trees as they come from encoding/json without
// copying or normalizing them first, so evaluating a rule against a large
// database costs only the paths the rule touches.
//
// A tree is nil, bool, string, a number (float64, json.Number or any Go
// integer or float type), map[string]any, or []any (RTDB stores arrays as
// objects keyed "0", "1", …). As in RTDB, null children and empty objects
// do not exist. A map may carry ".priority" and, for a leaf with a
// priority, ".value" (the database export format).
//
// The post-write view of a write is an *overlay over the pre-write tree.

// overlay is a tree node whose children are partly replaced: over.get(k) is
// either replaced{v} (the child k becomes v) or a deeper *overlay.
type overlay struct {
	base any
	over children
}

// children are an overlay's changed children by key: a short list while
// there are few (a write changes one child per level of its path, and a
// map per level was most of a small write's rules evaluation), a map
// past maxListed.
type children struct {
	list []child
	m    map[string]any
}

type child struct {
	k string
	v any
}

const maxListed = 8

func (c *children) get(k string) (any, bool) {
	if c.m != nil {
		v, ok := c.m[k]
		return v, ok
	}
	for i := range c.list {
		if c.list[i].k == k {
			return c.list[i].v, true
		}
	}
	return nil, false
}

func (c *children) set(k string, v any) {
	if c.m != nil {
		c.m[k] = v
		return
	}
	for i := range c.list {
		if c.list[i].k == k {
			c.list[i].v = v
			return
		}
	}
	if len(c.list) < maxListed {
		c.list = append(c.list, child{k, v})
		return
	}
	c.m = make(map[string]any, 2*maxListed)
	for _, e := range c.list {
		c.m[e.k] = e.v
	}
	c.m[k] = v
	c.list = nil
}

// all yields every changed child, in no particular order.
func (c *children) all() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		if c.m != nil {
			for k, v := range c.m {
				if !yield(k, v) {
					return
				}
			}
			return
		}
		for _, e := range c.list {
			if !yield(e.k, e.v) {
				return
			}
		}
	}
}

type replaced struct{ v any }

// newOverlay returns base with every (path, value) write applied, in order.
func newOverlay(base any, writes []write) any {
	if len(writes) == 0 {
		return base
	}
	root := &overlay{base: base}
	var result any = root
	for _, w := range writes {
		if len(w.path) == 0 {
			// A write at the root replaces everything written so far.
			root = &overlay{base: w.value}
			result = root
			continue
		}
		o := root
		for i, k := range w.path {
			if i == len(w.path)-1 {
				o.over.set(k, replaced{w.value})
				break
			}
			cur, _ := o.over.get(k)
			switch next := cur.(type) {
			case *overlay:
				o = next
			case replaced:
				n := &overlay{base: next.v}
				o.over.set(k, n)
				o = n
			default:
				n := &overlay{base: childOf(o.base, k)}
				o.over.set(k, n)
				o = n
			}
		}
	}
	return result
}

// write is one location written by a request.
type write struct {
	path  []string
	value any
}

// childOf returns the child key of v, or nil.
func childOf(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		return v[key]
	case []any:
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i >= len(v) || strconv.Itoa(i) != key {
			return nil
		}
		return v[i]
	case *overlay:
		if o, ok := v.over.get(key); ok {
			if r, ok := o.(replaced); ok {
				return r.v
			}
			return o
		}
		return childOf(v.base, key)
	}
	return nil
}

// lookup walks path from v.
func lookup(v any, path []string) any {
	for _, k := range path {
		if v == nil {
			return nil
		}
		v = childOf(v, k)
	}
	return v
}

// exists reports whether v is a present value: not null and not an object
// without present children.
func exists(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case map[string]any:
		if lv, ok := v[".value"]; ok {
			return exists(lv)
		}
		for k, c := range v {
			if !isMetaKey(k) && exists(c) {
				return true
			}
		}
		return false
	case []any:
		for _, c := range v {
			if exists(c) {
				return true
			}
		}
		return false
	case *overlay:
		for _, o := range v.over.all() {
			if r, ok := o.(replaced); ok {
				if exists(r.v) {
					return true
				}
			} else if exists(o) {
				return true
			}
		}
		if baseHasChildOutside(v.base, &v.over) {
			return true
		}
		// Deleting a child of a leaf leaves the leaf as it was.
		return isLeaf(v.base)
	case replaced:
		return exists(v.v)
	}
	return true
}

// baseHasChildOutside reports whether base has a present child whose key
// is not in over, stopping at the first one.
func baseHasChildOutside(base any, over *children) bool {
	switch b := base.(type) {
	case map[string]any:
		if _, ok := b[".value"]; ok {
			return false
		}
		for k, c := range b {
			if _, ok := over.get(k); !ok && !isMetaKey(k) && exists(c) {
				return true
			}
		}
	case []any:
		for i, c := range b {
			if _, ok := over.get(strconv.Itoa(i)); !ok && exists(c) {
				return true
			}
		}
	case *overlay:
		for _, k := range childKeys(b) {
			if _, ok := over.get(k); !ok {
				return true
			}
		}
	}
	return false
}

// isLeaf reports whether v is a present primitive (possibly with a
// priority), as opposed to null or a node with children.
func isLeaf(v any) bool {
	switch t := v.(type) {
	case nil, []any, *overlay:
		return false
	case map[string]any:
		lv, ok := t[".value"]
		return ok && exists(lv)
	}
	return true
}

// overlayEmpty reports whether o has no present child.
func overlayEmpty(o *overlay) bool {
	for _, c := range o.over.all() {
		if r, ok := c.(replaced); ok {
			if exists(r.v) {
				return false
			}
		} else if exists(c) {
			return false
		}
	}
	return !baseHasChildOutside(o.base, &o.over)
}

func isMetaKey(k string) bool { return strings.HasPrefix(k, ".") }

// hasChildren reports whether v has at least one present child.
func hasChildren(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[".value"]; ok {
			return false
		}
		return exists(v)
	case *overlay:
		return !overlayEmpty(v)
	case []any:
		return exists(v)
	}
	return false
}

// childKeys lists the present children of v, sorted.
func childKeys(v any) []string {
	var keys []string
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[".value"]; ok {
			return nil
		}
		for k, c := range v {
			if !isMetaKey(k) && exists(c) {
				keys = append(keys, k)
			}
		}
	case []any:
		for i, c := range v {
			if exists(c) {
				keys = append(keys, strconv.Itoa(i))
			}
		}
	case *overlay:
		seen := map[string]bool{}
		for _, k := range childKeys(v.base) {
			seen[k] = true
		}
		for k := range v.over.all() {
			seen[k] = true
		}
		for k := range seen {
			if exists(childOf(v, k)) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// objectValue is what val() returns for a node with children: RTDB returns
// an opaque sentinel rather than the subtree, so rules must use child().
type objectValue struct{}

// leafValue returns the primitive at v for val(): nil, bool, string, a
// float64, or objectValue{} for a node with children. ok is false for a Go
// type that is not JSON data.
func leafValue(v any) (any, bool) {
	switch t := v.(type) {
	case nil, bool, string:
		return v, true
	case map[string]any:
		if lv, ok := t[".value"]; ok {
			return leafValue(lv)
		}
		if exists(t) {
			return objectValue{}, true
		}
		return nil, true
	case *overlay:
		if overlayEmpty(t) {
			if isLeaf(t.base) {
				return leafValue(t.base)
			}
			return nil, true
		}
		return objectValue{}, true
	case []any:
		if exists(t) {
			return objectValue{}, true
		}
		return nil, true
	}
	if f, ok := toFloat(v); ok {
		return f, true
	}
	return nil, false
}

// priority returns the priority stored at v, or nil.
func priority(v any) any {
	if m, ok := v.(map[string]any); ok {
		if p, ok := m[".priority"]; ok {
			lv, _ := leafValue(p)
			return lv
		}
	}
	if o, ok := v.(*overlay); ok {
		return priority(o.base)
	}
	return nil
}

// toFloat converts any Go or encoding/json number to float64.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// splitPath splits "/a/b" into its keys, ignoring empty segments, and checks
// each key is a legal RTDB key.
func splitPath(p string) ([]string, error) {
	// Sized once: the keys are at most the slashes plus one.
	keys := make([]string, 0, strings.Count(p, "/")+1)
	for p != "" {
		k := p
		if i := strings.IndexByte(p, '/'); i >= 0 {
			k, p = p[:i], p[i+1:]
		} else {
			p = ""
		}
		if k == "" {
			continue
		}
		if err := checkKey(k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return keys, nil
}

// checkKey reports whether k may name a database location: RTDB forbids
// . $ # [ ] / and ASCII control characters in keys.
func checkKey(k string) error {
	if k == "" {
		return errorf(ErrInvalidPath, "empty key")
	}
	if len(k) > 768 {
		return errorf(ErrInvalidPath, "key longer than 768 bytes")
	}
	for _, r := range k {
		switch {
		case r == '.' || r == '$' || r == '#' || r == '[' || r == ']' || r == '/':
			return errorf(ErrInvalidPath, "key %q contains %q, which RTDB keys cannot contain", k, r)
		case r < 0x20 || r == 0x7f:
			return errorf(ErrInvalidPath, "key %q contains a control character", k)
		}
	}
	return nil
}

func joinPath(keys []string) string {
	if len(keys) == 0 {
		return "/"
	}
	return "/" + strings.Join(keys, "/")
}
