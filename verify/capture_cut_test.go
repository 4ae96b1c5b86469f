package verify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/verify"
)

// gateLog is a Firestore Log whose Appends, once armed, wait for the test
// (a durable store's sync, stretched).
type gateLog struct {
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (l *gateLog) Append(string, []service.LogChange) error {
	l.mu.Lock()
	armed := l.armed
	l.mu.Unlock()
	if armed {
		l.entered <- struct{}{}
		<-l.release
	}
	return nil
}

func (l *gateLog) Load(func(string, []service.LogChange) error) error { return nil }

// TestCaptureCutWhileCommitDurable: the capture flushes while a client's
// write waits for durability, and the server is killed right then (the
// file is read as it is): the session it leaves verifies with its own
// rules. The write's request event was emitted before the commit was
// durable and visible, so that flush wrote the allowed write with the
// document still absent, and the replay made a document the capture did
// not have (TestServeFirestoreSessionKill9's occasional "state-drift
// posts/kNNNN: captured (absent)").
func TestCaptureCutWhileCommitDurable(t *testing.T) {
	ctx := context.Background()
	log := &gateLog{entered: make(chan struct{}), release: make(chan struct{})}
	sb, err := sandbox.Open(sandbox.Options{Project: "demo-cut", Services: []service.Registration{{Name: firestore.ServiceName,
		New: func(env service.Env) (service.Service, error) {
			env.Log = log
			return firestore.Registration(firestore.Options{}).New(env)
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	fs := sb.Service(firestore.ServiceName).(*firestore.Service)
	if _, err := fs.SetRulesFile("firestore.rules", sessionRules); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := capture.Start(ctx, sb, path, capture.Options{Debounce: time.Hour}) // flushes only when told
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	db := firestore.DatabaseName{Project: "demo-cut", Database: firestore.DefaultDatabase}
	alice := identity.NewUser("alice", map[string]any{"sub": "alice"})
	write := func(rel string, i int) error {
		_, err := fs.Engine.Commit(ctx, alice, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
			Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(rel),
				Fields: map[string]*pb.Value{"owner": firestore.String("alice"), "i": firestore.Int(int64(i))}}}}}})
		return err
	}
	if err := write("posts/k0", 0); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	log.armed = true
	log.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- write("posts/k1", 1) }()
	<-log.entered // k1's commit waits for durability
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path) // what a kill -9 now leaves
	if err != nil {
		t.Fatal(err)
	}
	close(log.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	f, err := capture.DecodeWith(data, regs())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range f.Events {
		got = append(got, fmt.Sprintf("%s %s", e.Kind, e.Path))
	}
	if want := "[request posts/k0 commit posts/k0]"; fmt.Sprint(got) != want {
		t.Errorf("the killed session's events are %v, want %s", got, want)
	}
	res, err := verify.Run(f, verify.Options{Registrations: regs()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Services["firestore"] == nil || res.Services["firestore"].CheckedEvents != 1 {
		out, _ := json.MarshalIndent(res, "", "  ")
		t.Errorf("the killed session does not verify with its own rules:\n%s", out)
	}
}
