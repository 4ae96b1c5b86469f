package firestore

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
)

// slowPersister makes every commit wait a little for durability, so that
// commits overlap reads: the latest state (what a commit checks) runs
// ahead of the durable one (what reads see).
type slowPersister struct{}

func (slowPersister) Commit(DatabaseName, time.Time, []Change) error {
	time.Sleep(200 * time.Microsecond)
	return nil
}

// txnRead reads the documents rels in transaction tx in one of the ways
// the SDKs do: a batch get, a query over their collection, or, when tx is
// nil, a batch get that opens the transaction (read with
// new_transaction); it returns the transaction and each document's n.
func txnRead(e *Engine, tx []byte, how int, rels ...string) ([]byte, []int64, error) {
	get := &pb.BatchGetDocumentsRequest{Database: testDB.String()}
	for _, rel := range rels {
		get.Documents = append(get.Documents, name(rel))
	}
	if tx == nil {
		get.ConsistencySelector = &pb.BatchGetDocumentsRequest_NewTransaction{NewTransaction: &pb.TransactionOptions{}}
	} else {
		get.ConsistencySelector = &pb.BatchGetDocumentsRequest_Transaction{Transaction: tx}
	}
	n := map[string]int64{}
	if tx != nil && how%2 == 1 {
		rs, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(),
			QueryType:           &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("acct")}},
			ConsistencySelector: &pb.RunQueryRequest_Transaction{Transaction: tx}})
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rs {
			if d := r.GetDocument(); d != nil {
				n["acct/"+d.Name[len(d.Name)-1:]] = d.Fields["n"].GetIntegerValue()
			}
		}
	} else {
		rs, err := e.BatchGetDocuments(bg, admin, get)
		if err != nil {
			return nil, nil, err
		}
		if tx == nil {
			tx = rs[0].GetTransaction()
		}
		for i, r := range rs {
			n[rels[i]] = r.GetFound().GetFields()["n"].GetIntegerValue()
		}
	}
	out := make([]int64, len(rels))
	for i, rel := range rels {
		out[i] = n[rel]
	}
	return tx, out, nil
}

