package goclient

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/server/firestore/fstest"
)

// nameVariants are the malformed forms of a database name checked in
// every request field that names a database, a parent or a document.
func nameVariants(project string) []struct{ name, db string } {
	return []struct{ name, db string }{
		{"empty", ""},
		{"wrong project", "projects/" + project + "-other/databases/(default)"},
		{"database missing", "projects/" + project},
		{"database id missing", "projects/" + project + "/databases"},
		{"database id empty", "projects/" + project + "/databases/"},
		{"trailing slash", "projects/" + project + "/databases/(default)/"},
		{"no projects", project + "/databases/(default)"},
	}
}

// nameRPC sends one RPC whose database-naming fields are built from db
// (a database name, possibly malformed).
type nameRPC struct {
	name string
	run  func(ctx context.Context, tg *target, db string) error
}

func nameRPCs() []nameRPC {
	doc := func(db string) string { return db + "/documents/names/d" }
	stream := func(recv func() error) error {
		for {
			if err := recv(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
	return []nameRPC{
		{"Commit.database", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.Commit(ctx, &pb.CommitRequest{Database: db})
			return err
		}},
		{"Commit.writes.update.name", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.Commit(ctx, &pb.CommitRequest{Database: "projects/" + tg.project + "/databases/(default)",
				Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: doc(db)}}}}})
			return err
		}},
		{"Commit.writes.delete", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.Commit(ctx, &pb.CommitRequest{Database: "projects/" + tg.project + "/databases/(default)",
				Writes: []*pb.Write{{Operation: &pb.Write_Delete{Delete: doc(db)}}}})
			return err
		}},
		{"BatchWrite.database", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.BatchWrite(ctx, &pb.BatchWriteRequest{Database: db})
			return err
		}},
		{"BeginTransaction.database", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.BeginTransaction(ctx, &pb.BeginTransactionRequest{Database: db})
			return err
		}},
		{"Rollback.database", func(ctx context.Context, tg *target, db string) error {
			return tg.raw.Rollback(ctx, &pb.RollbackRequest{Database: db, Transaction: []byte("x")})
		}},
		{"BatchGetDocuments.database", func(ctx context.Context, tg *target, db string) error {
			s, err := tg.raw.BatchGetDocuments(ctx, &pb.BatchGetDocumentsRequest{Database: db, Documents: []string{doc("projects/" + tg.project + "/databases/(default)")}})
			if err != nil {
				return err
			}
			return stream(func() error { _, err := s.Recv(); return err })
		}},
		{"BatchGetDocuments.documents", func(ctx context.Context, tg *target, db string) error {
			s, err := tg.raw.BatchGetDocuments(ctx, &pb.BatchGetDocumentsRequest{Database: "projects/" + tg.project + "/databases/(default)", Documents: []string{doc(db)}})
			if err != nil {
				return err
			}
			return stream(func() error { _, err := s.Recv(); return err })
		}},
		{"GetDocument.name", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.GetDocument(ctx, &pb.GetDocumentRequest{Name: doc(db)})
			return err
		}},
		{"DeleteDocument.name", func(ctx context.Context, tg *target, db string) error {
			return tg.raw.DeleteDocument(ctx, &pb.DeleteDocumentRequest{Name: doc(db)})
		}},
		{"UpdateDocument.document.name", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.UpdateDocument(ctx, &pb.UpdateDocumentRequest{Document: &pb.Document{Name: doc(db)}})
			return err
		}},
		{"CreateDocument.parent", func(ctx context.Context, tg *target, db string) error {
			_, err := tg.raw.CreateDocument(ctx, &pb.CreateDocumentRequest{Parent: db + "/documents", CollectionId: "names", Document: &pb.Document{}})
			return err
		}},
		{"RunQuery.parent", func(ctx context.Context, tg *target, db string) error {
			s, err := tg.raw.RunQuery(ctx, &pb.RunQueryRequest{Parent: db + "/documents", QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "names"}}}}})
			if err != nil {
				return err
			}
			return stream(func() error { _, err := s.Recv(); return err })
		}},
		{"ListCollectionIds.parent", func(ctx context.Context, tg *target, db string) error {
			it := tg.raw.ListCollectionIds(ctx, &pb.ListCollectionIdsRequest{Parent: db + "/documents"})
			_, err := it.Next()
			if err != nil && err.Error() == "no more items in iterator" {
				return nil
			}
			return err
		}},
		{"Listen.database", func(ctx context.Context, tg *target, db string) error {
			s, err := tg.raw.Listen(ctx)
			if err != nil {
				return err
			}
			if err := s.Send(&pb.ListenRequest{Database: db, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 1,
				TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{doc("projects/" + tg.project + "/databases/(default)")}}}}}}); err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}},
		{"Write.database", func(ctx context.Context, tg *target, db string) error {
			s, err := tg.raw.Write(ctx)
			if err != nil {
				return err
			}
			if err := s.Send(&pb.WriteRequest{Database: db}); err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}},
	}
}

