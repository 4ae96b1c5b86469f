package database_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// TestTreeMovesIntoLog: a tree a version before the Log stored in the
// Bucket (one key per leaf) is moved into the Log at the next open — the
// Bucket then holds none of it — and reads back whole, root primitive
// of another namespace included, at that open and the one after.
func TestTreeMovesIntoLog(t *testing.T) {
	dir := t.TempDir()
	st, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	old, err := database.New(withBucket(envForFuzz(), st.Bucket("database")), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set(t, old, admin, "a", `{"b":{"c":1,".priority":2},"d":"x"}`)
	if _, err := old.Set(admin, "other", "", 5.0, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		d, err := database.New(withStore(envForFuzz(), st), database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(get(t, d, admin, "a")); got != `{"b":{".priority":2,"c":1},"d":"x"}` {
			t.Errorf("open %d: a is %s", round, got)
		}
		if r, err := d.Get(admin, ns, "a/b", nil, true); err != nil || jsonOf(r.Value) != `{".priority":2,"c":1}` {
			t.Errorf("open %d: a/b with priority is %s, %v", round, jsonOf(r.Value), err)
		}
		if r, err := d.Get(admin, "other", "", nil, false); err != nil || jsonOf(r.Value) != `5` {
			t.Errorf("open %d: other's root is %s, %v", round, jsonOf(r.Value), err)
		}
		left := 0
		_ = st.Bucket("database").View(func(tx service.Tx) error {
			return tx.ForEach([]byte("d\x00"), func(k, v []byte) error { left++; return nil })
		})
		if left != 0 {
			t.Errorf("open %d: the bucket still holds %d leaves", round, left)
		}
	}
	st.Close()
}

// TestStoredLeavesFollowEveryWrite: after writes that turn leaves into
// nodes and back, replace leaves by leaves (with and without priorities),
// create new locations and delete, in random order, the tree a fresh open
// reads from the log is the tree in memory. A write whose location held
// nothing, or held a leaf that a leaf replaces, stores its leaves without
// clearing the location first: this is what says the leaves it leaves in
// place are never stale.
func TestStoredLeavesFollowEveryWrite(t *testing.T) {
	st, err := sandbox.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := database.New(withStore(envForFuzz(), st), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"a", "a/b", "a/b/c", "a/d", "e", "e/f", "a/b/.priority", "e/.priority"}
	values := []string{`1`, `"x"`, `true`, `null`, `{"c":2}`, `{"g":{"h":3},"i":"j"}`, `{".value":4,".priority":1}`,
		`{"c":{".value":"k",".priority":"p"},".priority":3}`, `{"n":0,"s":"x"}`}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		p := paths[rng.IntN(len(paths))]
		v := values[rng.IntN(len(values))]
		if strings.HasSuffix(p, ".priority") {
			v = []string{`1`, `"p"`, `null`}[rng.IntN(3)]
		}
		if rng.IntN(4) == 0 {
			_ = d.Update(admin, ns, "", map[string]any{p: decode(t, v), paths[rng.IntN(2)+4]: decode(t, values[rng.IntN(4)])}, "")
		} else if _, err := d.Set(admin, ns, p, decode(t, v), database.WriteOptions{}); err != nil {
			continue // a priority on nothing, say
		}
		if i%40 != 39 {
			continue
		}
		again, err := database.New(withStore(envForFuzz(), st), database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonOf(get(t, again, admin, "")), jsonOf(get(t, d, admin, "")); got != want {
			t.Fatalf("after %d writes the log reads back %s, the tree is %s", i+1, got, want)
		}
	}
}

func decode(t *testing.T, s string) any {
	v, err := database.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
