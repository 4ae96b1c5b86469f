package capture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
)

// BenchmarkFlushOneChange measures a capture flush after one change to a
// Realtime Database of 10k leaves, to a Storage of 1,000 objects and to
// an Auth of 1,000 accounts (a sign-in): the
// bytes the flush appends (B-appended/op) beside the size of the
// service's whole state line (B-state), which is what a flush appended
// before the two services' records were appended one by one.
func BenchmarkFlushOneChange(b *testing.B) {
	admin := identity.AdminIdentity()
	for _, svc := range []string{"database", "storage", "auth"} {
		b.Run(svc, func(b *testing.B) {
			be, err := backend.Start(backend.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Shutdown(context.Background())
			db, _ := sandbox.Lookup[*database.Database](be.Sandbox)
			st, _ := sandbox.Lookup[*storage.Engine](be.Sandbox)
			au, _ := sandbox.Lookup[*auth.Engine](be.Sandbox)
			ns := database.DefaultNamespace(be.Project)
			change := func(i int) {}
			switch svc {
			case "database":
				m := map[string]any{}
				for i := range 10000 {
					m[fmt.Sprintf("k%05d", i)] = map[string]any{"score": float64(i), "name": "player"}
				}
				if _, err := db.Set(admin, ns, "players", m, database.WriteOptions{}); err != nil {
					b.Fatal(err)
				}
				change = func(i int) {
					if _, err := db.Set(admin, ns, fmt.Sprintf("players/k%05d/score", i%10000), float64(-i), database.WriteOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			case "auth":
				client := auth.Call{Caller: identity.Anonymous(), Project: be.Project}
				email := func(i int) *string { e := fmt.Sprintf("user%04d@example.com", i%1000); return &e }
				for i := range 1000 {
					if _, err := au.SignUp(client, auth.SignUpRequest{Email: email(i), Password: "secret123"}); err != nil {
						b.Fatal(err)
					}
				}
				change = func(i int) {
					if _, err := au.SignInWithPassword(client, auth.SignInWithPasswordRequest{Email: email(i), Password: "secret123"}); err != nil {
						b.Fatal(err)
					}
				}
			case "storage":
				for i := range 1000 {
					if _, err := st.Put(admin, storage.PutRequest{Bucket: "bkt", Name: fmt.Sprintf("o%04d", i), Body: strings.NewReader("x")}); err != nil {
						b.Fatal(err)
					}
				}
				change = func(i int) {
					if _, err := st.Put(admin, storage.PutRequest{Bucket: "bkt", Name: fmt.Sprintf("o%04d", i%1000), Body: strings.NewReader("y")}); err != nil {
						b.Fatal(err)
					}
				}
			}
			path := filepath.Join(b.TempDir(), "s.json")
			rec, err := Start(context.Background(), be.Sandbox, path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer rec.Close()
			if err := rec.Flush(); err != nil {
				b.Fatal(err)
			}
			state, err := serviceState(be.Sandbox.Service(svc))
			if err != nil {
				b.Fatal(err)
			}
			fi, _ := os.Stat(path)
			before := fi.Size()
			b.ResetTimer()
			for i := range b.N {
				change(i)
				if err := rec.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			fi, _ = os.Stat(path)
			b.ReportMetric(float64(fi.Size()-before)/float64(b.N), "B-appended/op")
			b.ReportMetric(float64(len(state)), "B-state")
		})
	}
}

// BenchmarkRewriteFirestore measures a rewrite of the session file (what
// the first flush does) over 20k Firestore documents: the records'
// encoding, which at 100k documents was more CPU than the rest of the
// start. "durable" keeps the documents in a data directory, as `pyric
// serve` does: the store then keeps them encoded, and the rewrite reads
// those encodings; "memory" keeps them decoded.
func BenchmarkRewriteFirestore(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		b.Run(name, func(b *testing.B) { benchmarkRewriteFirestore(b, durable) })
	}
}

func benchmarkRewriteFirestore(b *testing.B, durable bool) {
	var opts backend.Options
	if durable {
		opts.Sandbox.DataDir = b.TempDir()
	}
	be, err := backend.Start(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Shutdown(context.Background())
	ctx := context.Background()
	fs := testfs.Of(be.Sandbox).Admin()
	for i := range 20000 {
		if err := fs.SetDocument(ctx, fmt.Sprintf("load/d%07d", i), map[string]any{"n": i, "s": "some text"}); err != nil {
			b.Fatal(err)
		}
	}
	rec, err := Start(ctx, be.Sandbox, filepath.Join(b.TempDir(), "last-session.json"), Options{FirstFlush: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec.flushMu.Lock()
		err := rec.rewriteFile(nil)
		rec.flushMu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
}
