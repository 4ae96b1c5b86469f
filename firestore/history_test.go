package firestore

import (
	"errors"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestHistoryBoundedByBytes: overwriting documents keeps at most
// HistoryBytes of old versions; a read older than what is kept is
// FAILED_PRECONDITION naming the oldest available read time, and a read
// at that time works.
func TestHistoryBoundedByBytes(t *testing.T) {
	t.Parallel()
	const limit = 50 << 10
	e := New(Options{HistoryBytes: limit})
	payload := String(strings.Repeat("x", 1000))
	var first time.Time
	for i := range 2000 {
		r := commitT(t, e, admin, upd("h/"+itoa(i%16), M("v", payload, "i", Int(int64(i)))))
		if i == 0 {
			first = r.CommitTime.AsTime()
		}
	}
	n, bytes, oldest := e.HistoryStats(testDB)
	if bytes > limit || n == 0 {
		t.Fatalf("history: %d versions, %d bytes (limit %d)", n, bytes, limit)
	}
	if !oldest.After(first) {
		t.Fatalf("oldest read time %v did not move past the first commit %v", oldest, first)
	}
	_, err := e.GetDocument(bg, admin, &pb.GetDocumentRequest{Name: name("h/0"),
		ConsistencySelector: &pb.GetDocumentRequest_ReadTime{ReadTime: timestamppb.New(first)}})
	if !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "oldest available read time "+oldest.UTC().Format(time.RFC3339Nano)) {
		t.Fatalf("read before the kept history: %v", err)
	}
	d, err := e.GetDocument(bg, admin, &pb.GetDocumentRequest{Name: name("h/15"),
		ConsistencySelector: &pb.GetDocumentRequest_ReadTime{ReadTime: timestamppb.New(oldest)}})
	if err != nil || d.Fields["i"].GetIntegerValue() >= 2000-16 {
		t.Fatalf("read at the oldest available time: %v %v", d, err)
	}
}

// TestHistoryBoundedByAge: versions older than History go even for
// documents nobody writes again, and a deleted document whose history is
// gone leaves nothing behind.
func TestHistoryBoundedByAge(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := New(Options{Now: clock.Now, History: time.Minute})
	for i := range 100 {
		setT(t, e, "old/a", M("i", Int(int64(i))))
	}
	commitT(t, e, admin, del("old/a"))
	if n, _, _ := e.HistoryStats(testDB); n != 100 {
		t.Fatalf("%d versions kept, want 100", n)
	}
	clock.t = clock.t.Add(2 * time.Minute)
	setT(t, e, "new/b", M("i", Int(1)))
	n, bytes, oldest := e.HistoryStats(testDB)
	if n != 0 || bytes != 0 {
		t.Fatalf("after the window: %d versions, %d bytes", n, bytes)
	}
	if want := clock.t.Add(-time.Minute); oldest.Before(want.Add(-time.Second)) {
		t.Errorf("oldest read time %v, want about %v", oldest, want)
	}
	db := e.db(testDB)
	db.st.RLock()
	kept := db.st.Entry("old/a") != nil
	db.st.RUnlock()
	if kept {
		t.Error("the deleted document's tombstone is still kept")
	}
}

// TestReadOnlyTransactionOutlivedByHistory: a read-only transaction whose
// read time falls out of the kept history fails clearly instead of reading
// newer data.
func TestReadOnlyTransactionOutlivedByHistory(t *testing.T) {
	t.Parallel()
	e := New(Options{HistoryBytes: 10 << 10})
	setT(t, e, "r/a", M("v", Int(0)))
	bt, err := e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String(),
		Options: &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		setT(t, e, "r/a", M("v", Int(int64(i)), "pad", String(strings.Repeat("p", 200))))
	}
	_, err = e.GetDocument(bg, admin, &pb.GetDocumentRequest{Name: name("r/a"),
		ConsistencySelector: &pb.GetDocumentRequest_Transaction{Transaction: bt.Transaction}})
	if !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "oldest available read time") {
		t.Fatalf("read in an outlived read-only transaction: %v", err)
	}
}
