package database_test

import (
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
