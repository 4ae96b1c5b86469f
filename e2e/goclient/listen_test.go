package goclient

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"

	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// Several query listeners and a document listener on one client, each
// seeing exactly its own changes.
func TestListeners(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client(t)
	cities := c.Collection("cities")
	cities.Doc("SF").Set(bg, map[string]any{"state": "CA", "pop": 1})
	cities.Doc("NY").Set(bg, map[string]any{"state": "NY", "pop": 2})

	ca := cities.Where("state", "==", "CA").Snapshots(bg)
	defer ca.Stop()
	big := cities.Where("pop", ">=", 10).OrderBy("pop", firestore.Desc).Snapshots(bg)
	defer big.Stop()
	sf := cities.Doc("SF").Snapshots(bg)
	defer sf.Stop()
	missing := cities.Doc("LA").Snapshots(bg)
	defer missing.Stop()

	seen := map[*firestore.QuerySnapshot]string{}
	qids := func(qs *firestore.QuerySnapshot) string {
		if ids, ok := seen[qs]; ok {
			return ids // the snapshot's iterator reads once
		}
		var out []string
		for _, d := range must(qs.Documents.GetAll()) {
			out = append(out, d.Ref.ID)
		}
		seen[qs] = fmt.Sprint(out)
		return seen[qs]
	}
	changes := func(qs *firestore.QuerySnapshot) string {
		var out []string
		for _, ch := range qs.Changes {
			out = append(out, fmt.Sprintf("%v:%s", ch.Kind, ch.Doc.Ref.ID))
		}
		sort.Strings(out)
		return fmt.Sprint(out)
	}
	if got := qids(next(t, "CA initial", ca.Next)); got != "[SF]" {
		t.Errorf("CA initial = %s", got)
	}
	if got := qids(next(t, "big initial", big.Next)); got != "[]" {
		t.Errorf("big initial = %s", got)
	}
	if d := next(t, "SF initial", sf.Next); !d.Exists() || d.Data()["pop"] != int64(1) {
		t.Errorf("SF initial = %v", d.Data())
	}
	if d := next(t, "LA initial", missing.Next); d.Exists() {
		t.Errorf("LA initial exists")
	}

	// One write touching every listener.
	cities.Doc("LA").Set(bg, map[string]any{"state": "CA", "pop": 30})
	if qs := next(t, "CA after LA", ca.Next); qids(qs) != "[LA SF]" || changes(qs) != "[DocumentAdded:LA]" {
		t.Errorf("CA after LA = %s %s", qids(qs), changes(qs))
	}
	if qs := next(t, "big after LA", big.Next); qids(qs) != "[LA]" {
		t.Errorf("big after LA = %s", qids(qs))
	}
	if d := next(t, "LA created", missing.Next); !d.Exists() {
		t.Errorf("LA listener did not see the create")
	}

	// A modification moving a document between queries.
	cities.Doc("SF").Update(bg, []firestore.Update{{Path: "pop", Value: 50}})
	if qs := next(t, "big after SF", big.Next); qids(qs) != "[SF LA]" {
		t.Errorf("big after SF grew = %s", qids(qs))
	}
	if qs := next(t, "CA after SF", ca.Next); qids(qs) != "[LA SF]" || changes(qs) != "[DocumentModified:SF]" {
		t.Errorf("CA after SF grew = %s %s", qids(qs), changes(qs))
	}
	if d := next(t, "SF modified", sf.Next); d.Data()["pop"] != int64(50) {
		t.Errorf("SF listener = %v", d.Data())
	}

	// A delete.
	cities.Doc("SF").Delete(bg)
	if qs := next(t, "CA after delete", ca.Next); qids(qs) != "[LA]" || changes(qs) != "[DocumentRemoved:SF]" {
		t.Errorf("CA after delete = %s %s", qids(qs), changes(qs))
	}
	if d := next(t, "SF deleted", sf.Next); d.Exists() {
		t.Errorf("SF listener still sees the document")
	}
}

