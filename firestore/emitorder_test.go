package firestore

import (
	"context"
	"fmt"
	"sync"
	"testing"

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
