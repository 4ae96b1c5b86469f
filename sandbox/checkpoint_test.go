package sandbox

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// storeContents is every key and value of every service bucket of st's
// file, by bucket path.
func storeContents(t *testing.T, st *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(svc []byte, root *bolt.Bucket) error {
			if string(svc) == string(walBucket) {
				return nil
			}
			return root.ForEachBucket(func(space []byte) error {
				return root.Bucket(space).ForEach(func(k, v []byte) error {
					out[fmt.Sprintf("%s/%s/%s", svc, space, k)] = string(v)
					return nil
				})
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckpointSkipsSuperseded: a checkpoint that skips the changes a
// later change undoes (superseded) leaves the file as applying every
// change in order does, for random mixes of puts, deletions and prefix
// deletions over a few keys in a few record spaces, outbox spaces
// included.
func TestCheckpointSkipsSuperseded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{"/a", "/a/b", "/a/c", "/ab", "/b", "/b/x"}
	spaces := []string{logSpace("database", "ns1"), logSpace("database", "ns2"), "(default)"}
	for round := range 200 {
		var batches []walBatch
		skipped := 0
		for range 1 + rng.IntN(8) {
			b := walBatch{db: spaces[rng.IntN(len(spaces))]}
			for range 1 + rng.IntN(6) {
				c := walChange{path: paths[rng.IntN(len(paths))]}
				switch r := rng.IntN(10); {
				case r < 6:
					c.data = []byte(fmt.Sprint(rng.IntN(100)))
				case r < 8:
					c.path += "/"
					c.prefix = true
				}
				if rng.IntN(5) == 0 {
					c.space = logSpace("outbox", "held")
				}
				b.changes = append(b.changes, c)
			}
			batches = append(batches, b)
		}
		for _, s := range superseded(batches) {
			if s {
				skipped++
			}
		}
		whole, err := OpenStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		one, err := OpenStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		// What the file holds before: some of the keys.
		base := walBatch{db: spaces[0]}
		for _, p := range paths[:3] {
			base.changes = append(base.changes, walChange{path: p, data: []byte("old")})
		}
		for _, st := range []*Store{whole, one} {
			if err := st.apply([]walBatch{base}, 1); err != nil {
				t.Fatal(err)
			}
		}
		if err := whole.apply(batches, 2); err != nil {
			t.Fatal(err)
		}
		for _, b := range batches { // one change at a time: none skipped
			for _, c := range b.changes {
				if err := one.apply([]walBatch{{db: b.db, changes: []walChange{c}}}, 2); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, want := storeContents(t, whole), storeContents(t, one)
		whole.Close()
		one.Close()
		if !maps.Equal(got, want) {
			t.Fatalf("round %d (%d of the changes skipped): %v\nwant %v\nbatches %+v", round, skipped, got, want, batches)
		}
	}
}

// TestSuperseded: which changes a checkpoint skips.
func TestSuperseded(t *testing.T) {
	t.Parallel()
	put := func(p string) walChange { return walChange{path: p, data: []byte("v")} }
	batches := []walBatch{
		{db: "x", changes: []walChange{put("/a"), put("/b"), {path: "/c"}}},
		{db: "y", changes: []walChange{put("/a")}},
		{db: "x", changes: []walChange{{path: "/a/", prefix: true}, put("/b"), {path: "/c"}, {path: "/a/", prefix: true}, {path: "/a"}}},
	}
	got := fmt.Sprint(superseded(batches))
	// x/a: deleted last; x/b and x/c: again later; y/a is another space;
	// prefix deletions stay.
	if want := "[true true true false false false false false false]"; got != want {
		t.Errorf("superseded = %s, want %s", got, want)
	}
}
