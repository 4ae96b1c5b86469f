package functions_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

// TestTriggerSurvivesKill9: a write pyric acknowledged whose trigger had
// not been delivered when pyric was killed (kill -9, mid-invocation) is
// delivered after the restart on the same data directory — at least
// once, as production delivers (firebase-tools loses it). A delivery
// that was made before the crash is not made again.
// conformance: functions.delivery.crash
func TestTriggerSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pyric serve")
	}
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	dir := t.TempDir()
	args := []string{"--project", project, "--data-dir", filepath.Join(dir, "data"),
		"--functions-source", filepath.Join(e2etest.FunctionsDir(), "triggers")}
	srv := e2etest.StartServe(t, dir, args...)
	docs := func(s *e2etest.Serve) string {
		return fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents", s.Firestore, project)
	}
	write := func(s *e2etest.Serve, id string) {
		t.Helper()
		body := fmt.Sprintf(`{"fields":{"value":{"stringValue":%q}}}`, id)
		if status, out := call(t, "POST", docs(s)+"/slow?documentId="+id, "owner", "application/json", []byte(body)); status != 200 {
			t.Fatalf("create slow/%s: %d %v", id, status, out)
		}
	}
	recorded := func(s *e2etest.Serve, id string, within time.Duration) map[string]any {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			status, doc := call(t, "GET", docs(s)+"/seen/slowRecord-"+id, "owner", "", nil)
			if status == 200 {
				return plain(doc["fields"]).(map[string]any)
			}
			if time.Now().After(deadline) {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// One delivery made before the crash.
	write(srv, "before")
	if recorded(srv, "before", 60*time.Second) == nil {
		t.Fatalf("slow/before's trigger never ran:\n%s", srv.Stderr())
	}
	// One in flight when pyric is killed.
	write(srv, "inflight")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(srv.Stderr(), "slowRecord started inflight") {
		if time.Now().After(deadline) {
			t.Fatalf("slowRecord never started for slow/inflight:\n%s", srv.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Kill()

	srv = e2etest.StartServe(t, dir, args...)
	got := recorded(srv, "inflight", 60*time.Second)
	if got == nil || got["value"] != "inflight" {
		t.Fatalf("slow/inflight's trigger was not delivered after the restart (got %v):\n%s", got, srv.Stderr())
	}
	if !strings.Contains(srv.Stderr(), "delivering 1 trigger event(s) left pending") {
		t.Errorf("the restart did not say it delivers the pending event:\n%s", srv.Stderr())
	}
	if n := strings.Count(srv.Stderr(), "slowRecord started before"); n != 0 {
		t.Errorf("slow/before's delivery, made before the crash, ran %d more time(s)", n)
	}
	// The journal is settled: a clean restart delivers nothing again.
	srv.Stop()
	srv = e2etest.StartServe(t, dir, args...)
	time.Sleep(time.Second)
	if strings.Contains(srv.Stderr(), "left pending") || strings.Contains(srv.Stderr(), "slowRecord started") {
		t.Errorf("a clean restart redelivered:\n%s", srv.Stderr())
	}
}