// TestTransactionsSerialize: read-write transactions reading under the
// database's read lock still serialize. Workers move amounts between
// accounts and count their moves, each move a transaction that reads two
// accounts and the counter (by batch get, by query, or by a batch get
// that opens the transaction) and writes all three, while read-only
// transactions and plain reads check that the accounts' sum never
// changes. A lost update (a commit not refused although what its
// transaction read changed meanwhile) leaves the counter short of the
// moves made or the sum changed.
func TestTransactionsSerialize(t *testing.T) {
	t.Parallel()
	e := New(Options{Rules: AllowAll, Persister: slowPersister{}, Events: event.NewBus(event.Options{})})
	const accounts, total = 4, 1000
	acct := func(i int) string { return fmt.Sprintf("acct/%d", i) }
	for i := range accounts {
		setT(t, e, acct(i), M("n", Int(total/accounts)))
	}
	setT(t, e, "meta/moves", M("n", Int(0)))

	const workers, moves = 4, 15
	var (
		wg      sync.WaitGroup
		stop    = make(chan struct{})
		aborted sync.Map
	)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range moves {
				from, to := (w+m)%accounts, (w+2*m+1)%accounts
				if from == to {
					to = (to + 1) % accounts
				}
				how := w + m
				var err error
				for attempt := 0; ; attempt++ {
					if attempt == 200 {
						fail("worker %d move %d: too many attempts", w, m)
						return
					}
					err = func() error {
						var tx []byte
						if how%3 != 2 {
							b, err := e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String()})
							if err != nil {
								return err
							}
							tx = b.Transaction
						}
						tx, ab, err := txnRead(e, tx, how, acct(from), acct(to))
						if err != nil {
							return err
						}
						_, c, err := txnRead(e, tx, 0, "meta/moves")
						if err != nil {
							return err
						}
						time.Sleep(50 * time.Microsecond) // let other transactions in between
						_, err = e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Transaction: tx, Writes: []*pb.Write{
							upd(acct(from), M("n", Int(ab[0]-1))),
							upd(acct(to), M("n", Int(ab[1]+1))),
							upd("meta/moves", M("n", Int(c[0]+1))),
						}})
						return err
					}()
					if !errors.Is(err, ErrAborted) {
						break
					}
					aborted.Store(w, true)
				}
				if err != nil {
					fail("worker %d move %d: %v", w, m, err)
					return
				}
			}
		}()
	}
	// Readers: every consistent view has the accounts summing to total.
	rels := make([]string, accounts)
	for i := range rels {
		rels[i] = acct(i)
	}
	var rwg sync.WaitGroup
	for r := range 2 {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req := &pb.BatchGetDocumentsRequest{Database: testDB.String()}
				for _, rel := range rels {
					req.Documents = append(req.Documents, name(rel))
				}
				if r == 0 {
					req.ConsistencySelector = &pb.BatchGetDocumentsRequest_NewTransaction{NewTransaction: &pb.TransactionOptions{
						Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}}}
				}
				rs, err := e.BatchGetDocuments(bg, admin, req)
				if err != nil {
					fail("reader %d: %v", r, err)
					return
				}
				var sum int64
				for _, x := range rs {
					sum += x.GetFound().GetFields()["n"].GetIntegerValue()
				}
				if sum != total {
					fail("reader %d saw the accounts sum to %d, want %d", r, sum, total)
					return
				}
				time.Sleep(100 * time.Microsecond)
				if tx := rs[0].GetTransaction(); tx != nil {
					if err := e.Rollback(bg, admin, &pb.RollbackRequest{Database: testDB.String(), Transaction: tx}); err != nil {
						fail("rollback: %v", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()

	var sum int64
	for i := range accounts {
		sum += getT(t, e, acct(i)).Fields["n"].GetIntegerValue()
	}
	if sum != total {
		t.Errorf("accounts sum to %d, want %d", sum, total)
	}
	if n := getT(t, e, "meta/moves").Fields["n"].GetIntegerValue(); n != workers*moves {
		t.Errorf("moves counted %d, want %d", n, workers*moves)
	}
	n := 0
	aborted.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Errorf("no transaction was ever aborted: the workers did not contend, so the test proves nothing")
	}
	// Every transaction ended: committed, aborted or rolled back.
	db := e.db(testDB)
	db.txnMu.Lock()
	open := len(db.txns)
	db.txnMu.Unlock()
	// Aborted commits end their transaction too (the client begins anew).
	if open != 0 {
		t.Errorf("%d transactions still open", open)
	}
}

// TestTransactionReadsShareTheReadLock: opening a transaction, reading in
// one (by batch get, by query, by a batch get that opens it) and rolling
// it back all go on while another reader holds the database's read lock.
// They took the lock exclusively, so each waited for every read in
// flight, and every read for them.
func TestTransactionReadsShareTheReadLock(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "acct/0", M("n", Int(1)))
	db := e.db(testDB)
	db.st.RLock() // a read in flight
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			b, err := e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String()})
			if err != nil {
				return err
			}
			if _, n, err := txnRead(e, b.Transaction, 0, "acct/0"); err != nil || n[0] != 1 {
				return fmt.Errorf("batch get in the transaction: %v %v", n, err)
			}
			if _, n, err := txnRead(e, b.Transaction, 1, "acct/0"); err != nil || n[0] != 1 {
				return fmt.Errorf("query in the transaction: %v %v", n, err)
			}
			if err := e.Rollback(bg, admin, &pb.RollbackRequest{Database: testDB.String(), Transaction: b.Transaction}); err != nil {
				return err
			}
			tx, n, err := txnRead(e, nil, 0, "acct/0")
			if err != nil || n[0] != 1 {
				return fmt.Errorf("batch get opening a transaction: %v %v", n, err)
			}
			return e.Rollback(bg, admin, &pb.RollbackRequest{Database: testDB.String(), Transaction: tx})
		}()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(time.Minute):
		t.Error("the transaction's calls wait for the read lock to be released")
	}
	db.st.RUnlock()
}

