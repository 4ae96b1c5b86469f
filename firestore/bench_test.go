package firestore

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/event"
)

func BenchmarkWrite(b *testing.B) {
	e := newTestEngine(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		commitT(b, e, admin, upd(fmt.Sprintf("c/%d", i%1000), M("n", Int(int64(i)), "s", String("hello"))))
	}
}

// BenchmarkWriteServe is e2e/bench's set as pyric serve runs it: an
// admin commit of one small document {i, g, s} over 500 documents, with
// events on (a bus) and a Persister, so its allocations are the engine's
// share of a served set.
func BenchmarkWriteServe(b *testing.B) {
	e := New(Options{Rules: AllowAll, Events: event.NewBus(event.Options{}), Persister: &memPersister{data: map[string][]byte{}}})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		commitT(b, e, admin, upd(fmt.Sprintf("bench/d%05d", i%500), M("i", Int(int64(i)), "g", Int(int64(i%10)), "s", String("x"))))
	}
}

// BenchmarkWriteDeclaredIndexes is BenchmarkWrite with two composite
// indexes declared on the collection written (one array-contains): what
// maintaining them on every commit costs.
func BenchmarkWriteDeclaredIndexes(b *testing.B) {
	e := newTestEngine(b)
	declareT(b, e, `{"indexes":[
	  {"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"s","order":"ASCENDING"},{"fieldPath":"n","order":"DESCENDING"}]},
	  {"collectionGroup":"c","queryScope":"COLLECTION_GROUP","fields":[{"fieldPath":"t","arrayConfig":"CONTAINS"},{"fieldPath":"n","order":"ASCENDING"}]}]}`)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		commitT(b, e, admin, upd(fmt.Sprintf("c/%d", i%1000), M("n", Int(int64(i)), "s", String("hello"), "t", Array(Int(int64(i%7)), Int(int64(i%5))))))
	}
}

func BenchmarkPointRead(b *testing.B) {
	e := newTestEngine(b)
	for i := 0; i < 1000; i++ {
		setT(b, e, fmt.Sprintf("c/%d", i), M("n", Int(int64(i))))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if getT(b, e, fmt.Sprintf("c/%d", i%1000)) == nil {
			b.Fatal("missing")
		}
	}
}

var big100k struct {
	once sync.Once
	e    *Engine
}

func engine100k(b *testing.B) *Engine {
	big100k.once.Do(func() {
		e := newTestEngine(b)
		ws := make([]*pb.Write, 0, 500)
		for i := 0; i < 100000; i++ {
			ws = append(ws, upd(fmt.Sprintf("big/%06d", i), M("n", Int(int64(i)), "g", Int(int64(i%100)), "s", String(fmt.Sprint(i)))))
			if len(ws) == 500 {
				commitT(b, e, admin, ws...)
				ws = ws[:0]
			}
		}
		big100k.e = e
	})
	return big100k.e
}

func benchQuery(b *testing.B, sq *pb.StructuredQuery, want int) {
	e := engine100k(b)
	sq.From = from("big")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := queryIDs(e, admin, testDB.Documents(), sq)
		if err != nil || len(got) != want {
			b.Fatalf("got %d, %v", len(got), err)
		}
	}
}

func BenchmarkQuery100kEquality(b *testing.B) {
	benchQuery(b, &pb.StructuredQuery{Where: where("g", pb.StructuredQuery_FieldFilter_EQUAL, Int(7))}, 1000)
}

func BenchmarkQuery100kRangeLimit(b *testing.B) {
	benchQuery(b, &pb.StructuredQuery{Where: where("n", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, Int(50000)), Limit: limit(10)}, 10)
}

func BenchmarkQuery100kOrderByLimit(b *testing.B) {
	benchQuery(b, &pb.StructuredQuery{OrderBy: []*pb.StructuredQuery_Order{orderBy("s", true)}, Limit: limit(20)}, 20)
}

