package goclient

import (
	"context"
	"errors"
	"sync"
	"testing"

	"cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
)

// Two clients increment one counter 20 times each in read-modify-write
// transactions: contention aborts some attempts, the client retries, and
// no increment is lost.
// conformance: firestore.txn.contention
func TestTransactionContention(t *testing.T) {
	t.Parallel()
	s := start(t)
	c1, c2 := s.Client(t), s.Client(t)
	counter := c1.Doc("counters/c")
	if _, err := counter.Set(bg, map[string]any{"n": 0}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, c := range []*firestore.Client{c1, c2} {
		wg.Go(func() {
			ref := c.Doc("counters/c")
			for range 20 {
				err := c.RunTransaction(bg, func(ctx context.Context, tx *firestore.Transaction) error {
					snap, err := tx.Get(ref)
					if err != nil {
						return err
					}
					return tx.Set(ref, map[string]any{"n": snap.Data()["n"].(int64) + 1})
				})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("transactions failed: %v", errs)
	}
	snap, err := counter.Get(bg)
	if err != nil || snap.Data()["n"] != int64(40) {
		t.Errorf("counter = %v %v, want 40", snap.Data(), err)
	}
}

// A transaction whose function fails is rolled back: nothing it wrote is
// visible, and its id is dead afterwards.
func TestTransactionRollbackAndReadOnly(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client(t)
	ref := c.Doc("t/x")
	ref.Set(bg, map[string]any{"n": 1})
	boom := errors.New("boom")
	err := c.RunTransaction(bg, func(ctx context.Context, tx *firestore.Transaction) error {
		if err := tx.Set(ref, map[string]any{"n": 99}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if snap, _ := ref.Get(bg); snap.Data()["n"] != int64(1) {
		t.Errorf("rolled-back write visible: %v", snap.Data())
	}
	// Read-only transactions read and may not write.
	err = c.RunTransaction(bg, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(ref)
		if err != nil {
			return err
		}
		if snap.Data()["n"] != int64(1) {
			t.Errorf("read-only read = %v", snap.Data())
		}
		docs, err := tx.Documents(c.Collection("t")).GetAll()
		if err != nil || len(docs) != 1 {
			t.Errorf("read-only query = %d %v", len(docs), err)
		}
		return nil
	}, firestore.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	// A transaction that reads a document another client changes before it
	// commits is aborted (the Go client retries only ABORTED).
	rc := raw(t, s, "owner")
	tx, err := rc.BeginTransaction(bg, &pb.BeginTransactionRequest{Database: dbPath(s)})
	if err != nil {
		t.Fatal(err)
	}
	bg2, err := rc.BatchGetDocuments(bg, &pb.BatchGetDocumentsRequest{Database: dbPath(s), Documents: []string{docPath(s, "t/x")},
		ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: tx.Transaction}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bg2.Recv(); err != nil {
		t.Fatal(err)
	}
	ref.Set(bg, map[string]any{"n": 2})
	_, err = rc.Commit(bg, &pb.CommitRequest{Database: dbPath(s), Transaction: tx.Transaction, Writes: []*pb.Write{{
		Operation: &pb.Write_Update{Update: &pb.Document{Name: docPath(s, "t/x"), Fields: map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: 3}}}}}}}})
	wantCode(t, "commit after a conflicting write", err, codes.Aborted)
}
