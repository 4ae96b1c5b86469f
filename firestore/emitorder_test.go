package firestore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// TestCommitEventsInCommitOrder: concurrent writers of one document get
// their commit events emitted in commit order (each event's before is
// the previous event's after), which Cloud Functions triggers rely on.
func TestCommitEventsInCommitOrder(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	var mu sync.Mutex
	var commits []*event.Commit
	bus.Tap(func(e event.Event) {
		if e.Kind == event.KindCommit {
			mu.Lock()
			commits = append(commits, e.Commit)
			mu.Unlock()
		}
	})
	e := New(Options{Events: bus})
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				_, err := e.Commit(context.Background(), identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
					Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("c/d"), Fields: map[string]*pb.Value{"w": String(fmt.Sprintf("%d-%d", g, i))}}}}}})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(commits) != 800 {
		t.Fatalf("%d commit events, want 800", len(commits))
	}
	for i := 1; i < len(commits); i++ {
		if !commits[i].RequestTime.After(commits[i-1].RequestTime) {
			t.Fatalf("commit event %d (at %v) emitted after one at %v", i, commits[i].RequestTime, commits[i-1].RequestTime)
		}
		if fmt.Sprint(commits[i].Before) != fmt.Sprint(commits[i-1].After) {
			t.Fatalf("commit event %d's before %v is not the previous after %v", i, commits[i].Before, commits[i-1].After)
		}
	}
}

// gatePersister holds each commit until the test releases it.
type gatePersister struct {
	entered chan struct{}
	release chan struct{}
}

func (p *gatePersister) Commit(DatabaseName, time.Time, []Change) error {
	p.entered <- struct{}{}
	<-p.release
	return nil
}

// TestWriteEventsAfterDurable: an allowed write's request event reaches
// the bus only once its commit is durable and visible, in one batch with
// its commit event. Emitted while the commit waited for durability, a
// reader of the bus then (session capture flushing its file) saw the
// allowed write but read the document as it was before, and a kill before
// its next flush left a session whose replay made a document the capture
// recorded as absent (verify's TestServeFirestoreSessionKill9).
func TestWriteEventsAfterDurable(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	p := &gatePersister{entered: make(chan struct{}), release: make(chan struct{})}
	e := New(Options{Events: bus, Rules: AllowAll, Persister: p})
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	alice := identity.NewUser("alice", nil)
	done := make(chan error, 1)
	go func() {
		_, err := e.Commit(context.Background(), alice, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
			Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("c/d"), Fields: map[string]*pb.Value{"v": Int(1)}}}}}})
		done <- err
	}()
	<-p.entered // the commit waits for durability
	for _, ev := range bus.History() {
		if ev.Kind == event.KindRequest || ev.Kind == event.KindCommit {
			t.Errorf("while the commit waits for durability the bus holds its %s event (%s %s)", ev.Kind, ev.Method, ev.Path)
		}
	}
	if d := e.Document(db, "c/d"); d != nil {
		t.Errorf("c/d is visible before its commit is durable: %v", d)
	}
	close(p.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range bus.History() {
		k := fmt.Sprintf("%s %s %s", ev.Kind, ev.Method, ev.Path)
		if ev.Request != nil {
			k += " " + string(ev.Request.Verdict)
		}
		kinds = append(kinds, k)
	}
	want := []string{"request create c/d allow", "commit create c/d"}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", kinds, want)
	}
}
