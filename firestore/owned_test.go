package firestore

import (
	"context"
	"reflect"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// ownedCtx is the context a gRPC server's unary call gives the engine.
var ownedCtx = WithDecodedRequest(context.Background(), 1<<20)

// TestOwnedRequestKeepsScalars checks that a commit of a request the
// engine owns (WithDecodedRequest) stores the scalars it sends as they
// are, while a request it does not own is copied: changing it afterwards
// changes nothing stored.
func TestOwnedRequestKeepsScalars(t *testing.T) {
	t.Parallel()
	e := New(Options{Rules: AllowAll})
	alice := identity.NewUser("alice", nil)

	owned := upd("c/owned", M("i", Int(1), "s", String("x"), "n", Null(), "b", Bool(true), "d", Double(1.5)))
	if _, err := e.Commit(ownedCtx, alice, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{owned}}); err != nil {
		t.Fatal(err)
	}
	if got := getT(t, e, "c/owned").Fields["i"]; got != owned.GetUpdate().Fields["i"] {
		t.Errorf("an owned request's scalar was copied: %v", got)
	}

	lent := upd("c/lent", M("i", Int(1), "s", String("x")))
	if _, err := e.Commit(context.Background(), alice, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{lent}}); err != nil {
		t.Fatal(err)
	}
	lent.GetUpdate().Fields["i"].ValueType = &pb.Value_IntegerValue{IntegerValue: 2}
	lent.GetUpdate().Fields["z"] = Int(3)
	if got := getT(t, e, "c/lent").Fields; len(got) != 2 || got["i"].GetIntegerValue() != 1 {
		t.Errorf("changing a request the engine does not own changed the stored document: %v", got)
	}
}

// TestOwnedRequestEventsAsCopied checks that an owned request (its
// scalars kept, not copied) gives the same stored documents, results
// and events as the same request not owned, and that the values the
// commit must change (a timestamp truncated to microseconds, a transform,
// a merge) are still copies: the owned request is left as sent.
func TestOwnedRequestEventsAsCopied(t *testing.T) {
	t.Parallel()
	sent := &timestamppb.Timestamp{Seconds: 1700000000, Nanos: 123456789}
	writes := func() []*pb.Write {
		return []*pb.Write{
			upd("c/a", M("i", Int(7), "s", String("x"))),
			upd("c/t", M("t", tsCopy(sent), "i", Int(1))),
			{Operation: upd("c/x", M("i", Int(1))).Operation, UpdateTransforms: []*pb.DocumentTransform_FieldTransform{tr("at", serverTime())}},
			{Operation: upd("c/a", M("m", Int(2))).Operation, UpdateMask: mask("m")},
			upd("c/n", M("arr", Array(Int(1), Map(M("t", tsCopy(sent)))))),
		}
	}
	run := func(ctx context.Context) (*pb.CommitResponse, []*pb.Write, []event.Event, map[string]*pb.Document) {
		bus := event.NewBus(event.Options{})
		e := New(Options{Rules: AllowAll, Events: bus, Now: func() time.Time { return time.Unix(1800000000, 0) }})
		ws := writes()
		resp, err := e.Commit(ctx, identity.NewUser("alice", nil), &pb.CommitRequest{Database: testDB.String(), Writes: ws})
		if err != nil {
			t.Fatal(err)
		}
		docs := map[string]*pb.Document{}
		for _, rel := range []string{"c/a", "c/t", "c/x", "c/n"} {
			docs[rel] = getT(t, e, rel)
		}
		return resp, ws, bus.History(), docs
	}
	wantResp, _, wantEvs, wantDocs := run(context.Background())
	resp, ws, evs, docs := run(ownedCtx)
	if !proto.Equal(resp, wantResp) {
		t.Errorf("response %v, want %v", resp, wantResp)
	}
	for rel, d := range wantDocs {
		if !proto.Equal(docs[rel], d) {
			t.Errorf("%s = %v, want %v", rel, docs[rel], d)
		}
	}
	if docs["c/t"].Fields["t"].GetTimestampValue().GetNanos() != 123456000 {
		t.Errorf("stored timestamp %v, want it truncated to microseconds", docs["c/t"].Fields["t"])
	}
	if len(evs) != len(wantEvs) {
		t.Fatalf("%d events, want %d", len(evs), len(wantEvs))
	}
	for i := range evs {
		a, b := evs[i], wantEvs[i]
		a.At, b.At = time.Time{}, time.Time{}
		if a.Request != nil && b.Request != nil {
			ar, br := *a.Request, *b.Request
			ar.DurationMs, br.DurationMs = 0, 0
			a.Request, b.Request = &ar, &br
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("event %d = %+v\nwant %+v", i, a, b)
		}
	}
	// What the owned request sent is as it was.
	if got := ws[1].GetUpdate().Fields["t"].GetTimestampValue(); !proto.Equal(got, sent) {
		t.Errorf("the request's timestamp became %v", got)
	}
	if got := ws[4].GetUpdate().Fields["arr"].GetArrayValue().Values[1].GetMapValue().Fields["t"].GetTimestampValue(); !proto.Equal(got, sent) {
		t.Errorf("the request's nested timestamp became %v", got)
	}
	if f := ws[2].GetUpdate().Fields; len(f) != 1 {
		t.Errorf("the transform set into the request's fields: %v", f)
	}
	if f := ws[3].GetUpdate().Fields; len(f) != 1 {
		t.Errorf("the merge changed the request's fields: %v", f)
	}
}

// tsCopy is a timestamp value holding a copy of t.
func tsCopy(t *timestamppb.Timestamp) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: proto.Clone(t).(*timestamppb.Timestamp)}}
}

// TestRequestContext checks the context WithDecodedRequest and
// WithRequestSizeAtMost return: the innermost facts count, the parent's
// values, deadline and cancellation show through, and it is one
// allocation.
func TestRequestContext(t *testing.T) {
	type otherKey struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
	owned := WithDecodedRequest(parent, 100)
	if !requestOwned(owned) || requestFactsOf(owned).atMost != 100 {
		t.Errorf("decoded request: owned %v, facts %+v", requestOwned(owned), requestFactsOf(owned))
	}
	sized := WithRequestSizeAtMost(owned, 50) // the innermost facts count
	if requestOwned(sized) || requestFactsOf(sized).atMost != 50 {
		t.Errorf("sized within a decoded request: owned %v, facts %+v", requestOwned(sized), requestFactsOf(sized))
	}
	if requestOwned(parent) || requestFactsOf(context.Background()) != nil {
		t.Error("a context without facts has some")
	}
	if sized.Value(otherKey{}) != "v" {
		t.Error("the parent's value is lost")
	}
	child, stop := context.WithCancel(sized)
	defer stop()
	cancel()
	<-child.Done() // cancellation reaches through
	if sized.Err() != context.Canceled || child.Err() != context.Canceled {
		t.Errorf("errors %v, %v after cancel", sized.Err(), child.Err())
	}
	if n := testing.AllocsPerRun(100, func() { requestContextSink = WithDecodedRequest(parent, 100) }); n != 1 {
		t.Errorf("WithDecodedRequest allocates %v times, want 1", n)
	}
	big := WithRequestSizeAtMost(context.Background(), MaxRequestBytes+1)
	if err := checkRequestSize(big, &pb.CommitRequest{Database: "x"}); err != nil {
		t.Errorf("a small request with a bound past the limit is sized: %v", err)
	}
}

// requestContextSink keeps TestRequestContext's contexts on the heap, as a
// server's are.
var requestContextSink context.Context
