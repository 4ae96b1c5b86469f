package storage_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/storage"
	"github.com/pyric/pyric/storage/storagetest"
)

// TestEventsKeepCommitOrder: commits emit their events in the order they
// were made (triggers rely on it). Writers replace, patch and delete one
// object while readers read it; in the order emitted, the change events'
// generations and metagenerations only grow, and a read's request event
// never comes before the change event of the version it saw. (Emitting
// after letting go of the write lock, without a hand-off that keeps the
// order, fails it.) With the store's queued log, uploads emit after
// their record's wait, outside the lock (pending.go): the same holds.
func TestEventsKeepCommitOrder(t *testing.T) {
	t.Parallel()
	t.Run("bucket", func(t *testing.T) { t.Parallel(); checkCommitOrder(t, newEngine(t, true)) })
	t.Run("queued log", func(t *testing.T) {
		t.Parallel()
		env, st := storeEnv(t, t.TempDir(), true)
		t.Cleanup(func() { st.Close() })
		e, err := storage.New(env, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkCommitOrder(t, &fixture{e: e, rec: env.Events.(*storagetest.Recorder), env: env})
	})
}

func checkCommitOrder(t *testing.T, f *fixture) {
	const writers, readers, rounds = 4, 3, 60
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				switch (w + i) % 5 {
				case 3:
					f.e.Update(admin, bkt, "hot", storage.Attrs{CacheControl: ptr("no-cache")}, storage.Conditions{})
				case 4:
					f.e.Delete(admin, bkt, "hot", storage.Conditions{})
				default:
					if _, err := f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "hot", Body: strings.NewReader("x")}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for range rounds * 2 {
				f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "hot"})
			}
		})
	}
	wg.Wait()

	type version struct{ gen, meta int64 }
	viewOf := func(v any) (version, bool) {
		o, ok := storage.ObjectView(v)
		if !ok {
			return version{}, false
		}
		return version{o.Generation, o.Metageneration}, true
	}
	emitted := map[version]bool{}
	var last version
	changes, reads := 0, 0
	for _, ev := range f.rec.Events() {
		if ev.Path != "hot" {
			continue
		}
		switch {
		case ev.Kind == event.KindMutation && ev.Mutation.Current != nil:
			v, ok := viewOf(ev.Mutation.Current)
			if !ok {
				t.Fatalf("change event %s without an object view", ev.Method)
			}
			if v.gen < last.gen || (v.gen == last.gen && v.meta <= last.meta) {
				t.Errorf("change to %+v emitted after the change to %+v", v, last)
			}
			last, emitted[v] = v, true
			changes++
		case ev.Kind == event.KindRequest && ev.Method == "get" && ev.Err == nil:
			v, ok := viewOf(ev.Request.Seen.Before.Data)
			if !ok {
				t.Fatalf("read event without the object it saw")
			}
			if !emitted[v] {
				t.Errorf("a read of %+v emitted before the change that made it", v)
			}
			reads++
		}
	}
	if changes < writers*rounds/2 || reads == 0 {
		t.Fatalf("%d change events and %d successful reads: the workload did not run", changes, reads)
	}
}
