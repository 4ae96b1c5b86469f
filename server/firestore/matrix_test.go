package firestoreserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// matrixCase is one request of the transport matrix: a commit of writes
// by one identity, and the code it must end with on every transport.
type matrixCase struct {
	name   string
	alice  bool   // as the user alice (else admin)
	writes string // the JSON array of writes
	code   string // the gRPC code name (OK for success)
	msg    string // a substring the message must contain
}

const matrixDB = "projects/p/databases/(default)"

var matrixCases = []matrixCase{
	{"set allowed", true, `[{"update":{"name":"` + matrixDB + `/documents/open/%s","fields":{"n":{"integerValue":"1"}}}}]`, "OK", ""},
	{"denied by rules", true, `[{"update":{"name":"` + matrixDB + `/documents/users/bob%s","fields":{}}}]`, "PermissionDenied", "false for 'create' @ L5"},
	{"reserved field name", false, `[{"update":{"name":"` + matrixDB + `/documents/open/r%s","fields":{"__bad__":{"nullValue":null}}}}]`, "InvalidArgument", "__bad__"},
	{"update of a missing document", false, `[{"update":{"name":"` + matrixDB + `/documents/open/missing%s","fields":{}},"currentDocument":{"exists":true}}]`, "NotFound", "missing"},
	{"create of an existing document", false, `[{"update":{"name":"` + matrixDB + `/documents/seed/one%.0s","fields":{}},"currentDocument":{"exists":false}}]`, "AlreadyExists", "seed/one"},
	{"invalid document path", false, `[{"update":{"name":"` + matrixDB + `/documents/open%.0s","fields":{}}}]`, "InvalidArgument", "open"},
}

// outcome is what a transport reported: a code name and a message.
type outcome struct{ code, msg string }

// TestTransportMatrix runs one table of requests in-process (the engine,
// errors through the adapters' one mapping), over gRPC, REST and
// WebChannel, and requires the same code and message from each.
func TestTransportMatrix(t *testing.T) {
	t.Parallel()
	s := New(Options{Engine: firestore.New(firestore.Options{}), DefaultProject: "p"})
	if _, err := s.Rules().Set("firestore.rules", restRules); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port, svc := NewPort(l, s)
	go port.Serve()
	t.Cleanup(func() {
		svc.Drain()
		port.Close()
		ts.Close()
	})
	conn, err := grpc.NewClient("passthrough:///"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewFirestoreClient(conn)
	ctx := context.Background()
	seed := &pb.CommitRequest{Database: matrixDB, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: matrixDB + "/documents/seed/one"}}}}}
	if _, err := s.opts.Engine.Commit(ctx, identity.AdminIdentity(), seed); err != nil {
		t.Fatal(err)
	}

	transports := []struct {
		name string
		run  func(t *testing.T, c matrixCase, writes []*pb.Write, writesJSON string) outcome
	}{
		{"in-process", func(t *testing.T, c matrixCase, writes []*pb.Write, _ string) outcome {
			who := identity.AdminIdentity()
			if c.alice {
				who = identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
			}
			_, err := s.opts.Engine.Commit(ctx, who, &pb.CommitRequest{Database: matrixDB, Writes: writes})
			st := Status(err)
			return outcome{st.Code().String(), st.Message()}
		}},
		{"gRPC", func(t *testing.T, c matrixCase, writes []*pb.Write, _ string) outcome {
			cctx := metadata.AppendToOutgoingContext(ctx, "authorization", bearerFor(c))
			_, err := client.Commit(cctx, &pb.CommitRequest{Database: matrixDB, Writes: writes})
			st, _ := status.FromError(err)
			return outcome{st.Code().String(), st.Message()}
		}},
		{"REST", func(t *testing.T, c matrixCase, _ []*pb.Write, writesJSON string) outcome {
			r := do(t, ts, "POST", "/v1/"+matrixDB+"/documents:commit", `{"writes":`+writesJSON+`}`, bearerFor(c))
			if r.status == 200 {
				return outcome{"OK", ""}
			}
			st, msg, _ := r.err(t)
			return outcome{restCode(st), msg}
		}},
		{"WebChannel", func(t *testing.T, c matrixCase, _ []*pb.Write, writesJSON string) outcome {
			wc := newWCClient(t, ts, "Write")
			wc.open(bearerFor(c), `{"database":"`+matrixDB+`"}`)
			wc.collect(1)
			wc.send(`{"streamToken":"MA==","writes":` + writesJSON + `}`)
			got := wc.collect(1)[0]
			var e struct {
				Error *struct{ Message, Status string }
			}
			json.Unmarshal([]byte(got), &e)
			if e.Error == nil {
				return outcome{"OK", ""}
			}
			// The channel frames an error's message as "<STATUS>: <message>",
			// as the official emulator does.
			return outcome{restCode(e.Error.Status), strings.TrimPrefix(e.Error.Message, e.Error.Status+": ")}
		}},
	}
	for _, c := range matrixCases {
		t.Run(c.name, func(t *testing.T) {
			var first *outcome
			for i, tr := range transports {
				js := fmt.Sprintf(c.writes, fmt.Sprint(i))
				var writes []*pb.Write
				var raw []json.RawMessage
				if err := json.Unmarshal([]byte(js), &raw); err != nil {
					t.Fatal(err)
				}
				for _, w := range raw {
					pw := &pb.Write{}
					if err := protojson.Unmarshal(w, pw); err != nil {
						t.Fatal(err)
					}
					writes = append(writes, pw)
				}
				got := tr.run(t, c, writes, js)
				if got.code != c.code || !strings.Contains(got.msg, c.msg) {
					t.Errorf("%s: %s %q, want %s containing %q", tr.name, got.code, got.msg, c.code, c.msg)
				}
				// Messages name the transport's own document; compare them
				// with the document number taken out.
				norm := outcome{got.code, strings.ReplaceAll(got.msg, fmt.Sprint(i), "#")}
				if first == nil {
					first = &norm
				} else if norm != *first {
					t.Errorf("%s: %+v differs from in-process %+v", tr.name, norm, *first)
				}
			}
		})
	}
}

func bearerFor(c matrixCase) string {
	if c.alice {
		return aliceToken()
	}
	return owner
}

// restCode turns a REST status ("PERMISSION_DENIED") into the gRPC code
// name ("PermissionDenied").
func restCode(s string) string {
	c, _ := errcode.Parse(s)
	return c.GRPC().String()
}
