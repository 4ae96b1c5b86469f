package pubsub

import (
	"fmt"
	"sync"
	"testing"

	"github.com/pyric/pyric/sandbox/service"
)

// TestMemBucketConcurrentViewAndUpdate: readers (a capture taking the
// state) and the committer clone the in-memory tree at the same time;
// under -race this fails if two clones of one tree can overlap.
func TestMemBucketConcurrentViewAndUpdate(t *testing.T) {
	m := newMemBucket()
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 200 {
				if err := m.Update(func(tx service.Tx) error {
					return tx.Put([]byte(fmt.Sprintf("k%d-%03d", w, i)), []byte("v"))
				}); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				m.View(func(tx service.Tx) error {
					return tx.ForEach([]byte("k"), func(_, _ []byte) error { return nil })
				})
			}
		})
	}
	wg.Wait()
	n := 0
	m.View(func(tx service.Tx) error {
		return tx.ForEach([]byte("k"), func(_, _ []byte) error { n++; return nil })
	})
	if n != 400 {
		t.Fatalf("%d keys, want 400", n)
	}
}