// BenchmarkListenerFanout measures one write delivered to 1,000 listeners
// on the same query.
func BenchmarkListenerFanout(b *testing.B) {
	e := newTestEngine(b)
	var delivered atomic.Int64
	sq := &pb.StructuredQuery{From: from("room"), Where: where("live", pb.StructuredQuery_FieldFilter_EQUAL, Bool(true))}
	for i := 0; i < 1000; i++ {
		_, err := e.Watch(admin, &pb.Target{TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: testDB.Documents(),
			QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: sq}}}}, func(*Snapshot, error) { delivered.Add(1) })
		if err != nil {
			b.Fatal(err)
		}
	}
	e.Quiesce()
	delivered.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		setT(b, e, fmt.Sprintf("room/%d", i%50), M("live", Bool(true), "n", Int(int64(i))))
		e.Quiesce()
	}
	b.StopTimer()
	if delivered.Load() != int64(b.N)*1000 {
		b.Fatalf("delivered %d, want %d", delivered.Load(), b.N*1000)
	}
}

// BenchmarkQueryScaling measures indexed queries against a point get on
// collections of 10k and 100k documents (1M with PYRIC_BENCH_1M=1): an
// equality + orderBy + limit 10 and a range returning 20 rows should cost
// a small multiple of the get, flat in the collection's size.
func BenchmarkQueryScaling(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if os.Getenv("PYRIC_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		e := newTestEngine(b)
		ws := make([]*pb.Write, 0, 1000)
		for i := range n {
			ws = append(ws, upd(fmt.Sprintf("s/%07d", i), M("n", Int(int64(i)), "g", Int(int64(i%100)))))
			if len(ws) == cap(ws) {
				commitT(b, e, admin, ws...)
				ws = ws[:0]
			}
		}
		run := func(name string, sq *pb.StructuredQuery, want int) {
			sq.From = from("s")
			// The first query builds the index it uses; measure the rest.
			if _, err := queryIDs(e, admin, testDB.Documents(), sq); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					got, err := queryIDs(e, admin, testDB.Documents(), sq)
					if err != nil || len(got) != want {
						b.Fatalf("got %d, %v", len(got), err)
					}
				}
			})
		}
		benchPointGet(b, e, n)
		run("eq-orderby-limit10", &pb.StructuredQuery{Where: where("g", pb.StructuredQuery_FieldFilter_EQUAL, Int(7)),
			OrderBy: []*pb.StructuredQuery_Order{orderBy("n", false)}, Limit: limit(10)}, 10)
		run("eq-name-limit10", &pb.StructuredQuery{Where: where("g", pb.StructuredQuery_FieldFilter_EQUAL, Int(7)), Limit: limit(10)}, 10)
		run("range-20", &pb.StructuredQuery{Where: and(where("n", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, Int(int64(n/2))),
			where("n", pb.StructuredQuery_FieldFilter_LESS_THAN, Int(int64(n/2+20))))}, 20)
	}
}

var durable100k struct {
	once sync.Once
	e    *Engine
}

// engine100kDurable is engine100k's data committed through a Persister,
// so that documents are kept encoded and far more of them than the
// decoded cache holds.
func engine100kDurable(b *testing.B) *Engine {
	durable100k.once.Do(func() {
		e := New(Options{Rules: AllowAll, Persister: &memPersister{data: map[string][]byte{}}})
		ws := make([]*pb.Write, 0, 500)
		for i := 0; i < 100000; i++ {
			ws = append(ws, upd(fmt.Sprintf("big/%06d", i), M("n", Int(int64(i)), "g", Int(int64(i%100)), "s", String(fmt.Sprint(i)))))
			if len(ws) == 500 {
				commitT(b, e, admin, ws...)
				ws = ws[:0]
			}
		}
		durable100k.e = e
	})
	return durable100k.e
}