// A raw Listen stream carrying several targets with client-chosen ids, as
// the JS SDK multiplexes them, and removing one.
func TestListenStreamTargets(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client(t)
	c.Doc("a/0").Set(bg, map[string]any{"x": 0})
	c.Doc("a/1").Set(bg, map[string]any{"x": 1})
	rc := raw(t, s, "owner")
	ls, err := rc.Listen(bg)
	if err != nil {
		t.Fatal(err)
	}
	add := func(id int32, tg *pb.Target) {
		tg.TargetId = id
		if err := ls.Send(&pb.ListenRequest{Database: dbPath(s), TargetChange: &pb.ListenRequest_AddTarget{AddTarget: tg}}); err != nil {
			t.Fatal(err)
		}
	}
	add(1002, &pb.Target{TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{docPath(s, "a/1")}}}})
	add(1004, &pb.Target{TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: dbPath(s) + "/documents",
		QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "a"}}}}}}})
	// Read until both targets are CURRENT and a global consistent point follows.
	current := map[int32]bool{}
	var resume []byte
	for !(current[1002] && current[1004] && resume != nil) {
		r := next(t, "listen", ls.Recv)
		if tc := r.GetTargetChange(); tc != nil {
			switch {
			case tc.TargetChangeType == pb.TargetChange_CURRENT:
				for _, id := range tc.TargetIds {
					current[id] = true
				}
			case tc.TargetChangeType == pb.TargetChange_NO_CHANGE && len(tc.TargetIds) == 0 && tc.ReadTime != nil:
				if current[1002] && current[1004] {
					resume = tc.ResumeToken
				}
			}
		}
	}
	// Remove one target, then write: only the other hears about it.
	ls.Send(&pb.ListenRequest{Database: dbPath(s), TargetChange: &pb.ListenRequest_RemoveTarget{RemoveTarget: 1002}})
	r := next(t, "remove", ls.Recv)
	if tc := r.GetTargetChange(); tc.GetTargetChangeType() != pb.TargetChange_REMOVE || fmt.Sprint(tc.GetTargetIds()) != "[1002]" {
		t.Fatalf("after remove_target: %v", r)
	}
	c.Doc("a/1").Set(bg, map[string]any{"x": 2})
	for {
		r := next(t, "after write", ls.Recv)
		if dc := r.GetDocumentChange(); dc != nil {
			if fmt.Sprint(dc.TargetIds) != "[1004]" {
				t.Errorf("document change for targets %v", dc.TargetIds)
			}
		}
		if tc := r.GetTargetChange(); tc != nil && tc.TargetChangeType == pb.TargetChange_NO_CHANGE && len(tc.TargetIds) == 0 {
			break
		}
	}
	// A target on a bad query is removed with its cause; the stream lives on.
	add(1006, &pb.Target{TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{"projects/x"}}}})
	r = next(t, "bad target", ls.Recv)
	if tc := r.GetTargetChange(); tc.GetTargetChangeType() != pb.TargetChange_REMOVE || codes.Code(tc.GetCause().GetCode()) != codes.InvalidArgument {
		t.Errorf("bad target: %v", r)
	}
	ls.CloseSend()

	// Resuming the query target from the token sends only what changed
	// since (a/1), not the unchanged a/0.
	ls2, err := rc.Listen(bg)
	if err != nil {
		t.Fatal(err)
	}
	ls = ls2
	add(7, &pb.Target{ResumeType: &pb.Target_ResumeToken{ResumeToken: resume},
		TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: dbPath(s) + "/documents",
			QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "a"}}}}}}})
	var changed []string
	for {
		r := next(t, "resumed", ls2.Recv)
		if dc := r.GetDocumentChange(); dc != nil {
			changed = append(changed, dc.Document.Name[len(docPath(s, "")):])
		}
		if tc := r.GetTargetChange(); tc != nil && tc.TargetChangeType == pb.TargetChange_NO_CHANGE && len(tc.TargetIds) == 0 {
			break
		}
	}
	if fmt.Sprint(changed) != "[a/1]" {
		t.Errorf("resumed target sent %v, want [a/1]", changed)
	}
	ls2.CloseSend()
}

// A listener resumes after the server goes away and comes back on the same
// port: it receives what changed while it was disconnected, and nothing
// twice.
// conformance: firestore.listen.resume
func TestListenResumeAfterReconnect(t *testing.T) {
	t.Parallel()
	s1 := start(t)
	c := s1.Client(t)
	c.Doc("r/1").Set(bg, map[string]any{"v": 1})
	it := c.Collection("r").Snapshots(bg)
	defer it.Stop()
	if qs := next(t, "initial", it.Next); qs.Size != 1 {
		t.Fatalf("initial size %d", qs.Size)
	}
	// The server stops (streams end with UNAVAILABLE); a write lands in
	// the same sandbox meanwhile; a new server takes the same address.
	s1.Close()
	admin := testfs.Of(s1.Sandbox).Admin()
	if err := admin.SetDocument(bg, "r/2", map[string]any{"v": 2}); err != nil {
		t.Fatal(err)
	}
	var s2 *fstest.Server
	// The old listener's port may take a moment to be free again.
	await.Poll(5*time.Second, func() bool {
		defer func() { recover() }()
		s2 = fstest.Start(&quietTB{TB: t}, fstest.Options{Sandbox: s1.Sandbox, Addr: s1.Addr, Rules: rules})
		return s2 != nil
	})
	if s2 == nil {
		t.Fatalf("could not restart on %s", s1.Addr)
	}
	defer s2.Close()
	qs := next(t, "after reconnect", it.Next)
	if qs.Size != 2 || len(qs.Changes) != 1 || qs.Changes[0].Doc.Ref.ID != "2" || qs.Changes[0].Kind != firestore.DocumentAdded {
		t.Errorf("after reconnect: size %d, changes %v", qs.Size, qs.Changes)
	}
	c.Doc("r/3").Set(bg, map[string]any{"v": 3})
	if qs := next(t, "live again", it.Next); qs.Size != 3 {
		t.Errorf("after a new write: size %d", qs.Size)
	}
}

// quietTB turns Fatalf into a panic so a retry loop can recover (the port
// may take a moment to be free again).
type quietTB struct{ testing.TB }

func (q *quietTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
