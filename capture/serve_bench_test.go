package capture

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
)

// BenchmarkServeSet is e2e/bench's set as pyric serve runs it, without
// the transport: a Commit of one small document through the engine of a
// durable sandbox (its write-ahead log, sync=batch), with session capture
// on and off. The allocations per operation, and a CPU profile's shares,
// are what to compare (the time is the machine's).
func BenchmarkServeSet(b *testing.B) {
	for _, capture := range []bool{true, false} {
		name := "capture"
		if !capture {
			name = "nocapture"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			be, err := backend.Start(backend.Options{Sandbox: sandbox.Options{DataDir: filepath.Join(dir, "data"), Sync: sandbox.SyncBatch}})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Shutdown(context.Background())
			if capture {
				rec, err := Start(context.Background(), be.Sandbox, filepath.Join(dir, "last-session.json"), Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer rec.Close()
			}
			eng, _ := sandbox.Lookup[*firestore.Engine](be.Sandbox)
			db := "projects/" + be.Project + "/databases/(default)"
			admin := identity.AdminIdentity()
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				doc := &pb.Document{Name: db + "/documents/bench/d" + strconv.Itoa(i), // a new document, as e2e/bench's set
					Fields: map[string]*pb.Value{
						"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}},
						"g": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i % 10)}},
						"s": {ValueType: &pb.Value_StringValue{StringValue: "x"}},
					}}
				if _, err := eng.Commit(ctx, admin, &pb.CommitRequest{Database: db, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: doc}}}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
