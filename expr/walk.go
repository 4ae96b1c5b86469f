package expr

import (
	"sort"
	"strconv"
)

// Key is the only key of a wrapper object: {"$expr": "..."}.
const Key = "$expr"

// Resolve walks a write payload and replaces every {"$expr": src} wrapper
// by the value src evaluates to in env. Maps are recursed into, arrays keep
// their length and order, leaves are unchanged, and results are not walked
// again (a $expr resolving to a map holding "$expr" is data). A wrapper
// with other keys or a non-string expression, and any failing expression,
// is a *WalkError naming the payload path; the input is never modified.
func Resolve(data any, env Env) (any, error) {
	return resolve(data, env, "")
}

// HasExpr reports whether data holds any $expr key.
func HasExpr(data any) bool {
	switch v := data.(type) {
	case map[string]any:
		if _, ok := v[Key]; ok {
			return true
		}
		for _, x := range v {
			if HasExpr(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if HasExpr(x) {
				return true
			}
		}
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func resolve(data any, env Env, path string) (any, error) {
	switch v := data.(type) {
	case map[string]any:
		if src, ok := v[Key]; ok {
			where := path
			if where == "" {
				where = "(payload)"
			}
			if len(v) != 1 {
				keys := make([]string, 0, len(v))
				for k := range v {
					if k != Key {
						keys = append(keys, k)
					}
				}
				sort.Strings(keys)
				return nil, &WalkError{Path: where, Msg: "a $expr wrapper must have no other keys (found " + strconv.Quote(keys[0]) + ")"}
			}
			s, ok := src.(string)
			if !ok {
				return nil, &WalkError{Path: where, Msg: "the value of $expr must be a string, not a " + typeName(norm(src))}
			}
			out, err := Eval(s, env)
			if err != nil {
				return nil, &WalkError{Path: where, Err: err}
			}
			return out, nil
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			r, err := resolve(x, env, join(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			r, err := resolve(x, env, join(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return data, nil
}
