package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

func TestSplitExec(t *testing.T) {
	s, cmd, f, err := splitExec([]string{"--in-memory", "--hub-port", "0", "--studio-port=-1", "--", "npm", "test", "--", "x"})
	if err != nil || strings.Join(s, " ") != "--in-memory" || strings.Join(cmd, " ") != "npm test -- x" || f.hubPort != 0 || f.studioPort != -1 {
		t.Fatalf("%q %q %+v %v", s, cmd, f, err)
	}
	for _, bad := range [][]string{{"--in-memory"}, {"--"}, {"--hub-port"}, {"--hub-port", "x", "--", "a"}, {"--studio-port=70000", "--", "a"}} {
		if _, _, _, err := splitExec(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestExecStatusAndEnv: exec runs CMD with the emulator variables and
// exits with its status.
func TestExecStatusAndEnv(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	var stderr syncBuffer
	args := append([]string{"exec", "--in-memory", "--project", "demo-exec", "--hub-port", "0", "--studio-port", "0"}, e2etest.FreePortFlags()...)
	args = append(args, "--", "sh", "-c", `env > "$0"; exit 7`, out)
	code := Run(context.Background(), args, Stdio{Out: &stderr, Err: &stderr})
	if code != 7 {
		t.Fatalf("exit %d, want 7\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	for _, k := range []string{"FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "FIREBASE_EMULATOR_HUB"} {
		if !strings.HasPrefix(env[k], "127.0.0.1:") {
			t.Errorf("%s = %q", k, env[k])
		}
	}
	if env["FIREBASE_CONFIG"] != `{"databaseURL":"https://demo-exec.firebaseio.com","projectId":"demo-exec","storageBucket":"demo-exec.appspot.com"}` {
		t.Errorf("FIREBASE_CONFIG = %q", env["FIREBASE_CONFIG"])
	}
	if env["GCLOUD_PROJECT"] != "demo-exec" {
		t.Errorf("GCLOUD_PROJECT = %q", env["GCLOUD_PROJECT"])
	}
	if !strings.Contains(stderr.String(), "Studio") || !strings.Contains(stderr.String(), "shutting down") {
		t.Errorf("banner/shutdown missing:\n%s", stderr.String())
	}
}

// TestExecRulesUnitTesting runs @firebase/rules-unit-testing under pyric
// exec, discovering Firestore, the Realtime Database and Storage through
// the hub only; each denial reaches the test, explained where the SDK
// passes the server's message on.
func TestExecRulesUnitTesting(t *testing.T) {
	e2etest.NeedNode(t)
	t.Setenv("NODE_PATH", filepath.Join(e2etest.JSDir(), "node_modules"))
	t.Setenv("EXIT_WITH", "0")
	script, _ := filepath.Abs("testdata/exec_rut.cjs")
	var stdout, stderr syncBuffer
	args := append([]string{"exec", "--in-memory", "--project", "demo-exec-rut", "--hub-port", "0", "--studio-port", "-1"}, e2etest.FreePortFlags()...)
	args = append(args, "--", "node", script)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := Run(ctx, args, Stdio{Out: &stdout, Err: &stderr})
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	var got struct {
		Hub, Project, Firestore, Code, Message string
		Database, DBCode, DBMessage            string
		Storage, StorageCode                   string
	}
	e2etest.LastJSONLine(t, stdout.String(), &got)
	if got.Project != "demo-exec-rut" || got.Hub == "" || !strings.HasPrefix(got.Firestore, "127.0.0.1:") || got.Code != "permission-denied" {
		t.Fatalf("got %+v", got)
	}
	if !strings.HasPrefix(got.Database, "127.0.0.1:") || got.DBCode != "PERMISSION_DENIED" || !strings.Contains(got.DBMessage, "auth.uid === $uid → 'alice' === 'bob' is false") {
		t.Errorf("database through the hub: %+v", got)
	}
	if !strings.HasPrefix(got.Storage, "127.0.0.1:") || got.StorageCode != "storage/unauthorized" {
		t.Errorf("storage through the hub: %+v", got)
	}
	if !strings.Contains(got.Message, "false for 'create' @ L5") || !strings.Contains(got.Message, "request.auth.uid == uid → 'alice' == 'bob' is false") {
		t.Errorf("the denial is not explained: %q", got.Message)
	}
}
