package trigger

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pyric/pyric/event"
)

// ErrAncestorWrite is Deliveries' error for a Realtime Database write
// below the location a function watches: the event has the written
// location's values only, not the watched one's.
var ErrAncestorWrite = errors.New("trigger: write below a watched location is not delivered")

// databaseLocation splits a Realtime Database event's path ("/a/b" in
// the default instance, "ns:/a/b" in another) into instance and keys.
func databaseLocation(ev event.Event, env Env) (instance string, keys []string) {
	p := ev.Path
	instance = env.DatabaseInstance
	if ev.Commit != nil && ev.Commit.Database != "" {
		instance = ev.Commit.Database
	}
	if !strings.HasPrefix(p, "/") {
		if i := strings.IndexByte(p, ':'); i > 0 {
			instance, p = p[:i], p[i+1:]
		}
	}
	return instance, splitPath(p)
}

// databaseFilter returns f's ref pattern and whether it watches instance
// (with the params the instance pattern captured).
func databaseFilter(f Function, env Env, instance string) (Pattern, map[string]string, bool) {
	if kindOf(f.EventType) == kindDatabaseV2 {
		params := map[string]string{}
		if want, ok := f.EventFilters["instance"]; ok {
			if want != instance {
				return Pattern{}, nil, false
			}
		} else if pat, ok := f.EventFilterPathPatterns["instance"]; ok {
			ip, ok := matchInstance(pat, instance)
			if !ok {
				return Pattern{}, nil, false
			}
			params = ip
		}
		ref, ok := f.EventFilterPathPatterns["ref"]
		if !ok {
			ref, ok = f.EventFilters["ref"]
		}
		if !ok {
			return Pattern{}, nil, false
		}
		return compiled(ref), params, true
	}
	// v1: projects/_/instances/NS/refs/PATH
	res := splitPath(f.EventFilters["resource"])
	if len(res) < 5 || res[0] != "projects" || res[2] != "instances" || res[4] != "refs" || res[3] != instance {
		return Pattern{}, nil, false
	}
	return compiled(strings.Join(res[5:], "/")), map[string]string{}, true
}

// matchInstance matches an instance name against an instance pattern:
// "*", "{name}", or a literal that may hold "*" globs ("my-app-*").
func matchInstance(pat, instance string) (map[string]string, bool) {
	p := compiled(pat)
	if len(p.segs) == 1 && !p.segs[0].wild {
		ok, _ := path.Match(p.segs[0].lit, instance)
		return map[string]string{}, ok
	}
	return p.Match([]string{instance})
}

// dbChange is a change at one matched location.
type dbChange struct {
	keys          []string
	params        map[string]string
	before, after any
}

