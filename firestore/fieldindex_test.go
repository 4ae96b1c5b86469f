package firestore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
)

// randValue returns a value of a few types, with collisions, so that the
// index sees mixed types, equal values across int and double, and nulls.
func randValue(r *rand.Rand) *pb.Value {
	switch r.IntN(6) {
	case 0:
		return Double(float64(r.IntN(5)) + 0.5*float64(r.IntN(2)))
	case 1:
		return String(string(rune('a' + r.IntN(4))))
	case 2:
		return Null()
	default:
		return Int(int64(r.IntN(5)))
	}
}

// TestIndexedQueriesMatchScan runs random queries (equality, ranges,
// orders in both directions, cursors, limits, offsets, collection groups)
// through the index planner and through a full scan, interleaved with
// random writes that keep the indexes up to date, and requires identical
// results. The declared runs add array fields, array-contains filters and
// the indexes of declaredTestIndexes, declared before the first write or
// after the first 150 (built over them), and require that many queries
// walk a declared index, and that many walk one that covers them.
func TestIndexedQueriesMatchScan(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { t.Parallel(); indexedMatchScan(t, seed, false) })
		t.Run(fmt.Sprint("declared/", seed), func(t *testing.T) { t.Parallel(); indexedMatchScan(t, seed, true) })
	}
}

func indexedMatchScan(t *testing.T, seed uint64, declared bool) {
	r := rand.New(rand.NewPCG(seed, 7))
	e := newTestEngine(t)
	if declared && seed%2 == 0 {
		declareT(t, e, declaredTestIndexes)
	}
	write := func() {
		coll := []string{"c", "p/x/c", "p/y/c"}[r.IntN(3)]
		rel := fmt.Sprintf("%s/d%d", coll, r.IntN(40))
		if r.IntN(8) == 0 {
			commitT(t, e, admin, del(rel))
			return
		}
		f := map[string]*pb.Value{}
		for _, k := range []string{"a", "b"} {
			if r.IntN(5) > 0 {
				f[k] = randValue(r)
			}
		}
		if declared && r.IntN(4) > 0 {
			var tags []*pb.Value
			for range r.IntN(4) {
				tags = append(tags, randValue(r))
			}
			f["tags"] = Array(tags...)
		}
		commitT(t, e, admin, upd(rel, f))
	}
	for range 150 {
		write()
	}
	if declared && seed%2 == 1 {
		declareT(t, e, declaredTestIndexes)
	}
	ops := []pb.StructuredQuery_FieldFilter_Operator{pb.StructuredQuery_FieldFilter_EQUAL, pb.StructuredQuery_FieldFilter_LESS_THAN,
		pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL, pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL}
	indexed, walkedDeclared, covered := 0, 0, 0
	for i := range 400 {
		if i%4 == 0 {
			write()
		}
		sq := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "c", AllDescendants: r.IntN(3) == 0}}}
		var fs []*pb.StructuredQuery_Filter
		field := []string{"a", "b"}[r.IntN(2)]
		for range r.IntN(3) {
			fs = append(fs, where(field, ops[r.IntN(len(ops))], randValue(r)))
		}
		if r.IntN(3) == 0 {
			fs = append(fs, where([]string{"a", "b"}[r.IntN(2)], pb.StructuredQuery_FieldFilter_EQUAL, randValue(r)))
		}
		if declared && r.IntN(3) == 0 {
			fs = append(fs, where("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, randValue(r)))
		}
		switch len(fs) {
		case 0:
		case 1:
			sq.Where = fs[0]
		default:
			sq.Where = and(fs...)
		}
		switch r.IntN(4) {
		case 0:
			sq.OrderBy = []*pb.StructuredQuery_Order{orderBy(field, r.IntN(2) == 0)}
		case 1:
			sq.OrderBy = []*pb.StructuredQuery_Order{orderBy(field, r.IntN(2) == 0), orderBy("a", r.IntN(2) == 0)}
		case 2:
			sq.OrderBy = []*pb.StructuredQuery_Order{orderBy(field, r.IntN(2) == 0), orderBy("__name__", r.IntN(2) == 0)}
		}
		if r.IntN(2) == 0 {
			sq.Limit = limit(int32(r.IntN(8)))
		}
		if r.IntN(4) == 0 {
			sq.Offset = int32(r.IntN(3))
		}
		if r.IntN(5) == 0 {
			sq.StartAt = &pb.Cursor{Values: []*pb.Value{randValue(r)}, Before: r.IntN(2) == 0}
		}
		q, err := compileQuery(testDB, "", sq)
		if err != nil {
			continue // an invalid combination (e.g. order after the key)
		}
		// A declared index is walked once its build (beside traffic)
		// completed; until then queries scan. Wait, so the count of walks
		// does not depend on the machine's load.
		e.WaitIndexes()
		db := e.db(testDB)
		db.st.RLock()
		at := db.st.ReadTime()
		got, ok := db.indexedMatching(q, at, false)
		want := db.scan(q, at, false)
		p, _ := db.planIndex(q)
		db.st.RUnlock()
		if !ok {
			continue
		}
		indexed++
		if p.ix.Declared() {
			walkedDeclared++
		}
		if p.covered {
			covered++
		}
		if !sameDocs(got, want) {
			t.Fatalf("query %v:\nindexed %s\nscan    %s", sq, docNames(got), docNames(want))
		}
	}
	if indexed < 100 {
		t.Errorf("only %d of 400 queries used an index", indexed)
	}
	if declared && walkedDeclared < 40 {
		t.Errorf("only %d of 400 queries walked a declared index", walkedDeclared)
	}
	// Equalities alone take the walk's documents unchecked (indexPlan.covers).
	if covered < 20 {
		t.Errorf("only %d of 400 queries walked an index that covers them", covered)
	}
	t.Logf("%d indexed, %d covered", indexed, covered)
}

