package firestore

import (
	"reflect"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// A transaction's commit shares the JSON form of a version its read's
// event encoded (txn.forms) instead of encoding it again: its events say
// the same as when they encoded it themselves, and a document the
// transaction did not read gets its own form.
func TestTxnCommitSharesTheReadForm(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	e := New(Options{Rules: AllowAll, Events: bus})
	alice := identity.NewUser("alice", nil)
	commitT(t, e, alice, upd("c/a", M("v", Int(1), "s", String("x"), "m", Map(M("k", Int(2))))))
	commitT(t, e, alice, upd("c/b", M("w", Int(3))))
	from := len(bus.History())

	b, err := e.BeginTransaction(bg, alice, &pb.BeginTransactionRequest{Database: testDB.String()})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := e.BatchGetDocuments(bg, alice, &pb.BatchGetDocumentsRequest{Database: testDB.String(), Documents: []string{name("c/a")},
		ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: b.Transaction}})
	if err != nil {
		t.Fatal(err)
	}
	read := rs[0].GetFound()
	readB := getT(t, e, "c/b") // outside the transaction
	if _, err := e.Commit(bg, alice, &pb.CommitRequest{Database: testDB.String(), Transaction: b.Transaction, Writes: []*pb.Write{
		{Operation: &pb.Write_Update{Update: &pb.Document{Name: name("c/a"), Fields: M("v", Int(4))}}, UpdateMask: &pb.DocumentMask{FieldPaths: []string{"v"}}},
		upd("c/b", M("w", Int(5))),
	}}); err != nil {
		t.Fatal(err)
	}

	wantA, wantB := EncodeFields(read.Fields, testDB), EncodeFields(readB.Fields, testDB)
	var readForm any
	befores := map[string][]any{} // path -> the befores the commit's events carry
	for _, ev := range bus.History()[from:] {
		switch {
		case ev.Kind == event.KindRequest && ev.Method == "get" && ev.Path == "c/a" && readForm == nil:
			readForm = ev.Request.Seen.Before.Data
		case ev.Kind == event.KindRequest && ev.Method != "get":
			befores[ev.Path] = append(befores[ev.Path], ev.Request.Seen.Before.Data)
		case ev.Kind == event.KindCommit:
			befores[ev.Path] = append(befores[ev.Path], ev.Commit.Before)
		}
	}
	if !reflect.DeepEqual(readForm, wantA) {
		t.Fatalf("the read's event has %v, want %v", readForm, wantA)
	}
	if len(befores["c/a"]) != 2 || len(befores["c/b"]) != 2 {
		t.Fatalf("befores = %v", befores)
	}
	for _, got := range befores["c/a"] {
		if !reflect.DeepEqual(got, wantA) {
			t.Errorf("c/a's commit events say before = %v, want %v", got, wantA)
		}
		if reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(readForm).UnsafePointer() {
			t.Errorf("c/a's commit events encode the version the transaction read again")
		}
	}
	for _, got := range befores["c/b"] {
		if !reflect.DeepEqual(got, wantB) {
			t.Errorf("c/b's commit events say before = %v, want %v", got, wantB)
		}
	}
}
