package database_test

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// model is the trivial reference for the tree: export-format values
// rebuilt by copying along every written path, so no value it handed out
// ever changes.
type model struct{ root any }

func (m *model) get(keys []string) any {
	v := m.root
	for _, k := range keys {
		n, ok := v.(map[string]any)
		if !ok || n[".value"] != nil {
			return nil
		}
		v = n[k]
	}
	return v
}

func modelSet(v any, keys []string, x any) any {
	if len(keys) == 0 {
		return x
	}
	if n, ok := v.(map[string]any); x == nil && (!ok || n[".value"] != nil) {
		return v // removing below a leaf or nothing changes nothing
	}
	out := map[string]any{}
	if n, ok := v.(map[string]any); ok && n[".value"] == nil {
		for k, c := range n {
			out[k] = c
		}
	} else if n, ok := v.(map[string]any); ok && n[".priority"] != nil {
		out[".priority"] = n[".priority"] // a leaf turned node keeps its priority
	}
	if c := modelSet(out[keys[0]], keys[1:], x); c == nil {
		delete(out, keys[0])
	} else {
		out[keys[0]] = c
	}
	for k := range out {
		if k != ".priority" {
			return out
		}
	}
	return nil
}

// randomValue is a small export-format value: leaves, nodes, priorities.
func randomValue(r *rand.Rand, depth int) any {
	switch n := r.Intn(10); {
	case n == 0:
		return nil
	case n < 3 || depth > 2:
		leaf := []any{float64(r.Intn(5)), "s" + string(rune('a'+r.Intn(3))), r.Intn(2) == 0}[r.Intn(3)]
		if r.Intn(4) == 0 {
			return map[string]any{".value": leaf, ".priority": float64(r.Intn(3))}
		}
		return leaf
	default:
		m := map[string]any{}
		for i := r.Intn(3) + 1; i > 0; i-- {
			if c := randomValue(r, depth+1); c != nil {
				m[randomKey(r)] = c
			}
		}
		if len(m) == 0 {
			return nil
		}
		if r.Intn(4) == 0 {
			m[".priority"] = "p" + randomKey(r)
		}
		return m
	}
}

func randomKey(r *rand.Rand) string { return string(rune('a' + r.Intn(3))) }

func randomPath(r *rand.Rand) []string {
	keys := make([]string, r.Intn(3)+1)
	for i := range keys {
		keys[i] = randomKey(r)
	}
	return keys
}

