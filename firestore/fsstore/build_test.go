package fsstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/internal/await"
)

func intV(n int) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: int64(n)}}
}

// commitDocs commits docs (nil fields: a delete) as one commit and waits
// until it is visible.
func commitDocs(t testing.TB, s *Store, docs map[string]map[string]*pb.Value) {
	s.Lock()
	ts := s.NextTime()
	var cs []Change
	for rel, f := range docs {
		c := Change{Path: rel}
		if f != nil {
			c.Doc = &pb.Document{Name: testDB.DocName(rel), Fields: f, CreateTime: timestamppb.New(ts), UpdateTime: timestamppb.New(ts)}
		}
		cs = append(cs, c)
	}
	done := s.Commit(ts, cs)
	s.Unlock()
	if done.Queued() {
		if err := done.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

func fieldsOf(r *rand.Rand, i int) map[string]*pb.Value {
	tags := make([]*pb.Value, r.IntN(3))
	for j := range tags {
		tags[j] = intV(r.IntN(5))
	}
	return map[string]*pb.Value{"g": intV(r.IntN(10)), "n": intV(i),
		"tags": {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: tags}}}}
}

// dumpIndex lists an index's entries in order: values and path.
func dumpIndex(ix *Index) string {
	var b strings.Builder
	ix.Ascend(nil, nil, func(it IndexItem) bool {
		for _, v := range it.Vals {
			fmt.Fprintf(&b, "%v ", v.GetIntegerValue())
		}
		b.WriteString(it.Path + "\n")
		return true
	})
	return b.String()
}

// TestBuildBesideWrites declares indexes over a store while writers
// create, change and delete documents, and checks that every index, once
// built, holds exactly what a full build over the final state holds: no
// write made during the build is lost or left stale.
func TestBuildBesideWrites(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			opts := Options{Name: testDB, History: time.Minute, HistoryBytes: DefaultHistoryBytes, Now: time.Now}
			if durable {
				opts.Persister = nopPersister{} // group commit: visibility after the commit
			}
			s := New(opts)
			r := rand.New(rand.NewPCG(1, 2))
			const n = 20000
			colls := []string{"c", "p/x/c", "p/y/c"}
			for i := 0; i < n; i += 100 {
				batch := map[string]map[string]*pb.Value{}
				for j := i; j < i+100; j++ {
					batch[fmt.Sprintf("%s/d%05d", colls[j%3], j)] = fieldsOf(r, j)
				}
				commitDocs(t, s, batch)
			}
			ds := []Declared{
				{Collection: "c", Fields: []IndexField{{Path: fsvalue.FieldPath{"g"}}, {Path: fsvalue.FieldPath{"n"}}}},
				{Group: true, Collection: "c", Fields: []IndexField{{Path: fsvalue.FieldPath{"tags"}, Contains: true}, {Path: fsvalue.FieldPath{"g"}}}},
			}
			var overlapped atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var commits atomic.Int64
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(w), 7))
					for k := 0; ; k++ {
						select {
						case <-stop:
							return
						default:
						}
						i := r.IntN(n + 2000) // some new documents
						rel := fmt.Sprintf("%s/d%05d", colls[i%3], i)
						f := fieldsOf(r, i)
						if k%4 == 0 {
							f = nil
						}
						commitDocs(t, s, map[string]map[string]*pb.Value{rel: f})
						commits.Add(1)
						time.Sleep(20 * time.Microsecond) // pacing: a client's round trip
						s.fidxMu.Lock()
						if len(s.building) > 0 {
							overlapped.Add(1)
						}
						s.fidxMu.Unlock()
					}
				}()
			}
			await.Until(t, 10*time.Second, func() bool { return commits.Load() >= 4 }, "the writers to commit")
			s.Lock()
			s.Declare(ds)
			s.Unlock()
			s.WaitIndexes()
			close(stop)
			wg.Wait()
			if overlapped.Load() == 0 {
				t.Fatal("no write happened while the indexes were being built: the test checked nothing")
			}
			s.RLock()
			defer s.RUnlock()
			infos := s.IndexInfos()
			if len(infos) != 4 { // [g n] over each of the 3 collections c; [tags CONTAINS, g] over the group
				t.Fatalf("indexes: %+v", infos)
			}
			for _, info := range infos {
				if info.Building || !info.Declared {
					t.Fatalf("index %+v", info)
				}
				ix := s.fidx[indexKey(info.Scope, info.Fields)]
				fresh := newIndex(ix.scope, ix.fields, true)
				s.build(fresh)
				got, want := dumpIndex(ix), dumpIndex(fresh)
				if got != want {
					gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
					i := 0
					for i < min(len(gl), len(wl)) && gl[i] == wl[i] {
						i++
					}
					t.Errorf("%v %v built beside writes differs from a full build (%d and %d entries), first at entry %d: %q vs %q",
						info.Scope, info.Fields, len(gl), len(wl), i, gl[min(i, len(gl)-1)], wl[min(i, len(wl)-1)])
				}
				if fresh.bt.Len() == 0 {
					t.Errorf("%v %v is empty", info.Scope, info.Fields)
				}
			}
			t.Logf("%d writes during the build", overlapped.Load())
		})
	}
}
