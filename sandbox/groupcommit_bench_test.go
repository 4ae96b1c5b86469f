package sandbox

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// countingStore counts the store transactions the engine's group commit
// makes.
type countingStore struct {
	*Store
	calls atomic.Int64
}

func (c *countingStore) Commit(name firestore.DatabaseName, t time.Time, changes []firestore.Change) error {
	c.calls.Add(1)
	return c.Store.Commit(name, t, changes)
}

// BenchmarkGroupCommit64 measures 64 concurrent writers on a durable store
// in each sync mode and reports how many commits shared one store
// transaction (and so one sync).
func BenchmarkGroupCommit64(b *testing.B) {
	for _, mode := range []SyncMode{SyncBatch, SyncAlways} {
		b.Run(string(mode), func(b *testing.B) {
			st, err := OpenStoreSync(b.TempDir(), mode)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			cs := &countingStore{Store: st}
			e := firestore.New(firestore.Options{Persister: cs})
			db := firestore.DatabaseName{Project: "p", Database: firestore.DefaultDatabase}
			var n atomic.Int64
			b.SetParallelism(32) // 64 goroutines on 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb_ *testing.PB) {
				for pb_.Next() {
					i := n.Add(1)
					_, err := e.Commit(bg, identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
						Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(fmt.Sprintf("c/%d", i%1000)),
							Fields: map[string]*pb.Value{"i": firestore.Int(i)}}}}}})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(n.Load())/float64(max(cs.calls.Load(), 1)), "commits/txn")
		})
	}
}
