package firestore

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
)

// countingPersister counts its calls and fails them while failing is set.
type countingPersister struct {
	mu      sync.Mutex
	calls   int
	changes int
	failing bool
}

func (p *countingPersister) Commit(_ DatabaseName, _ time.Time, changes []Change) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing {
		return errors.New("disk full")
	}
	p.calls++
	p.changes += len(changes)
	return nil
}

// A BatchWrite's writes are independent commits, each with its own status,
// queued together so that a durable store makes them durable in a few
// store transactions instead of one each.
func TestBatchWriteDurable(t *testing.T) {
	t.Parallel()
	p := &countingPersister{}
	e := New(Options{Rules: AllowAll, Persister: p})
	setT(t, e, "b/exists", M("v", Int(0)))
	p.mu.Lock()
	p.calls, p.changes = 0, 0
	p.mu.Unlock()
	var writes []*pb.Write
	for i := range 20 {
		writes = append(writes, upd(fmt.Sprintf("b/d%02d", i), M("v", Int(int64(i)))))
	}
	// Two that fail on their own: a create of an existing document, an
	// update of a missing one.
	writes[5].CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}
	writes[5].Operation = &pb.Write_Update{Update: &pb.Document{Name: name("b/exists"), Fields: M("v", Int(5))}}
	writes[9].CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}
	resp, err := e.BatchWrite(bg, admin, &pb.BatchWriteRequest{Database: testDB.String(), Writes: writes})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range resp.Status {
		want := codes.OK
		switch i {
		case 5:
			want = codes.AlreadyExists
		case 9:
			want = codes.NotFound
		}
		if codes.Code(st.GetCode()) != want {
			t.Errorf("write %d: status %v, want %v", i, st, want)
		}
		if want == codes.OK && resp.WriteResults[i].GetUpdateTime() == nil {
			t.Errorf("write %d: no update time", i)
		}
	}
	for i := range 20 {
		d := getT(t, e, fmt.Sprintf("b/d%02d", i))
		if (d == nil) != (i == 5 || i == 9) {
			t.Errorf("b/d%02d = %v after the batch", i, d)
		}
	}
	p.mu.Lock()
	calls, changes := p.calls, p.changes
	p.mu.Unlock()
	if changes != 18 || calls >= 18 {
		t.Errorf("18 writes took %d store transactions with %d changes", calls, changes)
	}

	// When the store fails, every write of the batch fails, and none
	// remains.
	p.mu.Lock()
	p.failing = true
	p.mu.Unlock()
	resp, err = e.BatchWrite(bg, admin, &pb.BatchWriteRequest{Database: testDB.String(), Writes: []*pb.Write{
		upd("b/f1", M("v", Int(1))), upd("b/f2", M("v", Int(2)))}})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range resp.Status {
		if codes.Code(st.GetCode()) != codes.Unavailable {
			t.Errorf("write %d to a failing store: status %v", i, st)
		}
	}
	p.mu.Lock()
	p.failing = false
	p.mu.Unlock()
	if getT(t, e, "b/f1") != nil || getT(t, e, "b/f2") != nil {
		t.Error("a write the store refused remains")
	}
}