// TestTreeAgainstModel runs random sets, multi-path updates and removes
// against the in-place tree and the copying model: after every write the
// trees are equal, every value handed out earlier (reads, Set results,
// pushes) is unchanged, and the bucket reopens to the same tree.
func TestTreeAgainstModel(t *testing.T) {
	dir := t.TempDir()
	st, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := newDB(t, "", st.Bucket("database"))
	conn := d.Connect(ns, admin)
	if _, err := conn.Listen("a", database.Query{}, 0, ""); err != nil {
		t.Fatal(err)
	}
	wq := database.Query{Index: database.IndexKey, Limit: 2}
	if _, err := conn.Listen("b", wq, 1, ""); err != nil {
		t.Fatal(err)
	}
	type held struct {
		what string
		v    any
		was  string
	}
	var handed []held
	hold := func(what string, v any) { handed = append(handed, held{what, v, jsonOf(v)}) }
	ctx := context.Background()
	m := &model{}
	r := rand.New(rand.NewSource(1))
	for step := 0; step < 3000; step++ {
		switch r.Intn(4) {
		case 0, 1:
			keys := randomPath(r)
			v := randomValue(r, len(keys))
			got, err := d.Set(admin, ns, strings.Join(keys, "/"), v, database.WriteOptions{})
			if err != nil {
				t.Fatalf("step %d set %v: %v", step, keys, err)
			}
			hold("set result", got)
			m.root = modelSet(m.root, keys, v)
		case 2:
			base := randomPath(r)[:1]
			ups := map[string]any{}
			for _, k := range []string{"a", "b/c"} {
				if r.Intn(2) == 0 {
					ups[k] = randomValue(r, 2)
				}
			}
			if err := d.Update(admin, ns, base[0], ups, ""); err != nil {
				t.Fatalf("step %d update: %v", step, err)
			}
			for _, k := range []string{"a", "b/c"} { // the engine applies an update's paths sorted
				if v, ok := ups[k]; ok {
					m.root = modelSet(m.root, append(base[:1:1], strings.Split(k, "/")...), v)
				}
			}
		case 3:
			keys := randomPath(r)
			rd, err := d.Get(admin, ns, strings.Join(keys[:1], "/"), nil, false)
			if err != nil {
				t.Fatal(err)
			}
			hold("read", rd.Value)
			if rd, err = d.Get(admin, ns, "b", &wq, false); err != nil {
				t.Fatal(err)
			}
			hold("window read", rd.Value)
			// A new listen's initial data is handed out too (drained below).
			if _, err := conn.Listen(strings.Join(keys, "/"), database.Query{}, 0, ""); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := jsonOf(get(t, d, admin, "/")), jsonOf(m.root); got != want {
			t.Fatalf("step %d: tree %s, model %s", step, got, want)
		}
		if step%50 == 0 {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			items, _ := conn.Next(cctx)
			for _, it := range items {
				hold("push", it.(database.Push).Data)
			}
		}
	}
	for _, h := range handed {
		if now := jsonOf(h.v); now != h.was {
			t.Fatalf("a %s changed after it was handed out: %s, was %s", h.what, now, h.was)
		}
	}
	before := jsonOf(get(t, d, admin, "/"))
	st.Close()
	st2, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	d2, _ := newDB(t, "", st2.Bucket("database"))
	if got := jsonOf(get(t, d2, admin, "/")); got != before {
		t.Fatalf("reopened %s, want %s", got, before)
	}
}

// failing is a bucket whose next Update runs and then fails, rolling its
// transaction back.
type failing struct {
	service.Bucket
	fail bool
}

func (f *failing) Update(fn func(service.Tx) error) error {
	if !f.fail {
		return f.Bucket.Update(fn)
	}
	f.fail = false
	return f.Bucket.Update(func(tx service.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errors.New("injected failure")
	})
}

// TestPersistFailureKeepsTree: a write whose persistence fails is not
// applied, though the tree takes writes in place: it is rebuilt from the
// bucket, indexes included.
func TestPersistFailureKeepsTree(t *testing.T) {
	st, err := sandbox.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := &failing{Bucket: st.Bucket("database")}
	d, _ := newDB(t, "", b)
	set(t, d, admin, "c", `{"x":{"n":3},"y":{"n":1},"z":{"n":2}}`)
	q := database.Query{Index: "n", Limit: 2}
	if _, err := d.Get(admin, ns, "c", &q, false); err != nil { // builds the index
		t.Fatal(err)
	}
	b.fail = true
	if _, err := d.Set(admin, ns, "c/x/n", 0.0, database.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("set: %v", err)
	}
	if got := jsonOf(get(t, d, admin, "c")); got != `{"x":{"n":3},"y":{"n":1},"z":{"n":2}}` {
		t.Fatalf("after the failed write: %s", got)
	}
	r, err := d.Get(admin, ns, "c", &q, false)
	if err != nil || jsonOf(r.Value) != `{"y":{"n":1},"z":{"n":2}}` {
		t.Fatalf("window after the failed write: %s %v", jsonOf(r.Value), err)
	}
	set(t, d, admin, "c/x/n", `0`)
	if r, _ := d.Get(admin, ns, "c", &q, false); jsonOf(r.Value) != `{"x":{"n":0},"y":{"n":1}}` {
		t.Fatalf("window after the next write: %s", jsonOf(r.Value))
	}
}

// TestRemoveBelowLeaf: removing a path below a leaf leaves the leaf (the
// SDKs' LeafNode.updateChild), in a set and in an update.
func TestRemoveBelowLeaf(t *testing.T) {
	d, _ := newDB(t, "", nil)
	set(t, d, admin, "x", `{".value": 5, ".priority": 1}`)
	set(t, d, admin, "x/a/b", `null`)
	if err := d.Update(admin, ns, "", map[string]any{"x/c": nil}, ""); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(get(t, d, admin, "x")); got != `{".priority":1,".value":5}` {
		t.Fatalf("x = %s", got)
	}
}

// TestUTF16Order: keys and string values sort by UTF-16 code units, as
// production and the SDKs do: an emoji (a surrogate pair) before U+E000,
// unlike Go's byte order.
func TestUTF16Order(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"\U0001F600", "\uE000", -1},
		{"\uE000", "\U0001F600", 1},
		{"a\U0001F600", "a\U0001F601", -1},
		{"ab", "abc", -1},
		{"é", "z", 1},
		{"x", "x", 0},
	} {
		if got := database.CompareKeys(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareKeys(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := database.CompareValues(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareValues(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