// nameDeviations are the deliberate differences from the official
// emulator, with the code Pyric answers and why.
var nameDeviations = map[string]struct {
	code   codes.Code
	reason string
}{
	// The emulator lets a commit on one project write documents of
	// another (and read them in a batch get); Pyric keeps a request in
	// its database, as production's per-database endpoints do.
	"Commit.writes.update.name/wrong project":   {codes.InvalidArgument, "a write to another project's document"},
	"Commit.writes.delete/wrong project":        {codes.InvalidArgument, "a write to another project's document"},
	"BatchGetDocuments.database/wrong project":  {codes.InvalidArgument, "a read of another project's document"},
	"BatchGetDocuments.documents/wrong project": {codes.InvalidArgument, "a read of another project's document"},
	"Listen.database/wrong project":             {codes.InvalidArgument, "a target in another project than the stream's"},
	"Commit.database/wrong project":             {codes.OK, "the emulator never answers an empty commit on a project it has not seen"},
}

// TestMalformedNamesDifferential sends every request field that names a
// database, a parent or a document, malformed each way (empty, another
// project, the database missing, a trailing slash...), to Pyric and to
// the official emulator: the codes and the messages must agree. The
// emulator answers UNKNOWN (an internal failure) for a malformed database
// on the Write and Listen streams; there Pyric must answer
// INVALID_ARGUMENT with the words it uses for the same name elsewhere.
func TestMalformedNamesDifferential(t *testing.T) {
	s := fstest.Start(t, fstest.Options{Project: "demo-names"})
	ours := dial(t, s.Addr, "demo-names")
	theirs := official(t)
	unary := map[string]string{} // variant -> the emulator's message for Commit.database
	for _, rpc := range nameRPCs() {
		for _, v := range nameVariants("P") {
			t.Run(rpc.name+"/"+v.name, func(t *testing.T) {
				run := func(tg *target) error {
					ctx, cancel := context.WithTimeout(bg, 5*time.Second)
					defer cancel()
					return rpc.run(ctx, tg, strings.ReplaceAll(v.db, "P", tg.project))
				}
				// The two projects' names differ in length, and the
				// messages give indexes: the same name on each side.
				o, th := run(ours), run(theirs)
				om := normalizeName(status.Convert(o).Message(), ours.project)
				tm := normalizeName(status.Convert(th).Message(), theirs.project)
				if rpc.name == "Commit.database" && status.Code(th) == codes.InvalidArgument {
					unary[v.name] = tm
				}
				if d, ok := nameDeviations[rpc.name+"/"+v.name]; ok {
					if status.Code(o) != d.code {
						t.Errorf("pyric %v %q, want %v (%s)", status.Code(o), om, d.code, d.reason)
					}
					t.Logf("deliberate difference (%s): pyric %v %q, official %v %q", d.reason, status.Code(o), om, status.Code(th), tm)
					return
				}
				if status.Code(th) == codes.Unknown && (strings.HasPrefix(rpc.name, "Write.") || strings.HasPrefix(rpc.name, "Listen.")) {
					// A well-formed name of another project opens a stream
					// for that project.
					want := codes.OK
					if unary[v.name] != "" {
						want = codes.InvalidArgument
					}
					if status.Code(o) != want || om != unary[v.name] {
						t.Errorf("pyric %v %q, want %v %q (the official emulator fails with UNKNOWN here)", status.Code(o), om, want, unary[v.name])
					}
					return
				}
				if status.Code(o) != status.Code(th) {
					t.Errorf("pyric %v %q, official %v %q", status.Code(o), om, status.Code(th), tm)
					return
				}
				if status.Code(o) == codes.InvalidArgument && strings.Contains(tm, " name ") && om != tm {
					t.Errorf("messages differ:\n  pyric:    %s\n  official: %s", om, tm)
				}
			})
		}
	}
}

// normalizeName replaces project in msg, and shifts the indexes the
// message gives past it, so that messages about two projects compare.
func normalizeName(msg, project string) string {
	i := strings.Index(msg, project)
	if i < 0 {
		return msg
	}
	out := strings.ReplaceAll(msg, project, "<p>")
	return indexRE.ReplaceAllStringFunc(out, func(m string) string {
		n, _ := strconv.Atoi(m[len("at index "):])
		if n > len("projects/") {
			n -= len(project)
		}
		return fmt.Sprintf("at index %d", n)
	})
}

var indexRE = regexp.MustCompile(`at index \d+`)
