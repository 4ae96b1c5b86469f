package verify_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/internal/e2etest"
)

// TestServeFirestoreSessionKill9: a session of allowed and denied writes
// by alice and bob through the official Go client against a real `pyric
// serve` capturing by default into <data-dir>/last-session.json; the
// server is killed with SIGKILL in the middle of a burst of writes. The
// fixture left behind parses, holds every write acknowledged before its
// last rewrite, and `pyric verify` exits 0 with the session's rules and
// 1 with rules forbidding bob, reporting each of bob's writes now-denied
// with the explanation. A restart keeps the killed session's fixture
// beside the new one.
func TestServeFirestoreSessionKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pyric binary")
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "firestore.rules")
	os.WriteFile(rules, []byte(sessionRules), 0o644)
	data := filepath.Join(dir, ".pyric")
	fixture := filepath.Join(data, "last-session.json")
	srv := e2etest.StartServe(t, dir, "--project", "demo-kill9", "--data-dir", data, "--rules", rules)
	ctx := context.Background()
	alice := client(t, srv.Firestore, srv.Project, "alice")
	bob := client(t, srv.Firestore, srv.Project, "bob")
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	denied := func(_ any, err error) {
		t.Helper()
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("want PERMISSION_DENIED, got %v", err)
		}
	}
	must(alice.Doc("posts/a1").Set(ctx, map[string]any{"owner": "alice", "n": 1}))
	must(bob.Doc("posts/b1").Set(ctx, map[string]any{"owner": "bob", "n": 1}))
	denied(bob.Doc("posts/a1").Update(ctx, []firestore.Update{{Path: "n", Value: 2}}))
	denied(alice.Doc("posts/x").Set(ctx, map[string]any{"owner": "bob"}))
	must(bob.Doc("posts/b1").Update(ctx, []firestore.Update{{Path: "n", Value: firestore.Increment(1)}}))
	must(bob.Doc("posts/b2").Set(ctx, map[string]any{"owner": "bob"}))

	// Wait until the capture has written the acknowledged session (it
	// rewrites the file shortly after each change); every version read on
	// the way must parse.
	commitsIn := func(f *capture.Fixture) map[string]int {
		out := map[string]int{}
		for _, e := range f.Events {
			if e.Kind == "commit" {
				out[e.Path]++
			}
		}
		return out
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(fixture)
		if err == nil {
			f, err := capture.DecodeWith(b, regs())
			if err != nil {
				t.Fatalf("the fixture on disk does not parse: %v", err)
			}
			c := commitsIn(f)
			if c["posts/a1"] == 1 && c["posts/b1"] == 2 && c["posts/b2"] == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fixture never held the acknowledged session (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A burst of alice's writes, killed in the middle.
	var acked atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := alice.Doc(fmt.Sprintf("posts/k%04d", i)).Set(ctx, map[string]any{"owner": "alice", "i": i}); err != nil {
				return
			}
			acked.Add(1)
		}
	}()
	// Kill once the capture has rewritten the file during the burst (some
	// burst writes in it) and more were acknowledged since.
	burstIn := func() int {
		b, err := os.ReadFile(fixture)
		if err != nil {
			return 0
		}
		f, err := capture.DecodeWith(b, regs())
		if err != nil {
			t.Errorf("the fixture on disk does not parse during the burst: %v", err)
			return 0
		}
		return len(commitsIn(f)) - 3
	}
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if acked.Load() >= 30 && burstIn() >= 10 {
			break
		}
	}
	srv.Kill()
	close(stop)
	<-done
	if acked.Load() < 30 {
		t.Fatalf("only %d writes acknowledged before the kill", acked.Load())
	}
	if n := burstIn(); n < 10 {
		t.Fatalf("the capture never rewrote the fixture during the burst (%d burst writes in it)", n)
	}

	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	f, err := capture.DecodeWith(b, regs())
	if err != nil {
		t.Fatalf("after kill -9 the fixture does not parse: %v", err)
	}
	c := commitsIn(f)
	if c["posts/a1"] != 1 || c["posts/b1"] != 2 || c["posts/b2"] != 1 {
		t.Fatalf("after kill -9 the fixture lost acknowledged writes: %v", c)
	}
	t.Logf("%d burst writes acknowledged, %d in the fixture", acked.Load(), len(c)-3)

	bin := e2etest.Pyric(t)
	run := func(args ...string) (string, int) {
		out, err := exec.Command(bin, args...).Output()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run("verify", "--fixture", fixture, "--rules", rules); code != 0 {
		t.Fatalf("verify of the killed session with its own rules: exit %d\n%s", code, out)
	}
	cand := filepath.Join(dir, "nobob.rules")
	os.WriteFile(cand, []byte(noBobRules), 0o644)
	out, code := run("verify", "--fixture", fixture, "--rules", cand)
	if code != 1 {
		t.Fatalf("verify with rules forbidding bob: exit %d\n%s", code, out)
	}
	for _, w := range []string{"now-denied", "posts/b1", "posts/b2", "bob"} {
		if !strings.Contains(out, w) {
			t.Errorf("verify output lacks %q:\n%s", w, out)
		}
	}

	// A restart on the same data directory keeps the killed session.
	srv2 := e2etest.StartServe(t, dir, "--project", "demo-kill9", "--data-dir", data, "--rules", rules)
	srv2.Stop()
	prev := filepath.Join(data, "last-session.previous.json")
	pb, err := os.ReadFile(prev)
	if err != nil {
		t.Fatalf("the killed session's fixture is not kept on restart: %v", err)
	}
	if string(pb) != string(b) {
		t.Errorf("%s differs from the fixture the killed server left", prev)
	}
	entries, _ := os.ReadDir(data)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
