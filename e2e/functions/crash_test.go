package functions_test

import (
	"fmt"
	"net/http"
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

// TestTriggerSurvivesKill9AfterCommit: pyric is killed (kill -9) at the
// moment a write's commit is durable and before its trigger was even
// matched — by the test-only PYRIC_TEST_KILL_AFTER_COMMIT, which makes
// the process kill itself right after the Log append holding the
// written key — for a Firestore document, a Realtime Database value and
// a Cloud Storage object. The commit held its change in the sandbox's
// outbox in the same durable record, so the restart on the same data
// directory delivers the trigger, once, and a clean restart after that
// delivers nothing again.
// conformance: functions.delivery.crash
func TestTriggerSurvivesKill9AfterCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pyric serve")
	}
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	ns := project + "-default-rtdb"
	for _, c := range []struct {
		name string
		// kill is the written key PYRIC_TEST_KILL_AFTER_COMMIT names.
		kill string
		// write makes the write on srv; record is the document its
		// trigger records in seen/, with a field that says it saw it.
		write        func(srv *e2etest.Serve) *http.Request
		record       string
		field, value string
	}{
		{"firestore", "slow/crashed", func(srv *e2etest.Serve) *http.Request {
			url := fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents/slow?documentId=crashed", srv.Firestore, project)
			req, _ := http.NewRequest("POST", url, strings.NewReader(`{"fields":{"value":{"stringValue":"crashed"}}}`))
			req.Header.Set("Content-Type", "application/json")
			return req
		}, "slowRecord-crashed", "value", "crashed"},
		{"database", "scores/crashed", func(srv *e2etest.Serve) *http.Request {
			req, _ := http.NewRequest("PUT", "http://"+srv.Database+"/scores/crashed.json?ns="+ns, strings.NewReader(`{"points": 5}`))
			req.Header.Set("Content-Type", "application/json")
			return req
		}, "scoreCreated-crashed", "instance", ns},
		{"storage", "crashed-upload.txt", func(srv *e2etest.Serve) *http.Request {
			url := fmt.Sprintf("http://%s/upload/storage/v1/b/%s.appspot.com/o?uploadType=media&name=crashed-upload.txt", srv.Storage, project)
			req, _ := http.NewRequest("POST", url, strings.NewReader("meow"))
			req.Header.Set("Content-Type", "text/plain")
			return req
		}, "uploaded-crashed-upload.txt", "name", "crashed-upload.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--project", project, "--data-dir", filepath.Join(dir, "data"),
				"--functions-source", filepath.Join(e2etest.FunctionsDir(), "triggers")}
			t.Setenv("PYRIC_TEST_KILL_AFTER_COMMIT", c.kill)
			srv := e2etest.StartServe(t, dir, args...)
			// The server dies while answering: the write is durable but
			// never acknowledged, as a crash leaves it.
			req := c.write(srv)
			req.Header.Set("Authorization", "Bearer owner")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("the write was answered (%s): PYRIC_TEST_KILL_AFTER_COMMIT did not kill pyric:\n%s", resp.Status, srv.Stderr())
			}
			srv.Kill() // waits for the process, which killed itself
			if !strings.Contains(srv.Stderr(), "killed after committing") {
				t.Fatalf("pyric did not kill itself after the commit:\n%s", srv.Stderr())
			}
			if strings.Contains(srv.Stderr(), "slowRecord started crashed") {
				t.Fatalf("the trigger ran before the kill; the test does not test the gap:\n%s", srv.Stderr())
			}

			t.Setenv("PYRIC_TEST_KILL_AFTER_COMMIT", "")
			srv = e2etest.StartServe(t, dir, args...)
			docs := fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents", srv.Firestore, project)
			var got map[string]any
			deadline := time.Now().Add(60 * time.Second)
			for got == nil && time.Now().Before(deadline) {
				if status, doc := call(t, "GET", docs+"/seen/"+c.record, "owner", "", nil); status == 200 {
					got = plain(doc["fields"]).(map[string]any)
				} else {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if got == nil || got[c.field] != c.value {
				t.Fatalf("the %s write's trigger was not delivered after the restart (got %v):\n%s", c.name, got, srv.Stderr())
			}
			if !strings.Contains(srv.Stderr(), "matching 1 change(s) committed before pyric last stopped") {
				t.Errorf("the restart did not say it matches the held change:\n%s", srv.Stderr())
			}
			if c.name == "firestore" {
				time.Sleep(time.Second) // a second delivery would have started by now
				if n := strings.Count(srv.Stderr(), "slowRecord started crashed"); n != 1 {
					t.Errorf("slowRecord ran %d times for slow/crashed after the restart, want 1:\n%s", n, srv.Stderr())
				}
			}
			// Taken and delivered: a clean restart delivers nothing again.
			srv.Stop()
			srv = e2etest.StartServe(t, dir, args...)
			time.Sleep(time.Second)
			if strings.Contains(srv.Stderr(), "before pyric last stopped") || strings.Contains(srv.Stderr(), "slowRecord started") {
				t.Errorf("a clean restart delivered again:\n%s", srv.Stderr())
			}
		})
	}
}
