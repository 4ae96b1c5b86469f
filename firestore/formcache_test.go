package firestore

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// TestFormCacheServesTheDocumentRead checks the request events that take
// a document's form from the commit that left it (formCache): a get's
// resource and a write's document before are each the form of the very
// version read or overwritten — after overwrites, merges, transforms,
// deletes and recreations, for more documents than the cache has slots
// (so that paths share slots), and for a document too big to be kept.
func TestFormCacheServesTheDocumentRead(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{History: 100000})
	e := New(Options{Rules: AllowAll, Events: bus})
	alice := identity.NewUser("alice", nil)
	const n = 3 * formCacheSlots / 2
	for i := range n {
		commitT(t, e, alice, upd(fmt.Sprintf("c/d%d", i), M("i", Int(int64(i)), "s", String("x"))))
	}
	for i := 0; i < n; i += 3 {
		commitT(t, e, alice, upd(fmt.Sprintf("c/d%d", i), M("i", Int(int64(-i)))))
	}
	commitT(t, e, alice, &pb.Write{Operation: upd("c/d1", M("m", Int(5))).Operation, UpdateMask: mask("m")})
	commitT(t, e, alice, &pb.Write{Operation: upd("c/d4", M("t", Int(1))).Operation, UpdateTransforms: []*pb.DocumentTransform_FieldTransform{tr("at", serverTime())}})
	commitT(t, e, alice, del("c/d7"))
	commitT(t, e, alice, del("c/d10"))
	commitT(t, e, alice, upd("c/d10", M("again", Bool(true))))
	commitT(t, e, alice, upd("c/big", M("s", String(strings.Repeat("b", 4*maxCachedFormBytes)))))

	rels := []string{"c/big"}
	for i := range n {
		rels = append(rels, fmt.Sprintf("c/d%d", i))
	}
	// What alice's events saw, in order: her gets, then her writes over
	// each document (their document before), against what the store
	// holds (read as admin, whose events are left out).
	var want []event.Resource
	from := len(bus.History())
	for _, rel := range rels {
		if _, err := e.BatchGetDocuments(bg, alice, &pb.BatchGetDocumentsRequest{Database: testDB.String(), Documents: []string{name(rel)}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, resourceWant(getT(t, e, rel)))
	}
	for _, rel := range rels {
		want = append(want, resourceWant(getT(t, e, rel)))
		commitT(t, e, alice, upd(rel, M("last", Bool(true))))
	}
	var saw []event.Event
	for _, ev := range bus.History()[from:] {
		if ev.Kind == event.KindRequest && ev.Identity.UID == "alice" {
			saw = append(saw, ev)
		}
	}
	if len(saw) != len(want) {
		t.Fatalf("%d request events, want %d", len(saw), len(want))
	}
	for i, ev := range saw {
		if b := ev.Request.Seen.Before; b == nil || !reflect.DeepEqual(*b, want[i]) {
			t.Errorf("%s %s saw %+v, want %+v", ev.Method, ev.Path, b, want[i])
		}
	}
}

// resourceWant is d as a request event's resource says it.
func resourceWant(d *pb.Document) event.Resource {
	if d == nil {
		return event.Resource{}
	}
	return event.Resource{Exists: true, Data: EncodeFields(d.Fields, testDB)}
}

// TestFormCacheConcurrent reads and writes the same documents at once
// (run it with -race): every get's event holds the form of the version
// it read.
func TestFormCacheConcurrent(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{History: 100000})
	e := New(Options{Rules: AllowAll, Events: bus})
	alice := identity.NewUser("alice", nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				rel := fmt.Sprintf("c/d%d", i%8)
				if w%2 == 0 {
					commitT(t, e, alice, upd(rel, M("v", Int(int64(i)), "w", Int(int64(w)))))
					continue
				}
				rs, err := e.BatchGetDocuments(bg, alice, &pb.BatchGetDocumentsRequest{Database: testDB.String(), Documents: []string{name(rel)}})
				if err != nil {
					t.Error(err)
					return
				}
				_ = rs
			}
		})
	}
	wg.Wait()
	// Each get event's document is one a write sent: v and w agree
	// with some write's pair.
	for _, ev := range bus.History() {
		if ev.Kind != event.KindRequest || ev.Method != "get" || !ev.Request.Seen.Before.Exists {
			continue
		}
		data, ok := ev.Request.Seen.Before.Data.(map[string]any)
		if !ok || len(data) != 2 || data["v"] == nil || data["w"] == nil {
			t.Errorf("get event saw %v", ev.Request.Seen.Before.Data)
		}
	}
}
