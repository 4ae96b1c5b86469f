package sandbox

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/sandbox/service"
)

// loadSpace is every key and value of space in store st's service svc.
func loadSpace(t *testing.T, st *Store, svc, space string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := st.Log(svc).Load(func(sp string, entries []service.LogChange) error {
		if sp == space {
			for _, e := range entries {
				got[e.Key] = string(e.Value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestGroupCommitSharesOneWrite: appends that queue while the log is
// busy (a write or a checkpoint holds it) go out in one write, in the
// order they queued: after a kill -9 the reopened store holds every one,
// and a key they all wrote holds the value of the last to queue.
func TestGroupCommitSharesOneWrite(t *testing.T) {
	t.Parallel()
	for _, mode := range []SyncMode{SyncBatch, SyncAlways} {
		dir := t.TempDir()
		st, err := OpenStoreSync(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		log := st.Log("notes")
		if err := log.Append("s", []service.LogChange{{Key: "first", Value: []byte("1")}}); err != nil {
			t.Fatal(err)
		}
		const n = 16
		writes := st.walWrites.Load()
		st.walMu.Lock() // as a write or a checkpoint in progress
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = log.Append("s", []service.LogChange{{Key: fmt.Sprint("k", i), Value: []byte(fmt.Sprint(i))}, {Key: "shared", Value: []byte(fmt.Sprint(i))}})
			}()
		}
		var last string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			st.walQ.mu.Lock()
			g := st.walQ.forming
			if g != nil && g.members == n {
				last = string(g.batches[n-1].changes[1].data)
			}
			st.walQ.mu.Unlock()
			if last != "" || time.Now().After(deadline) {
				break
			}
		}
		st.walMu.Unlock()
		wg.Wait()
		if last == "" {
			t.Fatalf("%s: the %d appends never all queued", mode, n)
		}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: append %d: %v", mode, i, err)
			}
		}
		if got := st.walWrites.Load() - writes; got != 1 {
			t.Errorf("%s: %d appends queued together took %d writes, want 1", mode, n, got)
		}
		abandon(st) // kill -9: every record only in the log
		st, err = OpenStoreSync(dir, mode)
		if err != nil {
			t.Fatalf("%s: reopen: %v", mode, err)
		}
		got := loadSpace(t, st, "notes", "s")
		st.Close()
		want := map[string]string{"first": "1", "shared": last}
		for i := range n {
			want[fmt.Sprint("k", i)] = fmt.Sprint(i)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: after kill -9: %v, want %v", mode, got, want)
		}
	}
}

// TestGroupCommitWriteFails: when the shared write fails, every append of
// the group reports it, and every append after it fails too.
func TestGroupCommitWriteFails(t *testing.T) {
	t.Parallel()
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := st.Log("notes")
	st.walMu.Lock()
	st.wal.Close() // the write will fail
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = log.Append("s", []service.LogChange{{Key: fmt.Sprint("k", i), Value: []byte("v")}})
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		st.walQ.mu.Lock()
		queued := st.walQ.forming != nil && st.walQ.forming.members == len(errs)
		st.walQ.mu.Unlock()
		if queued {
			break
		}
	}
	st.walMu.Unlock()
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Errorf("append %d of a failed write returned nil", i)
		}
	}
	if err := log.Append("s", []service.LogChange{{Key: "after", Value: []byte("v")}}); err == nil {
		t.Error("an append after a failed write returned nil")
	}
}

// TestQueuedLogUnderALock: appends queued under an engine's lock, in the
// order of its state, and waited for outside it share one write, and the
// log keeps the lock's order: after a kill -9, a key they all wrote holds
// the value of the last to take the lock.
func TestQueuedLogUnderALock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := st.Log("notes").(service.QueuedLog)
	const n = 16
	var engineMu sync.Mutex
	var order []int
	writes := st.walWrites.Load()
	st.walMu.Lock() // a write in progress
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			engineMu.Lock()
			order = append(order, i)
			w, err := log.Queue("s", []service.LogChange{{Key: fmt.Sprint("k", i), Value: []byte(fmt.Sprint(i))}, {Key: "shared", Value: []byte(fmt.Sprint(i))}})
			engineMu.Unlock()
			if err == nil {
				err = w.Wait()
			}
			errs[i] = err
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		st.walQ.mu.Lock()
		queued := st.walQ.forming != nil && st.walQ.forming.members == n
		st.walQ.mu.Unlock()
		if queued {
			break
		}
	}
	st.walMu.Unlock()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if got := st.walWrites.Load() - writes; got != 1 {
		t.Errorf("%d appends queued together took %d writes, want 1", n, got)
	}
	abandon(st)
	st, err = OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := loadSpace(t, st, "notes", "s")
	st.Close()
	if want := fmt.Sprint(order[n-1]); got["shared"] != want || len(got) != n+1 {
		t.Errorf("after kill -9: %v, want shared = %s (the lock's last) and %d keys", got, want, n+1)
	}
}
