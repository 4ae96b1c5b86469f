// Package authbench measures Firebase Auth through its REST API (what
// every client SDK speaks) and the Go Admin SDK against `pyric serve`
// (durable, the default), firebase-tools' Auth emulator and a do-nothing
// Auth server that answers canned replies of the right shape (the most
// any server could reach through these clients here), each in its own
// process, in the same run, and prints each side's figures and Pyric's
// ratios: sign-up, sign-in with a password, ID-token refresh,
// verifyIdToken with the revocation check (a lookup round trip), 64
// concurrent clients signing in, and startup. Every target gets the same
// client work; the targets take turns in three rounds and each rate is a
// target's best round. A second table gives each server's CPU time per
// operation (its process's run time over the workload's operations, the
// least of the rounds), which the machine's load moves far less than the
// rates.
//
//	PYRIC_BENCH=1 go test -v -run Bench ./e2e/authbench
//
// Without PYRIC_BENCH=1 it runs a small smoke workload (firebase-tools
// only under PYRIC_E2E_REQUIRED=1). It measures; it asserts nothing
// about timing.
package authbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	"google.golang.org/api/option"

	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/internal/procgroup"
)

const project = "demo-authbench"

func TestMain(m *testing.M) {
	if addr := os.Getenv(floorEnv); addr != "" {
		serveFloor(addr)
	}
	os.Exit(m.Run())
}

type config struct{ n, clients, perClient int }

type target struct {
	name    string
	host    string // host:port of the Auth endpoint
	startup time.Duration
	pid     int // the server's process (its CPU time)
}

type result = map[string]float64

func TestBench(t *testing.T) {
	full := os.Getenv("PYRIC_BENCH") == "1"
	if !full && testing.Short() {
		t.Skip("benchmark harness")
	}
	cfg := config{n: 30, clients: 8, perClient: 5}
	if full {
		cfg = config{n: 500, clients: 64, perClient: 20}
	}
	var targets []target

	e2etest.Pyric(t)
	start := time.Now()
	srv := e2etest.StartServe(t, t.TempDir(), "--data-dir", t.TempDir(), "--project", project)
	targets = append(targets, target{name: "pyric", host: srv.Auth, startup: time.Since(start), pid: srv.Pid()})

	if full || os.Getenv("PYRIC_E2E_REQUIRED") == "1" {
		targets = append(targets, startEmulator(t))
	}

	addr, took, pid := benchkit.StartFloorProcess(t, floorEnv)
	targets = append(targets, target{name: "floor", host: addr, startup: took, pid: pid})

	// Rounds alternate the targets and each row keeps a target's best
	// round, so that a change in the machine's load during the run (other
	// processes share it) does not land on one target's turn only.
	rounds := 1
	if full {
		rounds = 3
	}
	res, cpu := benchkit.Results{}, benchkit.Results{}
	var names []string
	for _, tg := range targets {
		res[tg.name], names = result{"startup ms": float64(tg.startup.Milliseconds())}, append(names, tg.name)
		cpu[tg.name] = result{}
	}
	for range rounds {
		for _, tg := range targets {
			r, c := run(t, tg, cfg)
			for k, v := range r {
				res[tg.name][k] = max(res[tg.name][k], v)
			}
			for k, v := range c {
				if old, ok := cpu[tg.name][k]; !ok || v < old {
					cpu[tg.name][k] = v
				}
			}
		}
	}
	t.Logf("Auth through its REST API and the Go Admin SDK (ratios: higher is better for pyric)\n%s\n"+
		"the server's CPU time per operation (µs; ratios: the other's over pyric's, higher is better for pyric):\n%s",
		benchkit.Table(names, res, benchkit.Ratio{Of: "floor"}, benchkit.Ratio{Of: "emulator"}),
		benchkit.Table(names, cpu, benchkit.Ratio{Of: "floor"}, benchkit.Ratio{Of: "emulator"}))
}

// call posts one Identity Toolkit / Secure Token request.
func call(t *testing.T, c *http.Client, url string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := c.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %v %v", url, resp.StatusCode, out, err)
	}
	return out
}