// databaseChanges finds the locations matching pat that a write at keys
// (before → after) changed: the written location itself, or every
// newly changed descendant a wildcard reaches (an ancestor set or one
// path of a multi-location update creating several matches), each with
// its values projected to it.
func databaseChanges(pat Pattern, keys []string, before, after any) []dbChange {
	var out []dbChange
	var walk func(at []string, b, a any)
	walk = func(at []string, b, a any) {
		if reflect.DeepEqual(b, a) {
			return
		}
		if params, ok := pat.Match(at); ok {
			out = append(out, dbChange{keys: slices.Clone(at), params: params, before: b, after: a})
			return
		}
		if !pat.prefixOf(at) {
			return
		}
		bm, am := children(b), children(a)
		ks := slices.Collect(maps.Keys(bm))
		for k := range am {
			if _, ok := bm[k]; !ok {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		for _, k := range ks {
			walk(append(at, k), bm[k], am[k])
		}
	}
	walk(slices.Clip(keys), before, after)
	return out
}

// ancestorChange is the change at the location above a write that f
// watches (the shallowest one its pattern matches), from the enclosing
// values the event's scope carries: nil when the pattern matches no
// location above the write, when the location did not change, or when
// an earlier write of the same commit under it delivers it (one delivery
// per location per commit, as production).
func ancestorChange(f Function, pat Pattern, keys []string, sc *event.Scope) (*dbChange, error) {
	for n := 0; n < len(keys); n++ {
		params, ok := pat.Match(keys[:n])
		if !ok {
			continue
		}
		var scKeys []string
		if sc != nil {
			scKeys = splitPath(sc.Path)
		}
		if sc == nil || len(scKeys) > n || !slices.Equal(scKeys, keys[:len(scKeys)]) {
			return nil, fmt.Errorf("%w: %s watches /%s, above the write at /%s", ErrAncestorWrite, f.ID, strings.Join(keys[:n], "/"), strings.Join(keys, "/"))
		}
		for _, w := range sc.Writes {
			wk := splitPath(w)
			if len(wk) >= n && slices.Equal(wk[:n], keys[:n]) {
				if !slices.Equal(wk, keys) {
					return nil, nil // the first write under the location delivers it
				}
				break
			}
		}
		rel := keys[len(scKeys):n]
		b, a := childAt(sc.Before, rel), childAt(sc.After, rel)
		if reflect.DeepEqual(b, a) {
			return nil, nil
		}
		return &dbChange{keys: slices.Clone(keys[:n]), params: params, before: b, after: a}, nil
	}
	return nil, nil
}

// children are a value's children by key: an object's, or an array's
// (as the Realtime Database shows array-like objects) by index.
func children(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case []any:
		m := make(map[string]any, len(x))
		for i, c := range x {
			if c != nil {
				m[strconv.Itoa(i)] = c
			}
		}
		return m
	}
	return nil
}

func childAt(v any, keys []string) any {
	for _, k := range keys {
		v = children(v)[k]
	}
	return v
}

// delta is what firebase-functions merges into data to get the value
// after (applyChange): the new value, with null for every key of an
// object that the new object no longer has.
func delta(before, after any) any {
	am, aok := after.(map[string]any)
	bm, bok := before.(map[string]any)
	if !aok || !bok {
		return after
	}
	out := make(map[string]any, len(am))
	for k, v := range am {
		out[k] = delta(bm[k], v)
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			out[k] = nil
		}
	}
	return out
}

func databaseDeliveries(f Function, ev event.Event, env Env) ([]Delivery, error) {
	c := ev.Commit
	if ev.Service != "database" || ev.Kind != event.KindCommit || c == nil {
		return nil, nil
	}
	instance, keys := databaseLocation(ev, env)
	pat, instParams, ok := databaseFilter(f, env, instance)
	if !ok {
		return nil, nil
	}
	act := action(f.EventType)
	t := eventTime(ev)
	var out []Delivery
	changes := databaseChanges(pat, keys, c.Before, c.After)
	if len(changes) == 0 {
		ch, err := ancestorChange(f, pat, keys, c.Scope)
		if err != nil {
			return nil, err
		}
		if ch != nil {
			changes = append(changes, *ch)
		}
	}
	for _, ch := range changes {
		o := opUpdate
		switch {
		case ch.before == nil:
			o = opCreate
		case ch.after == nil:
			o = opDelete
		}
		if !fires(act, o) {
			continue
		}
		params := ch.params
		for k, v := range instParams {
			params[k] = v
		}
		ref := strings.Join(ch.keys, "/")
		data := map[string]any{"data": ch.before, "delta": delta(ch.before, ch.after)}
		var body map[string]any
		if kindOf(f.EventType) == kindDatabaseV2 {
			body = cloudEvent(env, f.EventType, "//firebasedatabase.googleapis.com/projects/_/locations/"+f.Region+"/instances/"+instance, "refs/"+ref, t)
			body["instance"], body["ref"], body["location"], body["firebasedatabasehost"] = instance, ref, f.Region, env.dbHost()
			if at, aid := authContext(ev.Identity, ""); at != "" {
				body["authtype"] = at
				if aid != "" {
					body["authid"] = aid
				}
			}
			body["data"] = data
		} else {
			ctx := legacyContext(env, f, "projects/_/instances/"+instance+"/refs/"+ref, t, params)
			switch ev.Identity.Lens {
			case event.LensAdmin:
				ctx["auth"] = map[string]any{"admin": true}
			case event.LensUser:
				tok := ev.Identity.Token
				if tok == nil {
					tok = map[string]any{}
				}
				ctx["auth"] = map[string]any{"admin": false, "variable": map[string]any{"uid": ev.Identity.UID, "token": tok}}
			}
			body = map[string]any{"data": data, "context": ctx}
		}
		p, err := marshal(body)
		if err != nil {
			return nil, err
		}
		out = append(out, Delivery{Function: f.ID, Params: params, Payload: p})
	}
	return out, nil
}
