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
// moment a change's commit is durable and before its trigger was even
// matched — by the test-only PYRIC_TEST_KILL_AFTER_COMMIT, which makes
// the process kill itself right after the durable write holding the
// written key — for every source of event triggers: a Firestore
// document, a Realtime Database value, a Cloud Storage object, an Auth
// user (v1 auth.user().onCreate), a Pub/Sub message (v2
// onMessagePublished, delivered from the publish itself: the topic has
// no subscription that would keep it), an Eventarc custom event
// (onCustomEventPublished; its publish keeps nothing but the held event,
// so the kill follows that) and a Cloud Tasks task (onTaskDispatched;
// the task itself is durable). The commit held its change in the
// sandbox's outbox in the same durable record (a task needs none), so
// the restart on the same data directory delivers the trigger, once,
// and a clean restart after that delivers nothing again.
// conformance: functions.delivery.crash
func TestTriggerSurvivesKill9AfterCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pyric serve")
	}
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	ns := project + "-default-rtdb"
	jsonReq := func(method, url, body string) *http.Request {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	for _, c := range []struct {
		name string
		// source is the functions' directory under e2e/functions.
		source string
		// kill is the written key PYRIC_TEST_KILL_AFTER_COMMIT names.
		kill string
		// write makes the write on srv; record is the document its
		// trigger records in seen/, with a field that says it saw it.
		write        func(srv *e2etest.Serve) *http.Request
		record       string
		field, value string
		// held: the change goes through the outbox (all but a task).
		held bool
	}{
		{"firestore", "triggers", "slow/crashed", func(srv *e2etest.Serve) *http.Request {
			return jsonReq("POST", fmt.Sprintf("http://%s/v1/projects/%s/databases/(default)/documents/slow?documentId=crashed", srv.Firestore, project),
				`{"fields":{"value":{"stringValue":"crashed"}}}`)
		}, "slowRecord-crashed", "value", "crashed", true},
		{"database", "triggers", "scores/crashed", func(srv *e2etest.Serve) *http.Request {
			return jsonReq("PUT", "http://"+srv.Database+"/scores/crashed.json?ns="+ns, `{"points": 5}`)
		}, "scoreCreated-crashed", "instance", ns, true},
		{"storage", "triggers", "crashed-upload.txt", func(srv *e2etest.Serve) *http.Request {
			url := fmt.Sprintf("http://%s/upload/storage/v1/b/%s.appspot.com/o?uploadType=media&name=crashed-upload.txt", srv.Storage, project)
			req, _ := http.NewRequest("POST", url, strings.NewReader("meow"))
			req.Header.Set("Content-Type", "text/plain")
			return req
		}, "uploaded-crashed-upload.txt", "name", "crashed-upload.txt", true},
		// The account's record key holds its uid.
		{"auth", "triggers", "crashed-user", func(srv *e2etest.Serve) *http.Request {
			return jsonReq("POST", fmt.Sprintf("http://%s/identitytoolkit.googleapis.com/v1/projects/%s/accounts", srv.Auth, project),
				`{"localId":"crashed-user","email":"crashed@example.com"}`)
		}, "newUser-crashed-user", "email", "crashed@example.com", true},
		// A publish writes no key of its topic (no subscription keeps
		// the message); the newest message id, which every publish
		// writes, is this one's: the first of the data directory.
		{"pubsub", "pubsub", "lastId", func(srv *e2etest.Serve) *http.Request {
			return jsonReq("POST", fmt.Sprintf("http://%s/v1/projects/%s/topics/orders:publish", srv.PubSub, project),
				`{"messages":[{"data":"eyJvcmRlciI6OX0=","attributes":{"n":"9"}}]}`)
		}, "psV2-1", "messageId", "1", true},
		// Published by a function through the Admin SDK, as an app does.
		{"eventarc", "triggers", "crashed-event", func(srv *e2etest.Serve) *http.Request {
			return jsonReq("POST", fmt.Sprintf("http://%s/%s/us-central1/publishEvent", srv.Functions, project),
				`{"events":[{"type":"com.example.order.shipped","source":"/crash","id":"crashed-event","carrier":"ups","data":{"order":9}}]}`)
		}, "orderShipped-crashed-event", "", "", true},
		// Enqueued by a function through the Admin SDK; the task's key
		// holds its name.
		{"tasks", "triggers", "tasks/crashedtask", func(srv *e2etest.Serve) *http.Request {
			req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/%s/us-central1/enqueueWork?id=crashedtask&n=9", srv.Functions, project), nil)
			return req
		}, "processTask-crashedtask", "id", "crashedtask", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--project", project, "--data-dir", filepath.Join(dir, "data"),
				"--functions-source", filepath.Join(e2etest.FunctionsDir(), c.source)}
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
			if got == nil || c.field != "" && got[c.field] != c.value {
				t.Fatalf("the %s write's trigger was not delivered after the restart (got %v):\n%s", c.name, got, srv.Stderr())
			}
			if c.name == "eventarc" {
				if ev, _ := got["event"].(map[string]any); ev["id"] != "crashed-event" || ev["carrier"] != "ups" || fmt.Sprint(ev["data"]) != "map[order:9]" {
					t.Fatalf("orderShipped received %v after the restart", got["event"])
				}
			}
			if c.held && !strings.Contains(srv.Stderr(), "matching 1 change(s) committed before pyric last stopped") {
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
