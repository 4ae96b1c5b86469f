package firestore

import (
	"reflect"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// TestBatchGetEventsAndResults checks what a get's responses and request
// events hold now that their parts are allocated together
// (newFoundResponse, requestParts): each response its own document and read
// time, each event the document it read (or none), however many a
// request reads.
func TestBatchGetEventsAndResults(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	e := New(Options{Rules: AllowAll, Events: bus})
	alice := identity.NewUser("alice", nil)
	commitT(t, e, alice, upd("c/a", M("v", Int(1), "s", String("x"))))
	commitT(t, e, alice, upd("c/b", M("v", Int(2))))
	from := len(bus.History())
	rs, err := e.BatchGetDocuments(bg, alice, &pb.BatchGetDocumentsRequest{Database: testDB.String(),
		Documents: []string{name("c/a"), name("c/z"), name("c/b")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].GetFound().GetName() != name("c/a") || rs[1].GetMissing() != name("c/z") || rs[2].GetFound().GetName() != name("c/b") {
		t.Fatalf("responses = %v", rs)
	}
	for _, r := range rs {
		if r.ReadTime == nil || r.ReadTime != rs[0].ReadTime {
			t.Errorf("read times differ: %v", rs)
		}
	}
	if rs[0].GetFound().Fields["v"].GetIntegerValue() != 1 || rs[2].GetFound().Fields["v"].GetIntegerValue() != 2 {
		t.Errorf("found = %v, %v", rs[0].GetFound(), rs[2].GetFound())
	}
	h := bus.History()[from:]
	if len(h) != 3 {
		t.Fatalf("events = %+v", h)
	}
	want := []struct {
		path   string
		exists bool
		data   any
	}{
		{"c/a", true, EncodeFields(rs[0].GetFound().Fields, testDB)},
		{"c/z", false, nil},
		{"c/b", true, EncodeFields(rs[2].GetFound().Fields, testDB)},
	}
	for i, w := range want {
		ev := h[i]
		if ev.Kind != event.KindRequest || ev.Method != "get" || ev.Path != w.path || ev.Request == nil || ev.Request.Seen == nil || ev.Request.Seen.Before == nil {
			t.Fatalf("event %d = %+v", i, ev)
		}
		if b := ev.Request.Seen.Before; b.Exists != w.exists || !reflect.DeepEqual(b.Data, w.data) {
			t.Errorf("event %d saw %+v, want exists=%v data=%v", i, *b, w.exists, w.data)
		}
	}
	if h[0].Request.Seen == h[2].Request.Seen || h[0].Request.Seen.Before == h[2].Request.Seen.Before {
		t.Error("two reads' events share what they saw")
	}
}
