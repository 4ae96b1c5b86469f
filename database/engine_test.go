package database_test

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

var (
	admin = identity.AdminIdentity()
	alice = identity.NewUser("alice", map[string]any{"sub": "alice", "firebase": map[string]any{"sign_in_provider": "custom"}})
	bob   = identity.NewUser("bob", map[string]any{"sub": "bob"})
	anon  = identity.Anonymous()
)

const ns = "demo-default-rtdb"

var fixedNow = time.UnixMilli(1700000000000)

func newDB(t testing.TB, rules string, bucket service.Bucket) (*database.Database, *event.Bus) {
	t.Helper()
	bus := event.NewBus(event.Options{})
	seq := 0
	d, err := database.New(service.Env{
		Project: "demo", Now: func() time.Time { return fixedNow }, Events: bus, Bucket: bucket,
		NewID: func() string { seq++; return fmt.Sprintf("%020d", seq) },
	}, database.Options{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return d, bus
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := database.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func get(t testing.TB, d *database.Database, who identity.Identity, path string) any {
	t.Helper()
	r, err := d.Get(who, ns, path, nil, false)
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	return r.Value
}

func set(t testing.TB, d *database.Database, who identity.Identity, path, value string) {
	t.Helper()
	if _, err := d.Set(who, ns, path, mustJSON(t, value), database.WriteOptions{}); err != nil {
		t.Fatalf("set %s: %v", path, err)
	}
}

func TestDataModel(t *testing.T) {
	d, _ := newDB(t, "", nil)
	cases := []struct {
		name, path, value, read, plain string
	}{
		{"array stored as object", "arr", `[1,2,3]`, `{"0":1,"1":2,"2":3}`, `[1,2,3]`},
		{"array with holes", "holes", `[1,null,3]`, `{"0":1,"2":3}`, `[1,null,3]`},
		{"sparse keys stay an object", "sparse", `{"0":"a","5":"b"}`, `{"0":"a","5":"b"}`, `{"0":"a","5":"b"}`},
		{"dense integer keys read as array", "dense", `{"0":"a","1":"b","3":"d"}`, `{"0":"a","1":"b","3":"d"}`, `["a","b",null,"d"]`},
		{"nulls pruned", "pr", `{"a":null,"b":{"c":null},"d":1}`, `{"d":1}`, `{"d":1}`},
		{"empty object is null", "empty", `{}`, `null`, `null`},
		{"leaf priority", "lp", `{".value":5,".priority":2}`, `{".priority":2,".value":5}`, `5`},
		{"node priority", "np", `{"a":1,".priority":"x"}`, `{".priority":"x","a":1}`, `{"a":1}`},
		{"timestamp", "ts", `{"at":{".sv":"timestamp"}}`, `{"at":1700000000000}`, `{"at":1700000000000}`},
		{"increment missing starts at 0", "inc", `{"n":{".sv":{"increment":3}}}`, `{"n":3}`, `{"n":3}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set(t, d, admin, c.path, c.value)
			v := get(t, d, admin, c.path)
			if got := jsonOf(v); got != c.read {
				t.Errorf("stored %s, want %s", got, c.read)
			}
			if got := jsonOf(database.Plain(v)); got != c.plain {
				t.Errorf("val() %s, want %s", got, c.plain)
			}
		})
	}
	t.Run("increment adds atomically", func(t *testing.T) {
		set(t, d, admin, "counter", `5`)
		set(t, d, admin, "counter", `{".sv":{"increment":-2}}`)
		if got := jsonOf(get(t, d, admin, "counter")); got != `3` {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("nested null collapses empty ancestors", func(t *testing.T) {
		set(t, d, admin, "deep/a/b/c", `1`)
		set(t, d, admin, "deep/a/b/c", `null`)
		if v := get(t, d, admin, "deep"); v != nil {
			t.Fatalf("deep = %s", jsonOf(v))
		}
	})
	t.Run("primitive root then child write", func(t *testing.T) {
		d, _ := newDB(t, "", nil)
		set(t, d, admin, "", `"hello"`)
		if got := jsonOf(get(t, d, admin, "/")); got != `"hello"` {
			t.Fatal(got)
		}
		set(t, d, admin, "a", `1`)
		if got := jsonOf(get(t, d, admin, "/")); got != `{"a":1}` {
			t.Fatal(got)
		}
	})
	t.Run("setPriority via .priority", func(t *testing.T) {
		set(t, d, admin, "sp", `{"x":1}`)
		set(t, d, admin, "sp/.priority", `7`)
		if got := jsonOf(get(t, d, admin, "sp")); got != `{".priority":7,"x":1}` {
			t.Fatal(got)
		}
		set(t, d, admin, "sp/x/.priority", `"p"`)
		if got := jsonOf(get(t, d, admin, "sp/x")); got != `{".priority":"p",".value":1}` {
			t.Fatal(got)
		}
	})
	t.Run("multi-path update with server values", func(t *testing.T) {
		set(t, d, admin, "items", `{"a":{"n":1},"b":{"n":1}}`)
		err := d.Update(admin, ns, "items", map[string]any{"a/n": 2, "b/n": map[string]any{".sv": map[string]any{"increment": 1}}, "c": map[string]any{"t": map[string]any{".sv": "timestamp"}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(get(t, d, admin, "items")); got != `{"a":{"n":2},"b":{"n":2},"c":{"t":1700000000000}}` {
			t.Fatal(got)
		}
	})
	bad := []struct{ name, path, value string }{
		{"dot in key", "k", `{"a.b":1}`},
		{"dollar in key", "k", `{"$a":1}`},
		{"slash in key", "k", `{"a/b":1}`},
		{"bracket in key", "k", `{"a[":1}`},
		{"control char in key", "k", "{\"a\\u0001\":1}"},
		{"bad server value", "k", `{".sv":"nope"}`},
		{"object priority", "k", `{"a":1,".priority":{"x":1}}`},
		{"value with siblings", "k", `{".value":1,"a":2}`},
	}
	for _, c := range bad {
		t.Run("rejects "+c.name, func(t *testing.T) {
			_, err := d.Set(admin, ns, c.path, mustJSON(t, c.value), database.WriteOptions{})
			if !errors.Is(err, database.ErrInvalidData) {
				t.Fatalf("err = %v, want ErrInvalidData", err)
			}
		})
	}
	for _, p := range []string{"a.b", "a#", "a$", "a[0]", "x]"} {
		if _, err := d.Set(admin, ns, p, 1.0, database.WriteOptions{}); !errors.Is(err, database.ErrInvalidPath) {
			t.Errorf("path %q: err = %v", p, err)
		}
	}
	if _, err := d.Set(admin, ns, "nan", math.NaN(), database.WriteOptions{}); !errors.Is(err, database.ErrInvalidData) {
		t.Errorf("NaN: %v", err)
	}
	if _, err := d.Set(admin, ns, "inf", math.Inf(1), database.WriteOptions{}); !errors.Is(err, database.ErrInvalidData) {
		t.Errorf("Inf: %v", err)
	}
	long := make([]byte, 769)
	for i := range long {
		long[i] = 'a'
	}
	if _, err := d.Set(admin, ns, string(long), 1.0, database.WriteOptions{}); !errors.Is(err, database.ErrInvalidPath) {
		t.Errorf("long key: %v", err)
	}
	deep := strings.Repeat("x/", 30) + "y"
	if _, err := d.Set(admin, ns, deep, map[string]any{"z": 1.0}, database.WriteOptions{}); err != nil {
		t.Errorf("32 levels: %v", err)
	}
	if _, err := d.Set(admin, ns, deep, map[string]any{"z": map[string]any{"w": 1.0}}, database.WriteOptions{}); !errors.Is(err, database.ErrInvalidData) {
		t.Errorf("33 levels: %v", err)
	}
	if err := d.Update(admin, ns, "", map[string]any{"a": 1, "a/b": 2}, ""); !errors.Is(err, database.ErrInvalidData) {
		t.Errorf("overlapping update: %v", err)
	}
}

func TestKeyOrder(t *testing.T) {
	keys := []string{"b", "10", "a", "2", "-1", "1", "001", "2147483648", "A"}
	sort.Slice(keys, func(i, j int) bool { return database.CompareKeys(keys[i], keys[j]) < 0 })
	want := []string{"-1", "1", "001", "2", "10", "2147483648", "A", "a", "b"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("got %v, want %v", keys, want)
	}
	// The edges of an integer key: leading zeros do not count against its
	// ten digits; eleven digits, a lone '-' or a '+' make a string.
	keys = []string{"12345678901", "-", "0000000000005", "+1", "5", "-0", "1234567890", "-2147483648"}
	sort.Slice(keys, func(i, j int) bool { return database.CompareKeys(keys[i], keys[j]) < 0 })
	want = []string{"-2147483648", "-0", "5", "0000000000005", "1234567890", "+1", "-", "12345678901"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("edges: got %v, want %v", keys, want)
	}
	// Keys read back as an array only when all are indexes without
	// leading zeros.
	for in, out := range map[string]string{`{"0":"a","1":"b"}`: `["a","b"]`, `{"0":"a","01":"b"}`: `{"0":"a","01":"b"}`, `{"1":"a","2":"b","3":"c"}`: `[null,"a","b","c"]`} {
		if got := jsonOf(database.Plain(mustJSON(t, in))); got != out {
			t.Errorf("Plain(%s) = %s, want %s", in, got, out)
		}
	}
	vals := []any{"s", 2.0, true, nil, map[string]any{"a": 1}, false, 1.0, "a"}
	sort.SliceStable(vals, func(i, j int) bool { return database.CompareValues(vals[i], vals[j]) < 0 })
	if got := jsonOf(vals); got != `[null,false,true,1,2,"a","s",{"a":1}]` {
		t.Fatal(got)
	}
}

func TestHash(t *testing.T) {
	// Values computed with the JS SDK's algorithm (sha1 of the canonical
	// text, base64).
	cases := []struct {
		v    string
		text string
	}{
		{`1`, "number:3ff0000000000000"},
		{`"foo"`, "string:foo"},
		{`true`, "boolean:true"},
		{`{".value":1,".priority":2}`, "priority:number:4000000000000000:number:3ff0000000000000"},
	}
	for _, c := range cases {
		v, _ := database.Normalize(mustJSON(t, c.v), nil, 0)
		if got, want := database.Hash(v), sha1b64(c.text); got != want {
			t.Errorf("Hash(%s) = %s, want %s", c.v, got, want)
		}
	}
	if database.Hash(nil) != "" {
		t.Error("hash of null must be empty")
	}
	node, _ := database.Normalize(mustJSON(t, `{"b":"x","a":1,"10":true,"2":false}`), nil, 0)
	text := ":2:" + sha1b64("boolean:false") + ":10:" + sha1b64("boolean:true") + ":a:" + sha1b64("number:3ff0000000000000") + ":b:" + sha1b64("string:x")
	if got := database.Hash(node); got != sha1b64(text) {
		t.Errorf("node hash %s, want %s", got, sha1b64(text))
	}
}

func query(t testing.TB, d *database.Database, path string, q database.Query) []string {
	t.Helper()
	r, err := d.Get(admin, ns, path, &q, false)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := r.Value.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Order the window as the index does, for comparison.
	sort.Slice(keys, func(i, j int) bool { return database.CompareKeys(keys[i], keys[j]) < 0 })
	return keys
}

func wire(t testing.TB, s string) database.Query {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	q, err := database.ParseWireQuery(o)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestQueries(t *testing.T) {
	d, _ := newDB(t, "", nil)
	set(t, d, admin, "s", `{
		"a": {"n": 3, ".priority": 2}, "b": {"n": 1, ".priority": 1}, "c": {"n": 2},
		"d": {"n": "x"}, "e": {"m": 1}, "f": {"n": true}, "g": {"n": 1}, "h": {"n": {"deep": 1}}
	}`)
	cases := []struct {
		name, q string
		want    []string
	}{
		{"orderByChild limitToFirst", `{"i":"n","l":3,"vf":"l"}`, []string{"e", "f", "b"}},
		{"orderByChild startAt number", `{"i":"n","sp":1,"sin":true,"l":3,"vf":"l"}`, []string{"b", "c", "g"}},
		{"startAt with key tie-break", `{"i":"n","sp":1,"sn":"c","sin":true}`, []string{"a", "c", "d", "g", "h"}},
		{"startAfter value", `{"i":"n","sp":1,"sn":"[MAX_NAME]","sin":false,"ep":3,"ein":true}`, []string{"a", "c"}},
		{"endBefore value", `{"i":"n","ep":2,"en":"[MIN_NAME]","ein":false,"sp":1,"sin":true}`, []string{"b", "g"}},
		{"equalTo all matches", `{"i":"n","sp":1,"ep":1}`, []string{"b", "g"}},
		{"equalTo no match", `{"i":"n","sp":99,"ep":99}`, []string{}},
		{"limitToLast", `{"i":"n","l":2,"vf":"r"}`, []string{"d", "h"}},
		{"cross-type: strings after numbers", `{"i":"n","sp":"a","sin":true}`, []string{"d", "h"}},
		{"orderByKey range", `{"i":".key","sp":"b","ep":"d"}`, []string{"b", "c", "d"}},
		{"orderByKey startAfter", `{"i":".key","sp":"f","sin":false}`, []string{"g", "h"}},
		{"orderByPriority", `{"l":2,"vf":"r"}`, []string{"a", "b"}},
		{"orderByPriority bounds", `{"sp":1,"ep":1}`, []string{"b"}},
		{"limit larger than result", `{"i":"n","l":100,"vf":"l"}`, []string{"a", "b", "c", "d", "e", "f", "g", "h"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := query(t, d, "s", wire(t, c.q))
			sort.Slice(c.want, func(i, j int) bool { return database.CompareKeys(c.want[i], c.want[j]) < 0 })
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	set(t, d, admin, "v", `{"x": 3, "y": 1, "z": "a", "w": false}`)
	if got := query(t, d, "v", wire(t, `{"i":".value","l":2,"vf":"l"}`)); !reflect.DeepEqual(got, []string{"w", "y"}) {
		t.Fatalf("orderByValue: %v", got)
	}
	if got := query(t, d, "v/x", wire(t, `{"i":".value","l":2,"vf":"l"}`)); len(got) != 0 {
		t.Fatalf("query on a primitive: %v", got)
	}
	if got := query(t, d, "absent", wire(t, `{"i":".value","l":2,"vf":"l"}`)); len(got) != 0 {
		t.Fatalf("query on an absent path: %v", got)
	}
}

// TestIndexAgainstModel runs random writes and queries and compares every
// window with a brute-force sort of the children.
func TestIndexAgainstModel(t *testing.T) {
	d, _ := newDB(t, "", nil)
	rng := rand.New(rand.NewSource(1))
	model := map[string]any{}
	randVal := func() any {
		switch rng.Intn(5) {
		case 0:
			return nil
		case 1:
			return float64(rng.Intn(10))
		case 2:
			return strconv.Itoa(rng.Intn(10))
		case 3:
			return rng.Intn(2) == 0
		}
		return map[string]any{"deep": 1.0}
	}
	for i := 0; i < 400; i++ {
		k := strconv.Itoa(rng.Intn(40))
		if rng.Intn(3) == 0 {
			k = "k" + k
		}
		v := randVal()
		if v == nil {
			delete(model, k)
			set(t, d, admin, "m/"+k, "null")
		} else {
			model[k] = map[string]any{"n": v}
			if _, err := d.Set(admin, ns, "m/"+k+"/n", v, database.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if i%5 != 0 {
			continue
		}
		lim := 1 + rng.Intn(8)
		last := rng.Intn(2) == 0
		start := float64(rng.Intn(10))
		q := database.Query{Index: "n", Start: &database.Bound{Value: start, Inclusive: true}, Limit: lim, FromLast: last}
		got := query(t, d, "m", q)
		// brute force
		type kv struct {
			k string
			v any
		}
		var all []kv
		for mk, mv := range model {
			sv := mv.(map[string]any)["n"]
			if _, obj := sv.(map[string]any); obj {
				sv = struct{}{}
			}
			all = append(all, kv{mk, sv})
		}
		rank := func(v any) any {
			if _, ok := v.(struct{}); ok {
				return map[string]any{"o": 1.0}
			}
			return v
		}
		sort.Slice(all, func(i, j int) bool {
			if c := database.CompareValues(rank(all[i].v), rank(all[j].v)); c != 0 {
				return c < 0
			}
			return database.CompareKeys(all[i].k, all[j].k) < 0
		})
		var win []string
		for _, e := range all {
			if database.CompareValues(rank(e.v), start) >= 0 {
				win = append(win, e.k)
			}
		}
		if len(win) > lim {
			if last {
				win = win[len(win)-lim:]
			} else {
				win = win[:lim]
			}
		}
		sort.Slice(win, func(i, j int) bool { return database.CompareKeys(win[i], win[j]) < 0 })
		if win == nil {
			win = []string{}
		}
		if !reflect.DeepEqual(got, win) {
			t.Fatalf("step %d query %v: got %v, want %v", i, q, got, win)
		}
	}
}

const rules = `{
  "rules": {
    "public": {".read": true, ".write": true, "items": {".indexOn": ["n"]}},
    "users": {
      "$uid": {
        ".read": "auth != null && auth.uid === $uid",
        ".write": "auth != null && auth.uid === $uid",
        "age": {".validate": "newData.isNumber() && newData.val() >= 0"}
      }
    },
    "scores": {".read": true, ".write": true, ".indexOn": ["score"]},
    "counter": {".read": true, ".write": "auth != null"}
  }
}`

func TestRules(t *testing.T) {
	d, bus := newDB(t, rules, nil)
	if _, err := d.Set(alice, ns, "users/alice", map[string]any{"age": 3.0}, database.WriteOptions{}); err != nil {
		t.Fatalf("own write: %v", err)
	}
	_, err := d.Set(bob, ns, "users/alice", map[string]any{"age": 4.0}, database.WriteOptions{})
	var den *database.Denied
	if !errors.As(err, &den) {
		t.Fatalf("other user's write: %v", err)
	}
	if _, err := d.Set(alice, ns, "users/alice/age", -1.0, database.WriteOptions{}); !errors.Is(err, database.ErrPermissionDenied) {
		t.Fatalf(".validate: %v", err)
	}
	if _, err := d.Get(anon, ns, "users/alice", nil, false); !errors.Is(err, database.ErrPermissionDenied) {
		t.Fatalf("anonymous read: %v", err)
	}
	// A multi-path update with one denied path writes nothing.
	err = d.Update(alice, ns, "", map[string]any{"users/alice/name": "A", "users/bob/name": "B"}, "")
	if !errors.Is(err, database.ErrPermissionDenied) {
		t.Fatalf("fan-out: %v", err)
	}
	if got := jsonOf(get(t, d, admin, "users")); got != `{"alice":{"age":3}}` {
		t.Fatalf("after denied update: %s", got)
	}
	// The decision is in an event with its explanation.
	var found bool
	for _, e := range bus.History() {
		if e.Kind == event.KindRequest && e.Request.Verdict == event.Deny && e.Request.Decision != nil &&
			e.Request.Decision.Engine == "database" && e.Request.Rule != nil && e.Request.Rule.MatchPath == "/users/$uid" && e.Path == "/users/alice" {
			found = true
		}
	}
	if !found {
		t.Fatal("no deny event with rules explanation")
	}
	// Index enforcement for REST-style strict queries.
	q := database.Query{Index: "name", Limit: 1}
	if _, err := d.Get(admin, ns, "public", &q, true); !errors.Is(err, database.ErrIndexNotDefined) || err.Error() != `Index not defined, add ".indexOn": "name", for path "/public", to the rules` {
		t.Fatalf("unindexed: %v", err)
	}
	q = database.Query{Index: "score", Limit: 1}
	if _, err := d.Get(admin, ns, "scores", &q, true); err != nil {
		t.Fatalf("indexed: %v", err)
	}
	// No rules: admin only.
	d2, _ := newDB(t, "", nil)
	if _, err := d2.Set(alice, ns, "x", 1.0, database.WriteOptions{}); !errors.Is(err, database.ErrPermissionDenied) {
		t.Fatalf("no rules: %v", err)
	}
	if _, err := d2.Set(admin, ns, "x", 1.0, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Per-namespace rules.
	if err := d2.SetRules("other", `{"rules":{".read":true,".write":true}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Set(anon, "other", "x", 1.0, database.WriteOptions{}); err != nil {
		t.Fatalf("open namespace: %v", err)
	}
	if err := d2.SetRules("other", `{"rules":{".read":"nope("}}`); !errors.Is(err, database.ErrInvalidData) {
		t.Fatalf("bad rules: %v", err)
	}
}

func TestCASContention(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	const clients, each = 2, 20
	var wg sync.WaitGroup
	bar := newBarrier(clients)
	retries := make([]int, clients)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn := d.Connect(ns, alice)
			defer conn.Close()
			for i := 0; i < each; i++ {
				for attempt := 0; ; attempt++ {
					cur, err := conn.Get("counter", nil)
					if err != nil {
						t.Error(err)
						return
					}
					if attempt == 0 {
						// Both clients read before either writes, so every
						// round contends.
						bar.wait()
					}
					n, _ := cur.(float64)
					h := database.Hash(cur)
					err = conn.Put("counter", n+1, &h)
					if err == nil {
						break
					}
					if !errors.Is(err, database.ErrStale) {
						t.Error(err)
						return
					}
					retries[c]++
				}
			}
		}(c)
	}
	wg.Wait()
	if got := get(t, d, admin, "counter"); got != float64(clients*each) {
		t.Fatalf("counter = %v, want %d", got, clients*each)
	}
	t.Logf("retries per client: %v", retries)
	if retries[0]+retries[1] < each {
		t.Fatalf("only %v retries: the clients did not contend", retries)
	}
	// ETag compare-and-set.
	r, _ := d.GetWith(admin, ns, "counter", nil, database.ReadOptions{ETag: true})
	if _, err := d.Set(admin, ns, "counter", 0.0, database.WriteOptions{IfMatch: "wrong"}); !errors.Is(err, database.ErrStale) {
		t.Fatalf("bad etag: %v", err)
	} else {
		var st *database.Stale
		errors.As(err, &st)
		if st.ETag != r.ETag() || st.Current != float64(40) {
			t.Fatalf("stale carries %v %v", st.Current, st.ETag)
		}
	}
	if _, err := d.Set(admin, ns, "counter", 0.0, database.WriteOptions{IfMatch: r.ETag()}); err != nil {
		t.Fatal(err)
	}
}

// collector drains a connection's pushes.
func drain(t testing.TB, c *database.Conn) []database.Push {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var out []database.Push
	for {
		items, err := c.Next(ctx)
		if err != nil {
			return out
		}
		for _, it := range items {
			if p, ok := it.(database.Push); ok {
				out = append(out, p)
			}
		}
	}
}

func pushText(ps []database.Push) []string {
	var s []string
	for _, p := range ps {
		kind := "d"
		if p.Merge {
			kind = "m"
		}
		if p.Revoked {
			kind = "c"
		}
		s = append(s, fmt.Sprintf("%s %s %s t%d", kind, p.Path, jsonOf(p.Data), p.Tag))
	}
	return s
}

func TestListeners(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	set(t, d, admin, "public/items", `{"a":{"n":1},"b":{"n":2}}`)
	c := d.Connect(ns, alice)
	defer c.Close()
	if _, err := c.Listen("public/items", database.Query{}, 0, ""); err != nil {
		t.Fatal(err)
	}
	want := func(step string, w ...string) {
		t.Helper()
		got := pushText(drain(t, c))
		if len(got) == 0 && len(w) == 0 {
			return
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("%s: got %q, want %q", step, got, w)
		}
	}
	want("initial", `d public/items {"a":{"n":1},"b":{"n":2}} t0`)
	set(t, d, admin, "public/items/a/n", `5`)
	want("child write", `d public/items/a/n 5 t0`)
	set(t, d, admin, "public/items/a/n", `5`)
	want("no-change rewrite")
	set(t, d, admin, "public/other", `1`)
	want("sibling write")
	if err := d.Update(admin, ns, "public/items", map[string]any{"a/n": 6, "c": map[string]any{"n": 0}}, ""); err != nil {
		t.Fatal(err)
	}
	want("update", `m public/items {"a/n":6,"c":{"n":0}} t0`)
	if err := d.Update(admin, ns, "public", map[string]any{"items/a/n": 7, "items/b/n": 8}, ""); err != nil {
		t.Fatal(err)
	}
	want("update above the listener", `m public/items {"a/n":7,"b/n":8} t0`)
	set(t, d, admin, "public", `{"items":{"z":1}}`)
	want("ancestor write", `d public/items {"z":1} t0`)

	// A windowed query (indexed): only members, moves when displaced.
	set(t, d, admin, "public/items", `{"a":{"n":1},"b":{"n":2},"c":{"n":3}}`)
	drain(t, c)
	q := wire(t, `{"i":"n","l":2,"vf":"l"}`)
	warn, err := c.Listen("public/items", q, 7, "")
	if err != nil || len(warn) != 0 {
		t.Fatalf("listen: %v %v", warn, err)
	}
	want("query initial", `d public/items {"a":{"n":1},"b":{"n":2}} t7`)
	if err := c.Unlisten("public/items", database.Query{}); err != nil {
		t.Fatal(err)
	}
	set(t, d, admin, "public/items/c/n", `4`)
	want("write outside window")
	set(t, d, admin, "public/items/c/n", `0`)
	want("displacing member", `m public/items {"b":null,"c":{"n":0}} t7`)

	// Denied listen; revocation when rules change.
	if _, err := c.Listen("users/bob", database.Query{}, 0, ""); !errors.Is(err, database.ErrPermissionDenied) {
		t.Fatalf("denied listen: %v", err)
	}
	if _, err := c.Listen("users/alice", database.Query{}, 0, ""); err != nil {
		t.Fatal(err)
	}
	drain(t, c)
	if err := d.SetRules(ns, `{"rules":{"public":{".read":true}}}`); err != nil {
		t.Fatal(err)
	}
	want("revoked", `c users/alice null t0`)
}

// TestUnindexedQuery: production answers a listen on a query the rules
// do not index with the "no_index" warning and the whole location, for
// the SDK to filter, and rejects a get of it when it filters (limit or
// range); ordering alone, and orderByKey always, need no index.
func TestUnindexedQuery(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	set(t, d, admin, "public/other", `{"a":{"n":3},"b":{"n":1},"c":{"n":2}}`)
	c := d.Connect(ns, alice)
	defer c.Close()
	q := wire(t, `{"i":"n","l":1,"vf":"l"}`)
	warn, err := c.Listen("public/other", q, 3, "")
	if err != nil || !reflect.DeepEqual(warn, []string{"no_index"}) {
		t.Fatalf("listen: %v %v", warn, err)
	}
	if got := pushText(drain(t, c)); !reflect.DeepEqual(got, []string{`d public/other {"a":{"n":3},"b":{"n":1},"c":{"n":2}} t3`}) {
		t.Fatalf("unindexed listen sends %q, want the whole location", got)
	}
	set(t, d, admin, "public/other/a/n", `0`)
	if got := pushText(drain(t, c)); !reflect.DeepEqual(got, []string{`m public/other {"a":{"n":0}} t3`}) {
		t.Fatalf("unindexed listen update %q, want the changed child whole", got)
	}
	want := `Index not defined, add ".indexOn": "n", for path "/public/other", to the rules`
	if _, err := c.Get("public/other", &q); !errors.Is(err, database.ErrIndexNotDefined) || err.Error() != want {
		t.Fatalf("get of an unindexed limit query: %v, want %q", err, want)
	}
	rng := wire(t, `{"i":"n","sp":1}`)
	if _, err := c.Get("public/other", &rng); !errors.Is(err, database.ErrIndexNotDefined) {
		t.Fatalf("get of an unindexed range query: %v", err)
	}
	for _, ok := range []string{`{"i":"n"}`, `{"i":".key","l":1,"vf":"l"}`} {
		oq := wire(t, ok)
		if _, err := c.Get("public/other", &oq); err != nil {
			t.Fatalf("get %s: %v", ok, err)
		}
	}
}

func TestOnDisconnect(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	c := d.Connect(ns, alice)
	if err := c.OnDisconnectSet("users/alice/status", "offline"); err != nil {
		t.Fatal(err)
	}
	if err := c.OnDisconnectSet("users/bob/status", "offline"); !errors.Is(err, database.ErrPermissionDenied) {
		t.Fatalf("denied registration: %v", err)
	}
	if err := c.OnDisconnectMerge("users/alice", map[string]any{"seen": map[string]any{".sv": "timestamp"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.OnDisconnectSet("users/alice/tmp", "x"); err != nil {
		t.Fatal(err)
	}
	if err := c.OnDisconnectCancel("users/alice/tmp"); err != nil {
		t.Fatal(err)
	}
	if v := get(t, d, admin, "users"); v != nil {
		t.Fatalf("registration wrote %s", jsonOf(v))
	}
	c.Close()
	if got := jsonOf(get(t, d, admin, "users")); got != `{"alice":{"seen":1700000000000,"status":"offline"}}` {
		t.Fatal(got)
	}
}

func TestPersistenceAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	st, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := newDB(t, "", st.Bucket("database"))
	set(t, d, admin, "a", `{"b":{"c":1,".priority":3},"arr":[1,2],"leaf":{".value":"x",".priority":"p"}}`)
	set(t, d, admin, "a/b/c/d", `2`) // leaf turns into a node
	set(t, d, admin, "gone/x", `1`)
	set(t, d, admin, "gone/.priority", `1`)
	set(t, d, admin, "gone/x", `null`) // pruned, with its priority
	if _, err := d.Set(admin, "other-ns", "k", "v", database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetRules("other-ns", `{"rules":{".read":true}}`); err != nil {
		t.Fatal(err)
	}
	set(t, d, admin, "gone/y", `1`)
	before := jsonOf(get(t, d, admin, "/"))
	st.Close()

	st2, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	d2, _ := newDB(t, "", st2.Bucket("database"))
	if got := jsonOf(get(t, d2, admin, "/")); got != before {
		t.Fatalf("after reopen %s, want %s", got, before)
	}
	if before != `{"a":{"arr":{"0":1,"1":2},"b":{".priority":3,"c":{"d":2}},"leaf":{".priority":"p",".value":"x"}},"gone":{"y":1}}` {
		t.Fatalf("tree %s", before)
	}
	if d2.Rules("other-ns") != `{"rules":{".read":true}}` {
		t.Fatal("rules not restored")
	}

	snap, err := d2.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	set(t, d2, admin, "a", `"changed"`)
	if err := d2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(get(t, d2, admin, "/")); got != before {
		t.Fatalf("after restore %s", got)
	}
	if err := d2.Restore(json.RawMessage(`{"namespaces":{"x":{"data":{"a.b":1}}}}`)); err == nil {
		t.Fatal("bad snapshot accepted")
	}
	if got := jsonOf(get(t, d2, admin, "/")); got != before {
		t.Fatalf("rejected restore changed state: %s", got)
	}
	if err := d2.Reset(); err != nil {
		t.Fatal(err)
	}
	if v := get(t, d2, admin, "/"); v != nil {
		t.Fatal("reset kept data")
	}
}

func TestPushIDs(t *testing.T) {
	d, _ := newDB(t, "", nil)
	var ids []string
	for i := 0; i < 50; i++ {
		id, err := d.Push(admin, ns, "list", map[string]any{"i": float64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != 20 || id[0] != '-' {
			t.Fatalf("id %q", id)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("push ids do not sort in creation order")
	}
	q := database.Query{Index: database.IndexKey, Limit: 1, FromLast: true}
	r, _ := d.Get(admin, ns, "list", &q, false)
	if got := jsonOf(r.Value); got != fmt.Sprintf(`{%q:{"i":49}}`, ids[49]) {
		t.Fatal(got)
	}
}

func sha1b64(s string) string {
	h := sha1.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}

// barrier releases n goroutines together, round after round.
type barrier struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n     int
	count int
	round int
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.round
	b.count++
	if b.count == b.n {
		b.count, b.round = 0, b.round+1
		b.cond.Broadcast()
		return
	}
	for r == b.round {
		b.cond.Wait()
	}
}

func envForFuzz() service.Env {
	return service.Env{Project: "demo", Now: func() time.Time { return fixedNow }}
}

func withBucket(env service.Env, b service.Bucket) service.Env {
	env.Bucket = b
	return env
}

func TestEvents(t *testing.T) {
	d, bus := newDB(t, rules, nil)
	c := d.Connect(ns, alice)
	defer c.Close()
	if _, err := c.Listen("public/e", database.Query{}, 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Put("public/e", map[string]any{"a": 1.0}, nil); err != nil {
		t.Fatal(err)
	}
	_ = c.Put("users/bob", 1.0, nil)
	var got []string
	for _, e := range bus.History() {
		s := string(e.Kind) + " " + e.Method + " " + e.Path
		switch {
		case e.Request != nil:
			s += " " + string(e.Request.Verdict)
		case e.Listener != nil:
			s += " " + string(e.Listener.Phase)
		case e.Commit != nil:
			s += " " + jsonOf(e.Commit.Before) + "→" + jsonOf(e.Commit.After)
		}
		if e.Identity.UID != "alice" || e.Service != "database" {
			t.Errorf("event %s: identity %v service %q", s, e.Identity, e.Service)
		}
		got = append(got, s)
	}
	want := []string{
		"request listen /public/e allow",
		"listener  /public/e attach",
		"request set /public/e allow",
		`commit set /public/e null→{"a":1}`,
		"listener  /public/e deliver",
		"request set /users/bob deny",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A write's request event carries what was sent, denied ones too, so
	// verify can decide it again.
	h := bus.History()
	last := h[len(h)-1]
	if last.Request.Seen == nil || last.Request.Seen.Data != 1.0 {
		t.Errorf("denied set: seen %+v, want the value sent (1)", last.Request.Seen)
	}
}

func TestLoadRulesFile(t *testing.T) {
	d, _ := newDB(t, "", nil)
	p := t.TempDir() + "/database.rules.json"
	if err := os.WriteFile(p, []byte(`{"rules":{".read":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.LoadRulesFile(p); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(anon, ns, "x", nil, false); err != nil {
		t.Fatalf("rules from file: %v", err)
	}
	os.WriteFile(p, []byte(`{"rules":{".read":"nope("}}`), 0o644)
	if err := d.LoadRulesFile(p); err == nil || !strings.Contains(err.Error(), "database.rules.json") {
		t.Fatalf("bad file: %v", err)
	}
	if _, err := d.Get(anon, ns, "x", nil, false); err != nil {
		t.Fatalf("a bad reload replaced the rules: %v", err)
	}
}

func TestBaseRules(t *testing.T) {
	d, _ := newDB(t, "", nil)
	br := d.BaseRules()
	if _, _, loaded := br.Base(); loaded {
		t.Fatal("rules loaded without any")
	}
	if _, err := br.Set("database.rules.json", `{"rules":{".read":true}}`); err != nil {
		t.Fatal(err)
	}
	if diags, err := br.Set("database.rules.json", `{"rules":{".read":"("}}`); err == nil || len(diags) == 0 {
		t.Fatalf("bad rules accepted: %v %v", diags, err)
	}
	if name, text, loaded := br.Base(); !loaded || name != "database.rules.json" || text != `{"rules":{".read":true}}` {
		t.Fatalf("base %q %q %v", name, text, loaded)
	}
	if _, err := d.Get(anon, ns, "x", nil, false); err != nil {
		t.Fatal(err)
	}
	if database.Registration(database.Options{}).Name != "database" {
		t.Fatal("registration name")
	}
}

// TestSharedPushEncoding: the listeners of one location that a write
// reaches alike (untagged) share one encoding of its push, computed once
// for all of them; a tagged (query) listen's push is its own.
func TestSharedPushEncoding(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	set(t, d, admin, "public/items", `{"a":{"n":1}}`)
	var conns []*database.Conn
	for range 3 {
		c := d.Connect(ns, alice)
		defer c.Close()
		if _, err := c.Listen("public/items", database.Query{}, 0, ""); err != nil {
			t.Fatal(err)
		}
		drain(t, c) // the initial value
		conns = append(conns, c)
	}
	tagged := d.Connect(ns, alice)
	defer tagged.Close()
	if _, err := tagged.Listen("public/items", database.Query{Index: "n", Limit: 5}, 5, ""); err != nil {
		t.Fatal(err)
	}
	drain(t, tagged)
	set(t, d, admin, "public/items/a/n", `2`)
	encodings := 0
	encode := func(p database.Push) []byte {
		encodings++
		return []byte(p.Path + "=" + jsonOf(p.Data))
	}
	for i, c := range conns {
		ps := drain(t, c)
		if len(ps) != 1 {
			t.Fatalf("listener %d got %d pushes, want 1: %v", i, len(ps), pushText(ps))
		}
		if got := string(ps[0].Encoded(encode)); got != "public/items/a/n=2" {
			t.Errorf("listener %d: encoded %q", i, got)
		}
	}
	if encodings != 1 {
		t.Errorf("three listeners' pushes were encoded %d times, want once", encodings)
	}
	ps := drain(t, tagged)
	if len(ps) != 1 || ps[0].Shared != nil || ps[0].Tag != 5 {
		t.Errorf("the tagged listen's push = %+v, want its own (tag 5, not shared)", ps)
	}
}

// TestSharedPushAboveListens: a write above the listened locations
// reaches each location's listeners with that location's value, one
// queued push and encoding per location, the same for all its untagged
// listeners and never another location's.
func TestSharedPushAboveListens(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	set(t, d, admin, "public/items", `{"a":{"n":1},"b":{"n":1}}`)
	listen := func(path string) *database.Conn {
		c := d.Connect(ns, alice)
		t.Cleanup(c.Close)
		if _, err := c.Listen(path, database.Query{}, 0, ""); err != nil {
			t.Fatal(err)
		}
		drain(t, c)
		return c
	}
	as := []*database.Conn{listen("public/items/a"), listen("public/items/a")}
	bs := []*database.Conn{listen("public/items/b"), listen("public/items/b")}
	set(t, d, admin, "public/items", `{"a":{"n":2},"b":{"n":3}}`)
	encodings := 0
	encode := func(p database.Push) []byte {
		encodings++
		return []byte(p.Path + "=" + jsonOf(p.Data))
	}
	for want, cs := range map[string][]*database.Conn{`public/items/a={"n":2}`: as, `public/items/b={"n":3}`: bs} {
		for i, c := range cs {
			ps := drain(t, c)
			if len(ps) != 1 || ps[0].Tag != 0 {
				t.Fatalf("%s: listener %d got %v", want, i, pushText(ps))
			}
			if got := string(ps[0].Encoded(encode)); got != want {
				t.Errorf("listener %d: encoded %q, want %q", i, got, want)
			}
		}
	}
	if encodings != 2 {
		t.Errorf("two locations' pushes were encoded %d times, want once each", encodings)
	}
}

// TestConnWaitWithoutContext: a Wait whose context cannot end waits on
// the connection alone, and a push, Wake and Close each end it, Close
// every such Wait at once.
func TestConnWaitWithoutContext(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	c := d.Connect(ns, admin)
	returned := func(what string, waiters int, do func()) {
		t.Helper()
		done := make(chan struct{}, waiters)
		for range waiters {
			go func() {
				c.Wait(context.Background())
				done <- struct{}{}
			}()
		}
		time.Sleep(10 * time.Millisecond) // let them wait (not a timing assertion)
		do()
		for range waiters {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: a Wait did not return", what)
			}
		}
	}
	returned("a push", 1, func() { c.Send("x") })
	if q, err := c.Take(); err != nil || len(q) != 1 {
		t.Fatalf("Take = %v, %v", q, err)
	}
	returned("Wake", 1, c.Wake)
	returned("Close", 3, c.Close)
	if _, err := c.Take(); !errors.Is(err, database.ErrClosed) {
		t.Errorf("Take after Close = %v, want ErrClosed", err)
	}
}

// TestListenerEvents: each listen's attach, deliveries and detach are
// recorded with its phase, id and target (its path and query), the
// deliveries of two writes alike.
func TestListenerEvents(t *testing.T) {
	d, bus := newDB(t, rules, nil)
	plain := d.Connect(ns, alice)
	defer plain.Close()
	if _, err := plain.Listen("public/ev", database.Query{}, 0, ""); err != nil {
		t.Fatal(err)
	}
	query := d.Connect(ns, alice)
	defer query.Close()
	if _, err := query.Listen("public/ev", database.Query{Index: "n", Limit: 5}, 3, ""); err != nil {
		t.Fatal(err)
	}
	set(t, d, admin, "public/ev/a", `{"n":1}`)
	set(t, d, admin, "public/ev/a", `{"n":2}`)
	if err := plain.Unlisten("public/ev", database.Query{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range bus.History() {
		if l := e.Listener; l != nil {
			got = append(got, fmt.Sprintf("%s %s %s %s %v", l.Phase, l.ListenerID, l.Target.Kind, l.Target.Path, l.Target.Query))
		}
	}
	pq := database.Query{}.Canonical()
	qq := database.Query{Index: "n", Limit: 5}.Canonical()
	pid, qid := plain.ID()+":/public/ev\x00"+pq, query.ID()+":/public/ev\x00"+qq
	want := []string{
		"attach " + pid + " path /public/ev " + pq,
		"attach " + qid + " path /public/ev " + qq,
		"deliver " + pid + " path /public/ev " + pq, "deliver " + qid + " path /public/ev " + qq,
		"deliver " + pid + " path /public/ev " + pq, "deliver " + qid + " path /public/ev " + qq,
		"detach " + pid + " path /public/ev " + pq,
	}
	// A write's deliveries are in no particular order among listeners.
	slices.Sort(got[2:6])
	slices.Sort(want[2:6])
	if !slices.Equal(got, want) {
		t.Errorf("listener events:\n got %q\nwant %q", got, want)
	}
}

// TestRecycledQueue: a queue given back (Conn.Recycle) is cleared, and
// the next queue, which reuses its array, holds only what was queued
// after it.
func TestRecycledQueue(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	c := d.Connect(ns, admin)
	defer c.Close()
	c.Send("first")
	c.Send("second")
	q, err := c.Take()
	if err != nil || len(q) != 2 {
		t.Fatalf("Take = %v, %v", q, err)
	}
	c.Recycle(q)
	if q[0] != nil || q[1] != nil {
		t.Errorf("a recycled queue still holds %v", q)
	}
	c.Send("third")
	q2, err := c.Take()
	if err != nil || len(q2) != 1 || q2[0] != "third" {
		t.Fatalf("the queue after a recycled one = %v, %v; want [third]", q2, err)
	}
	if &q2[0] != &q[0] {
		t.Errorf("the recycled array was not reused")
	}
}

// A reply held (Conn.Hold) wakes no waiting reader: the goroutine that
// held it takes the queue itself (Take), in order behind what was
// queued before it; a push queued by a write wakes the waiting reader.
func TestConnHoldTakeWait(t *testing.T) {
	d, _ := newDB(t, rules, nil)
	c := d.Connect(ns, admin)
	defer c.Close()
	if _, err := c.Listen("public/h", database.Query{}, 0, ""); err != nil {
		t.Fatal(err)
	}
	c.Hold("reply 1")
	items, err := c.Take()
	if err != nil || len(items) != 2 {
		t.Fatalf("Take = %v, %v; want the listen's data then the reply", items, err)
	}
	if p, ok := items[0].(database.Push); !ok || p.Path != "public/h" || items[1] != "reply 1" {
		t.Fatalf("Take = %#v", items)
	}
	if items, err := c.Take(); items != nil || err != nil {
		t.Fatalf("Take of an empty queue = %v, %v", items, err)
	}
	c.Hold("reply 2")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		t.Fatalf("Wait with a held reply queued = %v, want nil at once", err)
	}
	if items, _ := c.Take(); len(items) != 1 || items[0] != "reply 2" {
		t.Fatalf("Take = %v", items)
	}
	// Hold leaves no wake-up behind: with its reply taken, a Wait finds
	// nothing and times out.
	c.Hold("reply 3")
	if items, _ := c.Take(); len(items) != 1 || items[0] != "reply 3" {
		t.Fatalf("Take = %v", items)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if err := c.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait after a held reply was taken = %v, want a timeout", err)
	}
	woke := make(chan error, 1)
	go func() { woke <- c.Wait(context.Background()) }()
	if _, err := d.Set(admin, ns, "public/h", 1.0, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-woke; err != nil {
		t.Fatalf("Wait after a push = %v", err)
	}
	if items, _ := c.Take(); len(items) != 1 {
		t.Fatalf("Take = %v; want the push", items)
	}
	c.Close()
	if _, err := c.Take(); !errors.Is(err, database.ErrClosed) {
		t.Fatalf("Take after Close = %v, want ErrClosed", err)
	}
}

// TestCommitEventsInOrder: each write's request event is followed by its
// commit event, in write order, and a commit's batch (built in the last
// one's slice) leaves the events already emitted as they were.
func TestCommitEventsInOrder(t *testing.T) {
	d, bus := newDB(t, `{"rules": {".read": true, ".write": true}}`, nil)
	for i, who := range []identity.Identity{admin, alice, admin} {
		if _, err := d.Set(who, ns, fmt.Sprintf("a/%d", i), map[string]any{"n": float64(i)}, database.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, e := range bus.History() {
		s := string(e.Kind) + " " + e.Path
		if e.Commit != nil {
			s += " " + jsonOf(e.Commit.After)
		}
		got = append(got, s)
	}
	want := []string{
		`request /a/0`, `commit /a/0 {"n":0}`,
		`request /a/1`, `commit /a/1 {"n":1}`,
		`request /a/2`, `commit /a/2 {"n":2}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