// TestDocVersionsMatchesMap checks a commit's docVersions against a map
// and the order of first insertion, below and past the size where it
// starts indexing with a map.
func TestDocVersionsMatchesMap(t *testing.T) {
	for _, n := range []int{1, 3, smallDocs, smallDocs + 1, 40} {
		var m docVersions
		m.reset()
		ref := map[string]*pb.Document{}
		var order []string
		for i := range 3 * n {
			rel := fmt.Sprintf("c/%d", (i*7)%n)
			d := &pb.Document{Name: fmt.Sprint(i)}
			if i%3 == 0 {
				m.setFirst(rel, d)
				if _, ok := ref[rel]; !ok {
					ref[rel] = d
					order = append(order, rel)
				}
			} else {
				m.set(rel, d)
				if _, ok := ref[rel]; !ok {
					order = append(order, rel)
				}
				ref[rel] = d
			}
		}
		if !slices.Equal(m.keys, order) {
			t.Fatalf("n=%d: keys %v, want %v", n, m.keys, order)
		}
		for rel, want := range ref {
			if got, ok := m.get(rel); !ok || got != want {
				t.Fatalf("n=%d: %s is %v, want %v", n, rel, got, want)
			}
		}
		if _, ok := m.get("c/absent"); ok {
			t.Fatalf("n=%d: an absent key is set", n)
		}
	}
}

// TestTransactionValidatesEveryRead checks that a commit aborts when any
// document its transaction read changed since — whether the read was one
// of the first ones (kept inline) or a later one (kept in a map) — and
// that the version checked is the first read of each path.
func TestTransactionValidatesEveryRead(t *testing.T) {
	t.Parallel()
	const docs = maxTxnReads + 3
	rel := func(i int) string { return fmt.Sprintf("acct/%d", i) }
	begin := func(e *Engine) []byte {
		b, err := e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String()})
		if err != nil {
			t.Fatal(err)
		}
		return b.Transaction
	}
	get := func(e *Engine, tx []byte, rels ...string) {
		req := &pb.BatchGetDocumentsRequest{Database: testDB.String(), ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: tx}}
		for _, r := range rels {
			req.Documents = append(req.Documents, name(r))
		}
		if _, err := e.BatchGetDocuments(bg, admin, req); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(e *Engine, tx []byte) error {
		_, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Transaction: tx, Writes: []*pb.Write{upd("out/x", M("n", Int(1)))}})
		return err
	}
	for changed := -1; changed < docs; changed++ {
		e := newTestEngine(t)
		for i := range docs {
			setT(t, e, rel(i), M("n", Int(0)))
		}
		tx := begin(e)
		for i := range docs {
			get(e, tx, rel(i)) // one read at a time: inline first, then the map
		}
		get(e, tx, rel(0), rel(docs-1)) // read again: the first reads count
		if changed >= 0 {
			setT(t, e, rel(changed), M("n", Int(1)))
		}
		err := commit(e, tx)
		if changed < 0 && err != nil {
			t.Errorf("nothing changed: commit failed: %v", err)
		}
		if changed >= 0 && !errors.Is(err, ErrAborted) {
			t.Errorf("read %d changed: commit = %v, want aborted", changed, err)
		}
	}
	// A path read again after another write changed it: the first
	// version read is the one the commit checks.
	e := newTestEngine(t)
	setT(t, e, rel(0), M("n", Int(0)))
	tx := begin(e)
	get(e, tx, rel(0))
	setT(t, e, rel(0), M("n", Int(1)))
	get(e, tx, rel(0))
	if err := commit(e, tx); !errors.Is(err, ErrAborted) {
		t.Errorf("read again after a change: commit = %v, want aborted", err)
	}
}
