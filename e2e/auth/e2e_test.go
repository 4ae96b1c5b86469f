// Package authe2e drives pyric's Auth endpoints with the official Firebase
// SDKs (firebase JS in Node, firebase-admin-go) and compares them with the
// firebase-tools Auth emulator. The Node-based tests skip when
// e2e/js/node_modules is absent and fail instead when PYRIC_E2E_REQUIRED=1.
package authe2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/internal/procgroup"
)

func jsDir() string { return e2etest.JSDir() }

func needNode(t *testing.T) { t.Helper(); e2etest.NeedNode(t) }

// reference is the firebase-tools Auth emulator, started once per package.
var reference struct {
	once sync.Once
	url  string
	err  error
	cmd  *exec.Cmd
	dir  string
}

// startReference starts `firebase emulators:start --only auth` (about 15 s)
// and returns its base URL. It is stopped by TestMain.
//
// PYRIC_AUTH_REFERENCE_URL names an emulator already running (started
// with --project demo-diff) instead, for a loaded machine where starting
// one takes minutes.
func startReference(t *testing.T, project string) string {
	t.Helper()
	if u := os.Getenv("PYRIC_AUTH_REFERENCE_URL"); u != "" {
		return u
	}
	needNode(t)
	reference.once.Do(func() {
		dir, err := os.MkdirTemp("", "pyric-auth-ref-*")
		if err != nil {
			reference.err = err
			return
		}
		reference.dir = dir
		ports := benchkit.FreePorts(t, 3)
		authPort, hubPort, logPort := ports[0], ports[1], ports[2]
		cfg := map[string]any{"emulators": map[string]any{
			"auth":    map[string]any{"port": authPort, "host": "127.0.0.1"},
			"ui":      map[string]any{"enabled": false},
			"hub":     map[string]any{"port": hubPort, "host": "127.0.0.1"},
			"logging": map[string]any{"port": logPort, "host": "127.0.0.1"},
		}}
		b, _ := json.Marshal(cfg)
		if err := os.WriteFile(filepath.Join(dir, "firebase.json"), b, 0o644); err != nil {
			reference.err = err
			return
		}
		bin := filepath.Join(jsDir(), "node_modules", ".bin", "firebase")
		cmd := exec.Command(bin, "emulators:start", "--only", "auth", "--project", project)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "FIREBASE_CLI_DISABLE_UPDATE_CHECK=true", "CI=true")
		log, _ := os.Create(filepath.Join(dir, "emulator.log"))
		cmd.Stdout, cmd.Stderr = log, log
		procgroup.Own(cmd)
		if err := cmd.Start(); err != nil {
			reference.err = err
			return
		}
		reference.cmd = cmd
		url := fmt.Sprintf("http://127.0.0.1:%d", authPort)
		if await.Poll(180*time.Second, func() bool {
			resp, err := http.Get(url + "/")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		}) {
			reference.url = url
			return
		}
		out, _ := os.ReadFile(filepath.Join(dir, "emulator.log"))
		reference.err = fmt.Errorf("reference emulator did not start in 180s:\n%s", out)
	})
	if reference.err != nil {
		t.Fatalf("reference Auth emulator: %v", reference.err)
	}
	return reference.url
}

func stopReference() {
	if reference.cmd != nil && reference.cmd.Process != nil {
		// The process group holds firebase-tools and its children.
		_ = procgroup.Signal(reference.cmd, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = reference.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = procgroup.Signal(reference.cmd, syscall.SIGKILL)
		}
	}
	if reference.dir != "" {
		_ = os.RemoveAll(reference.dir)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopReference()
	os.Exit(code)
}

// runNode runs a script from testdata with the pinned Node packages.
func runNode(t *testing.T, ctx context.Context, script string, env ...string) string {
	t.Helper()
	abs, _ := filepath.Abs(filepath.Join("testdata", script))
	return e2etest.RunNode(t, ctx, abs, env...)
}
