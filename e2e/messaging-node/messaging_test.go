// Package messagingnode drives a real `pyric serve` process's Cloud
// Messaging port with the Node admin SDK (firebase-admin), redirected by
// the helper module that port serves, and reads the deliveries back
// through the inbox API.
package messagingnode

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

func TestNodeAdminSDKAgainstServe(t *testing.T) {
	e2etest.NeedNode(t)
	if _, err := os.Stat(filepath.Join(e2etest.JSDir(), "node_modules", "firebase-admin")); err != nil {
		e2etest.Missing(t, "firebase-admin is not in e2e/js/node_modules (cd e2e/js && npm ci)")
	}
	s := e2etest.StartServe(t, t.TempDir(), "--in-memory", "--project", "demo-project")
	if s.Messaging == "" {
		t.Fatal("--json names no messaging port")
	}
	base := "http://" + s.Messaging
	call := func(method, path string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(`{}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, err)
		}
		return out
	}
	mint := func(project, platform string) string {
		req, _ := http.NewRequest("POST", base+"/emulator/v1/projects/"+project+"/tokens", strings.NewReader(`{"platform": "`+platform+`"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var tok struct{ Token string }
		json.NewDecoder(resp.Body).Decode(&tok)
		return tok.Token
	}
	toks := map[string]string{
		"web": mint("demo-project", "web"), "android": mint("demo-project", "android"), "ios": mint("demo-project", "ios"),
		"dead": mint("demo-project", "web"), "limited": mint("demo-project", "android"), "foreign": mint("other-project", "web"),
	}
	call("DELETE", "/emulator/v1/projects/demo-project/tokens/"+toks["dead"])

	resp, err := http.Get(base + "/emulator/v1/firebase-admin.cjs")
	if err != nil {
		t.Fatal(err)
	}
	src, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	helper := filepath.Join(t.TempDir(), "pyric-firebase-admin.cjs")
	if err := os.WriteFile(helper, src, 0o644); err != nil {
		t.Fatal(err)
	}
	tj, _ := json.Marshal(toks)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	script := filepath.Join(e2etest.Root(), "server", "messaging", "testdata", "admin_node.cjs")
	out := e2etest.RunNode(t, ctx, script, "PYRIC_MESSAGING_URL="+base, "PYRIC_HELPER_FILE="+helper, "PYRIC_TOKENS="+string(tj))
	var got struct {
		Send      struct{ OK bool }
		Errors    map[string]struct{ Code string }
		SendEach  struct{ SuccessCount, FailureCount int }
		Subscribe struct{ SuccessCount, FailureCount int }
	}
	e2etest.LastJSONLine(t, out, &got)
	if !got.Send.OK || got.Errors["unregistered"].Code != "messaging/registration-token-not-registered" ||
		got.Errors["senderMismatch"].Code != "messaging/mismatched-credential" || got.SendEach.SuccessCount != 3 ||
		got.SendEach.FailureCount != 2 || got.Subscribe.SuccessCount != 2 {
		t.Fatalf("through pyric serve: %s", out)
	}
	// What the SDK sent is in the serve's inbox API and topic listing.
	in := call("GET", "/emulator/v1/projects/demo-project/tokens/"+toks["android"]+"/messages")["messages"].([]any)
	if len(in) != 1 {
		t.Fatalf("android inbox: %v", in)
	}
	topics, _ := json.Marshal(call("GET", "/emulator/v1/projects/demo-project/topics"))
	if string(topics) != `{"topics":[{"name":"news","tokens":["`+toks["web"]+`"]},{"name":"sports","tokens":["`+toks["web"]+`"]}]}` {
		t.Fatalf("topics: %s", topics)
	}
}
