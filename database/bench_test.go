package database_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/sandbox"
)

// BenchmarkWindowedQuery100k is a limitToFirst(10) window at a moving
// start over 100,000 children, served from the child index.
func BenchmarkWindowedQuery100k(b *testing.B) {
	d, _ := newDB(b, "", nil)
	m := make(map[string]any, 100000)
	for i := 0; i < 100000; i++ {
		m[fmt.Sprintf("k%06d", i)] = map[string]any{"score": float64((i * 7919) % 100000)}
	}
	if _, err := d.Set(admin, ns, "big", m, database.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	q := database.Query{Index: "score", Limit: 10}
	if _, err := d.Get(admin, ns, "big", &q, false); err != nil { // builds the index
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := database.Query{Index: "score", Start: &database.Bound{Value: float64(i % 99990), Inclusive: true}, Limit: 10}
		r, err := d.Get(admin, ns, "big", &q, false)
		if err != nil || len(r.Value.(map[string]any)) != 10 {
			b.Fatalf("%v %v", r.Value, err)
		}
	}
}

// BenchmarkFanout1000 is one write delivered to 1,000 listening
// connections.
func BenchmarkFanout1000(b *testing.B) {
	d, _ := newDB(b, "", nil)
	conns := make([]*database.Conn, 1000)
	for i := range conns {
		conns[i] = d.Connect(ns, admin)
		if _, err := conns[i].Listen("room", database.Query{}, 0, ""); err != nil {
			b.Fatal(err)
		}
		conns[i].Next(context.Background())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Set(admin, ns, "room/msg", strconv.Itoa(i), database.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		for _, c := range conns {
			if _, err := c.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSet is a small write into a flat collection of 10,000 and of
// 100,000 children: the in-place tree makes it cost about the write, the
// same at both sizes (copying the parent's map cost ~0.6 ms at 10,000).
func BenchmarkSet(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			d, _ := newDB(b, "", nil)
			m := make(map[string]any, n)
			for i := 0; i < n; i++ {
				m[fmt.Sprintf("k%06d", i)] = float64(i)
			}
			d.Set(admin, ns, "c", m, database.WriteOptions{})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := d.Set(admin, ns, "c/k"+strconv.Itoa(i%n), float64(i), database.WriteOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetIndexed is the same write into 10,000 children with a
// child index and a windowed listen kept up to date.
func BenchmarkSetIndexed(b *testing.B) {
	d, _ := newDB(b, "", nil)
	m := make(map[string]any, 10000)
	for i := 0; i < 10000; i++ {
		m[fmt.Sprintf("k%05d", i)] = map[string]any{"score": float64(i)}
	}
	d.Set(admin, ns, "c", m, database.WriteOptions{})
	c := d.Connect(ns, admin)
	if _, err := c.Listen("c", database.Query{Index: "score", Limit: 10}, 1, ""); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Set(admin, ns, fmt.Sprintf("c/k%05d/score", i%10000), float64(20000+i), database.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		if i%100 == 0 {
			cctx, cancel := context.WithCancel(context.Background())
			cancel()
			c.Next(cctx)
		}
	}
}

// BenchmarkRevocationCheck is a write under 1,000 listens whose read rule
// reads another location (an ACL): only the listen whose ACL entry the
// write touches is judged again; the listener index never visits the
// others.
func BenchmarkRevocationCheck(b *testing.B) {
	d, _ := newDB(b, `{"rules": {
		"acl": {".read": true, ".write": true},
		"docs": {"$d": {".read": "root.child('acl').child($d).child(auth.uid).val() === true", ".write": true}}}}`, nil)
	for i := 0; i < 1000; i++ {
		if _, err := d.Set(admin, ns, fmt.Sprintf("acl/d%d/alice", i), true, database.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	c := d.Connect(ns, alice)
	for i := 0; i < 1000; i++ {
		if _, err := c.Listen(fmt.Sprintf("docs/d%d", i), database.Query{}, 0, ""); err != nil {
			b.Fatal(err)
		}
	}
	c.Next(context.Background())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Rewrites the same grant: judged again, still allowed.
		if _, err := d.Set(admin, ns, fmt.Sprintf("acl/d%d/alice", i%1000), true, database.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteAmong10kListens is a write to one user's location while
// 10,000 connections each listen to their own: the listener index visits
// only the one concerned.
func BenchmarkWriteAmong10kListens(b *testing.B) {
	d, _ := newDB(b, "", nil)
	for i := 0; i < 10000; i++ {
		c := d.Connect(ns, admin)
		if _, err := c.Listen(fmt.Sprintf("users/u%d", i), database.Query{}, 0, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Set(admin, ns, fmt.Sprintf("users/u%d/n", i%10000), float64(i), database.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDurableSet measures a durable write (a leaf set in a
// 10k-leaf namespace) stored in a Bucket, one bbolt transaction each (how
// the tree was stored before the Log), and in the Log, one write-ahead
// log record each, with 1 and 8 writers; it reports the process's CPU
// time and the bytes it wrote to files per write (load-independent,
// unlike the wall time on a shared machine). The Log's checkpoints, which
// apply the records to the bbolt file in bulk once a second, are
// included: the store is closed (and so checkpointed) inside the timing.
func BenchmarkDurableSet(b *testing.B) {
	for _, store := range []string{"bucket", "log"} {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/writers=%d", store, writers), func(b *testing.B) {
				st, err := sandbox.OpenStore(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				env := withBucket(envForFuzz(), st.Bucket("database"))
				if store == "log" {
					env = withStore(envForFuzz(), st)
				}
				d, err := database.New(env, database.Options{})
				if err != nil {
					b.Fatal(err)
				}
				m := make(map[string]any, 10000)
				for i := range 10000 {
					m[fmt.Sprintf("k%05d", i)] = float64(i)
				}
				if _, err := d.Set(admin, ns, "c", m, database.WriteOptions{}); err != nil {
					b.Fatal(err)
				}
				var next atomic.Int64
				w0, c0 := writtenBytes(b), benchkit.SelfCPU()
				b.ResetTimer()
				var wg sync.WaitGroup
				for range writers {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							if _, err := d.Set(admin, ns, fmt.Sprintf("c/k%05d", i%10000), float64(i), database.WriteOptions{}); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				st.Close()
				b.StopTimer()
				b.ReportMetric(float64(writtenBytes(b)-w0)/float64(b.N), "B-written/op")
				b.ReportMetric(float64((benchkit.SelfCPU()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// writtenBytes is what the process has written with write system calls
// so far (wchar of /proc/self/io: files and sockets alike).
func writtenBytes(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkRESTBodyChecks compares the key check a REST write body gets
// (CheckBodyKeys) with its decoding, on a body of 20,000 small objects.
func BenchmarkRESTBodyChecks(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{")
	for i := 0; i < 20000; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"item%05d": {"name": "n%d", "score": %d, "tags": ["a", "b"], "nested": {"k": true}}`, i, i, i)
	}
	sb.WriteString("}")
	body := []byte(sb.String())
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			if _, err := database.DecodeJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("keys", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := database.CheckBodyKeys(body, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadEncoding is a REST read's response encoding of a small
// node and of an array-like node with priorities: MarshalPlain against
// encoding Plain's result.
func BenchmarkReadEncoding(b *testing.B) {
	small := map[string]any{"n": 1.0, "s": "x"}
	arr := map[string]any{".priority": 1.0}
	for i := range 20 {
		arr[strconv.Itoa(i)] = map[string]any{"n": float64(i), ".priority": "p"}
	}
	for _, c := range []struct {
		name string
		v    any
	}{{"small", small}, {"array", arr}} {
		b.Run(c.name+"/plain-then-marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				database.MarshalValue(database.Plain(c.v))
			}
		})
		b.Run(c.name+"/marshal-plain", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				database.MarshalPlain(c.v)
			}
		})
	}
}

// BenchmarkDeniedWrite is a write the rules deny, explained in its
// request event and in the error's why (one explanation for both).
func BenchmarkDeniedWrite(b *testing.B) {
	d, _ := newDB(b, `{"rules": {"users": {"$uid": {".write": "auth.uid === $uid && newData.child('age').val() > 0"}}}}`, nil)
	v := map[string]any{"age": -1.0}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Set(alice, ns, "users/alice", v, database.WriteOptions{}); !errors.Is(err, database.ErrPermissionDenied) {
			b.Fatal(err)
		}
	}
}