func sameDocs(a, b []*pb.Document) bool {
	return slices.EqualFunc(a, b, func(x, y *pb.Document) bool { return proto.Equal(x, y) })
}

func docNames(ds []*pb.Document) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name[strings.Index(d.Name, "/documents/")+11:])
	}
	return strings.Join(out, " ")
}

// TestScanWithoutLockRaces runs scans (OR queries, which no index serves,
// so they scan after releasing the lock) while writers change, delete and
// recreate the documents being scanned; under -race it proves the
// unlocked scan reads only published version lists.
//
// The durable run adds what durable commits do beside: the flusher setting
// encodings, a decoded cache far smaller than the documents (reads decode
// again), and a history budget so small that every commit trims history
// (version lists resliced while scans read them).
func TestScanWithoutLockRaces(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) { t.Parallel(); scanRaces(t, newTestEngine(t)) })
	t.Run("durable", func(t *testing.T) {
		t.Parallel()
		e := New(Options{Rules: AllowAll, Persister: &memPersister{data: map[string][]byte{}}, HistoryBytes: 4 << 10})
		e.db(testDB).st.SetDecodedCacheLimit(2 << 10)
		scanRaces(t, e)
	})
}

func scanRaces(t *testing.T, e *Engine) {
	for i := range 50 {
		setT(t, e, fmt.Sprintf("r/d%d", i), M("n", Int(int64(i))))
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 2 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				rel := fmt.Sprintf("r/d%d", (i*7+w)%50)
				var err error
				if i%5 == 0 {
					_, err = e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{del(rel)}})
				} else {
					_, err = e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{upd(rel, M("n", Int(int64(i%50))))}})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	sq := &pb.StructuredQuery{From: from("r"), Where: or(where("n", pb.StructuredQuery_FieldFilter_LESS_THAN, Int(10)),
		where("n", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(40)))}
	for range 300 {
		got, err := queryIDs(e, admin, testDB.Documents(), sq)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 50 || len(got) != len(slices.Compact(slices.Sorted(slices.Values(got)))) {
			t.Fatalf("result with duplicates or too many documents: %v", got)
		}
	}
	close(done)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