// run drives one target through the workload and returns its rates and
// the server's CPU time per operation of each workload.
func run(t *testing.T, tg target, cfg config) (result, result) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	base := "http://" + tg.host
	signUp := base + "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k"
	signIn := base + "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k"
	refresh := base + "/securetoken.googleapis.com/v1/token?key=k"
	r, cpu := result{}, result{}
	// measure records the rate (key) of n operations that fn runs, and
	// the server's CPU time per operation.
	measure := func(key string, n int, fn func()) {
		cpu0, start := benchkit.ProcCPU(tg.pid), time.Now()
		fn()
		r[key] = float64(n) / time.Since(start).Seconds()
		if used := benchkit.ProcCPU(tg.pid) - cpu0; used > 0 {
			cpu[strings.TrimSuffix(key, " /s")+" CPU µs/op"] = float64(used.Microseconds()) / float64(n)
		}
	}
	rate := func(key string, n int, fn func(i int)) {
		measure(key, n, func() {
			for i := range n {
				fn(i)
			}
		})
	}
	stamp := time.Now().UnixNano()
	email := func(i int) string { return fmt.Sprintf("u%d-%d@bench.example", stamp, i) }
	tokens := make([]string, cfg.n)
	refreshTokens := make([]string, cfg.n)
	rate("sign-up /s", cfg.n, func(i int) {
		call(t, c, signUp, map[string]any{"email": email(i), "password": "secret-1", "returnSecureToken": true})
	})
	rate("sign-in /s", cfg.n, func(i int) {
		out := call(t, c, signIn, map[string]any{"email": email(i), "password": "secret-1", "returnSecureToken": true})
		tokens[i], _ = out["idToken"].(string)
		refreshTokens[i], _ = out["refreshToken"].(string)
	})
	rate("token refresh /s", cfg.n, func(i int) {
		call(t, c, refresh, map[string]any{"grant_type": "refresh_token", "refresh_token": refreshTokens[i]})
	})

	// verifyIdToken with the revocation check: the Admin SDK's lookup
	// round trip.
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", tg.host)
	ctx := context.Background()
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: project}, option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	ac, err := app.Auth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rate("verifyIdToken+revoked /s", cfg.n, func(i int) {
		if _, err := ac.VerifyIDTokenAndCheckRevoked(ctx, tokens[i]); err != nil {
			t.Fatalf("%s: verify: %v", tg.name, err)
		}
	})

	measure(fmt.Sprintf("%d clients sign-in /s", cfg.clients), cfg.clients*cfg.perClient, func() {
		var wg sync.WaitGroup
		for ci := range cfg.clients {
			wg.Go(func() {
				for k := range cfg.perClient {
					call(t, c, signIn, map[string]any{"email": email((ci*cfg.perClient + k) % cfg.n), "password": "secret-1", "returnSecureToken": true})
				}
			})
		}
		wg.Wait()
	})
	return r, cpu
}

// startEmulator starts firebase-tools' Auth emulator (e2e/js's pinned
// firebase-tools) and stops it when the test ends.
func startEmulator(t *testing.T) target {
	t.Helper()
	e2etest.NeedNode(t)
	bin := filepath.Join(e2etest.JSDir(), "node_modules", ".bin", "firebase")
	if _, err := os.Stat(bin); err != nil {
		e2etest.Missing(t, "firebase-tools is not installed in e2e/js (npm ci there): %v", err)
	}
	dir := t.TempDir()
	addr, hub, logging := benchkit.FreeAddr(t), benchkit.FreeAddr(t), benchkit.FreeAddr(t)
	port := func(a string) int { _, p, _ := net.SplitHostPort(a); var n int; fmt.Sscan(p, &n); return n }
	cfg := map[string]any{"emulators": map[string]any{
		"auth":    map[string]any{"port": port(addr), "host": "127.0.0.1"},
		"ui":      map[string]any{"enabled": false},
		"hub":     map[string]any{"port": port(hub), "host": "127.0.0.1"},
		"logging": map[string]any{"port": port(logging), "host": "127.0.0.1"},
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "emulators:start", "--only", "auth", "--project", project)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "FIREBASE_CLI_DISABLE_UPDATE_CHECK=true", "CI=1", "NO_UPDATE_NOTIFIER=1")
	procgroup.Own(cmd)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		procgroup.Signal(cmd, syscall.SIGKILL)
		cmd.Wait()
	})
	waitHTTP(t, "http://"+addr+"/")
	return target{name: "emulator", host: addr, startup: time.Since(start), pid: cmd.Process.Pid}
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	await.Until(t, 3*time.Minute, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, "%s to answer 200", url)
}
