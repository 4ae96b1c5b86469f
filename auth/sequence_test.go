package auth_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/auth/authtest"
)

// heldLog is a QueuedLog whose waits are held until the test releases
// them, one by one; a record is appended to the real log only when its
// wait is released, and once fail is set every wait fails (as a store's
// log refuses every append after one failed).
type heldLog struct {
	service.Log
	mu     sync.Mutex
	hold   bool
	fail   error
	waits  []*heldWait
	queued chan string // each queued record's first key
}

type heldWait struct {
	log     *heldLog
	changes []service.LogChange
	release chan struct{}
}

func newHeldLog(t *testing.T) *heldLog {
	return &heldLog{Log: authtest.TempLog(t), queued: make(chan string, 1000)}
}

func (l *heldLog) Queue(space string, changes []service.LogChange) (service.LogWait, error) {
	// The changes are the caller's only during the call.
	own := make([]service.LogChange, len(changes))
	for i, c := range changes {
		own[i] = c
		if c.Value != nil {
			own[i].Value = append([]byte{}, c.Value...)
		}
	}
	w := &heldWait{log: l, changes: own, release: make(chan struct{})}
	l.mu.Lock()
	if l.hold {
		l.waits = append(l.waits, w)
	} else {
		close(w.release)
	}
	l.mu.Unlock()
	l.queued <- changes[0].Key
	return w, nil
}

func (w *heldWait) Wait() error {
	<-w.release
	w.log.mu.Lock()
	defer w.log.mu.Unlock()
	if w.log.fail != nil {
		return w.log.fail
	}
	return w.log.Log.Append("accounts", w.changes)
}

// awaitQueued waits for n records to be queued; a commit waiting for its
// record under the engine's lock would keep the others from queuing.
func (l *heldLog) awaitQueued(t *testing.T, n int) []string {
	t.Helper()
	var keys []string
	for range n {
		select {
		case k := <-l.queued:
			keys = append(keys, k)
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d records queued while the first waited", len(keys), n)
		}
	}
	return keys
}

// releaseNewestFirst lets the held waits return, the last queued first.
func (l *heldLog) releaseNewestFirst() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.waits) - 1; i >= 0; i-- {
		close(l.waits[i].release)
	}
	l.waits, l.hold = nil, false
}

type pathEvents struct {
	mu    sync.Mutex
	paths []string
}

func (r *pathEvents) Emit(ev event.Event) {
	r.mu.Lock()
	r.paths = append(r.paths, ev.Path)
	r.mu.Unlock()
}