// BenchmarkDurable100kPointRead reads documents spread over 100k encoded
// ones (most not in the decoded cache: each read decodes).
func BenchmarkDurable100kPointRead(b *testing.B) {
	e := engine100kDurable(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i += 7919
		if getT(b, e, fmt.Sprintf("big/%06d", i%100000)) == nil {
			b.Fatal("missing")
		}
	}
}

// BenchmarkDurable100kRangeLimit is BenchmarkQuery100kRangeLimit over
// encoded documents, the window moving so that results are decoded.
func BenchmarkDurable100kRangeLimit(b *testing.B) {
	e := engine100kDurable(b)
	// The first query builds the index on n (decoding every document).
	if _, err := queryIDs(e, admin, testDB.Documents(), &pb.StructuredQuery{From: from("big"),
		Where: where("n", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, Int(0)), Limit: limit(10)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i += 7919
		sq := &pb.StructuredQuery{From: from("big"), Where: where("n", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, Int(int64(i%90000))), Limit: limit(10)}
		got, err := queryIDs(e, admin, testDB.Documents(), sq)
		if err != nil || len(got) != 10 {
			b.Fatalf("got %d, %v", len(got), err)
		}
	}
}

// BenchmarkDeclaredIndex compares an equality + orderBy + limit 10 query
// walking a declared composite index (firestore.indexes.json, declared
// before the documents were written, so maintained on every commit) with
// the same query walking an index built on demand, and with a point get,
// on collections of 10k and 100k documents: both queries should cost the
// same small multiple of the get, flat in the collection's size. It logs
// what each query's first run took: the on-demand one builds its index.
func BenchmarkDeclaredIndex(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		e := newTestEngine(b)
		declareT(b, e, `{"indexes":[{"collectionGroup":"s","queryScope":"COLLECTION","fields":[
		  {"fieldPath":"g","order":"ASCENDING"},{"fieldPath":"n","order":"DESCENDING"}]}]}`)
		ws := make([]*pb.Write, 0, 1000)
		for i := range n {
			ws = append(ws, upd(fmt.Sprintf("s/%07d", i), M("n", Int(int64(i)), "g", Int(int64(i%100)), "h", Int(int64(i%100)))))
			if len(ws) == cap(ws) {
				commitT(b, e, admin, ws...)
				ws = ws[:0]
			}
		}
		query := func(field string) *pb.StructuredQuery {
			return &pb.StructuredQuery{From: from("s"), Where: where(field, pb.StructuredQuery_FieldFilter_EQUAL, Int(7)),
				OrderBy: []*pb.StructuredQuery_Order{orderBy("n", true)}, Limit: limit(10)}
		}
		run := func(name string, sq *pb.StructuredQuery, declared bool) {
			start := time.Now()
			if got, err := queryIDs(e, admin, testDB.Documents(), sq); err != nil || len(got) != 10 {
				b.Fatalf("got %d, %v", len(got), err)
			}
			b.Logf("%s/%d: first query %v", name, n, time.Since(start))
			q, err := compileQuery(testDB, "", sq)
			if err != nil {
				b.Fatal(err)
			}
			db := e.db(testDB)
			db.st.RLock()
			p, ok := db.planIndex(q)
			db.st.RUnlock()
			if !ok || p.ix.Declared() != declared {
				b.Fatalf("%s: the query does not walk the index it should (declared %v)", name, declared)
			}
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if got, err := queryIDs(e, admin, testDB.Documents(), sq); err != nil || len(got) != 10 {
						b.Fatalf("got %d, %v", len(got), err)
					}
				}
			})
		}
		benchPointGet(b, e, n)
		run("declared", query("g"), true)
		run("on-demand", query("h"), false)
	}
}

// benchPointGet times a point get of the n documents s/%07d, the measure
// the query benchmarks are compared with in the same run.
func benchPointGet(b *testing.B, e *Engine, n int) {
	b.Run(fmt.Sprintf("get/%d", n), func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if getT(b, e, fmt.Sprintf("s/%07d", i%n)) == nil {
				b.Fatal("missing")
			}
		}
	})
}