// TestQueuedCommitsWaitOutsideTheLock: concurrent sign-ins queue their
// records while the first still waits for its own (so a log can write them
// together), each is answered only once its record is durable, and their
// events go out in the order of the state, even when the waits return in
// the opposite order.
func TestQueuedCommitsWaitOutsideTheLock(t *testing.T) {
	l := newHeldLog(t)
	rec := &pathEvents{}
	e, err := auth.Open(auth.Options{Log: l, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	uids := map[string]string{} // record key -> uid
	for i := range n {
		r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp(fmt.Sprintf("q%d@example.com", i)), Password: "secret123"})
		if err != nil {
			t.Fatal(err)
		}
		uids[string(userKeyOf(r.LocalID))] = r.LocalID
	}
	l.awaitQueued(t, n)
	l.mu.Lock()
	l.hold = true
	l.mu.Unlock()
	rec.mu.Lock()
	rec.paths = nil
	rec.mu.Unlock()

	var wg sync.WaitGroup
	var answered sync.Map
	for i := range n {
		wg.Go(func() {
			if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp(fmt.Sprintf("q%d@example.com", i)), Password: "secret123"}); err != nil {
				t.Error(err)
			}
			answered.Store(i, true)
		})
	}
	keys := l.awaitQueued(t, n)
	answered.Range(func(k, _ any) bool {
		t.Errorf("sign-in %v answered before its record was durable", k)
		return true
	})
	l.releaseNewestFirst()
	wg.Wait()
	var want []string
	for _, k := range keys {
		for key, uid := range uids {
			if strings.HasSuffix(k, key) {
				want = append(want, uid)
			}
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if fmt.Sprint(rec.paths) != fmt.Sprint(want) {
		t.Errorf("events in the order %v, the log's order is %v", rec.paths, want)
	}
}

// userKeyOf is the tail of a project-space user record key: its kind and
// its localId, length-prefixed (store.go's layout).
func userKeyOf(uid string) []byte {
	return append([]byte{1, 'u', byte(len(uid))}, uid...)
}

// TestQueuedWaitFailure: when the log fails a queued record, the commit
// that queued it and every commit queued behind it (here a sign-in of the
// account the failed sign-up created) fail with INTERNAL, no event goes
// out, and memory is back to what the log holds.
func TestQueuedWaitFailure(t *testing.T) {
	l := newHeldLog(t)
	rec := &events{}
	e, err := auth.Open(auth.Options{Log: l, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("a@example.com"), Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	l.awaitQueued(t, 1)
	before, evBefore := state(t, e), rec.n
	l.mu.Lock()
	l.hold = true
	l.mu.Unlock()

	errs := make(chan error, 3)
	go func() {
		_, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("b@example.com"), Password: "secret123"})
		errs <- err
	}()
	l.awaitQueued(t, 1)
	for _, email := range []string{"b@example.com", "a@example.com"} {
		go func() {
			_, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp(email), Password: "secret123"})
			errs <- err
		}()
		l.awaitQueued(t, 1)
	}
	l.mu.Lock()
	l.fail = errDiskFull
	l.mu.Unlock()
	l.releaseNewestFirst()
	for range 3 {
		err := <-errs
		var ae *auth.Error
		if !errors.As(err, &ae) || ae.HTTP != 500 || !errors.Is(err, auth.ErrPersist) {
			t.Errorf("a commit whose record was lost: err = %v, want INTERNAL wrapping ErrPersist", err)
		}
	}
	if got := state(t, e); got != before {
		t.Errorf("memory holds what the log lost:\n%s\nwas\n%s", got, before)
	}
	if rec.n != evBefore {
		t.Errorf("%d events published for lost records", rec.n-evBefore)
	}
	if _, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("b@example.com"), Password: "secret123"}); err == nil {
		t.Error("the lost account signs in")
	}
}

// TestRestoreEmitsAfterPendingCommits: a restore's users_clear events go
// out after the events of the commits queued before it.
func TestRestoreEmitsAfterPendingCommits(t *testing.T) {
	l := newHeldLog(t)
	rec := &pathEvents{}
	e, err := auth.Open(auth.Options{Log: l, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("a@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	l.awaitQueued(t, 1)
	l.mu.Lock()
	l.hold = true
	l.mu.Unlock()
	rec.mu.Lock()
	rec.paths = nil
	rec.mu.Unlock()
	signedIn := make(chan error, 1)
	go func() {
		_, err := e.SignInWithPassword(dClient, auth.SignInWithPasswordRequest{Email: sp("a@example.com"), Password: "secret123"})
		signedIn <- err
	}()
	l.awaitQueued(t, 1)
	restored := make(chan error, 1)
	go func() { restored <- e.RestoreState(auth.Snapshot{Version: 1}) }()
	time.Sleep(50 * time.Millisecond) // let the restore reach its events (the order holds either way)
	l.releaseNewestFirst()
	if err := <-signedIn; err != nil {
		t.Fatal(err)
	}
	if err := <-restored; err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if fmt.Sprint(rec.paths) != fmt.Sprint([]string{r.LocalID, "*"}) {
		t.Errorf("events %v, want the sign-in's (%s) then the restore's (*)", rec.paths, r.LocalID)
	}
}
