package authserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/server"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// The HTTP port's cost: a do-nothing handler answering sign-in's canned
// reply (e2e/authbench's floor) and the real Auth handler on a durable
// log, each served by a plain http.Server (the floor's http.Serve), by an
// http.Server behind Guard, and by server.Port as NewPort builds it, in a
// process of its own, driven by one keep-alive Go client over loopback.
// TestHTTPPortCost prints each setup's server CPU, context switches,
// allocations and bytes allocated per sign-in; it runs only with
// PYRIC_HTTPCOST=1 (it measures, it asserts nothing on the figures):
//
//	PYRIC_HTTPCOST=1 go test -run TestHTTPPortCost -v ./server/auth
//
// PYRIC_HTTPCOST_ONLY picks setups (comma-separated), PYRIC_HTTPCOST_N
// the calls per round, PYRIC_HTTPCOST_ROUNDS the rounds,
// PYRIC_HTTPCOST_CLIENTS how many clients (each its own connection) share
// the calls, PYRIC_HTTPCOST_NEWCONN=1 opens a connection for each call,
// PYRIC_HTTPCOST_WARM the sign-ins before the measured ones (default
// 200);
// PYRIC_HTTPCOST_CPUPROFILE=FILE writes each setup's CPU profile to
// FILE.SETUP, PYRIC_HTTPCOST_MEMPROFILE=FILE its allocations (every one
// sampled); PYRIC_HTTPCOST_STRACE=1 runs each server under strace -c -f and logs
// its syscall summary. The setup "serve" is a real pyric serve (the binary
// at PYRIC_HTTPCOST_PYRIC, with the flags in PYRIC_HTTPCOST_SERVE_ARGS); "ext" a server already running, at
// PYRIC_HTTPCOST_ADDR, whose process is PYRIC_HTTPCOST_PID and
// PYRIC_DEBUG_PPROF address PYRIC_HTTPCOST_PPROF (to profile it while the
// test drives it; without it, no allocations are counted).
//
// The column flt/op is the server's page faults (minor and major) per
// sign-in: a process's heap faults each page in the first time it grows
// into it, and on a paravirtualized machine a fault costs ~13 µs of CPU
// (against ~0.5 µs on bare metal), so that a fresh process whose heap is
// still growing (pyric serve's collector lets it grow 24 MB past the live
// heap) paid ~1.6 faults, ~20 µs, per sign-in of ~9 KB until it had
// reached its size; pyric serve now maps that headroom at once when it
// starts allocating (internal/memlimit), ~0.1 flt/op.
// PYRIC_HTTPCOST_WARM=30000 measures past the heap's growth.

// httpCostEnv, when set, makes this test binary serve the setup it names
// on a free port, printing "ADDR host:port"; each line on its stdin is
// answered with "MEM allocs bytes" (its heap allocations so far).
const httpCostEnv = "PYRIC_HTTPCOST_SERVE"

// httpCostDirEnv names the directory of the served setup's store.
const httpCostDirEnv = "PYRIC_HTTPCOST_DIR"

// httpSetups are the setups compared: {plain, guard, port} × {nothing, auth}.
var httpSetups = []string{"plain-nothing", "guard-nothing", "port-nothing", "plain-auth", "guard-auth", "port-auth"}

func TestMain(m *testing.M) {
	if v := os.Getenv(httpCostEnv); v != "" {
		serveHTTPSetup(v)
	}
	os.Exit(m.Run())
}

// signInReply is the floor's answer to a sign-in, of the real one's shape
// and size.
var signInReply = []byte(`{"kind":"identitytoolkit#VerifyPasswordResponse","localId":"floor-user","email":"floor@bench.example","displayName":"",` +
	`"idToken":"` + strings.Repeat("x", 720) + `","registered":true,"refreshToken":"floor-refresh-token-of-some-length","expiresIn":"3600"}`)

func serveHTTPSetup(setup string) {
	// A setup ending in "+p" runs with one processor more, as pyric serve
	// does (server.SpareProcessor).
	if base, ok := strings.CutSuffix(setup, "+p"); ok {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
		setup = base
	}
	wrap, kind, _ := strings.Cut(setup, "-")
	var h http.Handler
	switch kind {
	case "nothing":
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write(signInReply)
		})
	case "auth":
		// The test's directory (httpCostDirEnv): the server ends by exit
		// or kill, with no chance to remove one of its own.
		log, err := authtest.OpenLog(os.Getenv(httpCostDirEnv))
		if err != nil {
			fail(err)
		}
		eng, err := auth.Open(auth.Options{Log: log})
		if err != nil {
			fail(err)
		}
		h = authserver.New(eng, authserver.Options{DefaultProject: "demo-cost"})
	default:
		fail(fmt.Errorf("setup %q", setup))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	if f := os.Getenv("PYRIC_HTTPCOST_CPUPROFILE"); f != "" {
		startCPUProfile(f + "." + setup)
	}
	if os.Getenv("PYRIC_HTTPCOST_MEMPROFILE") != "" {
		runtime.MemProfileRate = 1
		os.Setenv("PYRIC_HTTPCOST_MEMPROFILE", os.Getenv("PYRIC_HTTPCOST_MEMPROFILE")+"."+setup)
	}
	go answerMem()
	fmt.Printf("ADDR %s\n", l.Addr())
	switch wrap {
	case "plain":
		err = http.Serve(l, h)
	case "guard":
		var pol atomic.Pointer[server.Policy]
		err = (&http.Server{Handler: server.Guard(h, &pol), ReadHeaderTimeout: 30 * time.Second}).Serve(l)
	case "port":
		err = server.NewPort(l, nil, h).Serve()
	default:
		err = fmt.Errorf("setup %q", setup)
	}
	fail(err)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}

// answerMem answers each line of stdin with the process's heap
// allocations so far (objects and bytes).
func answerMem() {
	s := bufio.NewScanner(os.Stdin)
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	for s.Scan() {
		metrics.Read(samples)
		fmt.Printf("MEM %d %d\n", samples[0].Value.Uint64(), samples[1].Value.Uint64())
	}
	pprof.StopCPUProfile()
	if f := os.Getenv("PYRIC_HTTPCOST_MEMPROFILE"); f != "" {
		writeAllocs(f)
	}
	os.Exit(0)
}

// writeAllocs writes the process's allocations profile to file.
func writeAllocs(file string) {
	f, err := os.Create(file)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fail(err)
	}
}

// startCPUProfile profiles the process into file until answerMem ends it.
func startCPUProfile(file string) {
	f, err := os.Create(file)
	if err != nil {
		fail(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fail(err)
	}
}

// costProc is a running setup.
type costProc struct {
	addr  string
	pid   int
	in    io.Writer
	out   *bufio.Reader
	pprof string // a pyric serve's PYRIC_DEBUG_PPROF address
}

func (p *costProc) mem(t *testing.T) (allocs, bytes float64) {
	if p.pprof != "" {
		return pprofMem(t, p.pprof)
	}
	if p.in == nil { // "ext" without PYRIC_HTTPCOST_PPROF: no allocations
		return 0, 0
	}
	fmt.Fprintln(p.in)
	line, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(line, "MEM %g %g", &allocs, &bytes); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return allocs, bytes
}

func startHTTPSetup(t *testing.T, setup string) *costProc {
	if setup == "serve" {
		return startHTTPServe(t)
	}
	if setup == "ext" { // a server already running
		pid, _ := strconv.Atoi(os.Getenv("PYRIC_HTTPCOST_PID"))
		return &costProc{addr: os.Getenv("PYRIC_HTTPCOST_ADDR"), pid: pid, pprof: os.Getenv("PYRIC_HTTPCOST_PPROF")}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if os.Getenv("PYRIC_HTTPCOST_STRACE") == "1" {
		out := filepath.Join(t.TempDir(), "strace")
		cmd = exec.Command("strace", "-c", "-f", "-o", out, os.Args[0], "-test.run=^$")
		t.Cleanup(func() {
			b, _ := os.ReadFile(out)
			t.Logf("%s: strace -c -f\n%s", setup, b)
		})
	}
	cmd.Env = append(os.Environ(), httpCostEnv+"="+setup, httpCostDirEnv+"="+t.TempDir())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Closing stdin ends the server (answerMem exits), so that strace
		// writes its summary.
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok {
		t.Fatalf("%s: %q %v", setup, line, err)
	}
	pid := cmd.Process.Pid
	if os.Getenv("PYRIC_HTTPCOST_STRACE") == "1" {
		pid = straced(t, pid)
	}
	return &costProc{addr: addr, pid: pid, in: in, out: r}
}

// startHTTPServe runs the pyric serve binary at PYRIC_HTTPCOST_PYRIC as
// e2e/authbench does (durable, every port free) with PYRIC_DEBUG_PPROF on
// a free port, for its allocations.
func startHTTPServe(t *testing.T) *costProc {
	bin := os.Getenv("PYRIC_HTTPCOST_PYRIC")
	if bin == "" {
		t.Skip("setup serve needs PYRIC_HTTPCOST_PYRIC, a pyric binary (go build -o /tmp/pyric ./cmd/pyric)")
	}
	dir := t.TempDir()
	pprof := benchkit.FreeAddr(t)
	args := append([]string{"serve", "--json", "--data-dir", filepath.Join(dir, "data"), "--project", "demo-cost"}, e2etest.FreePortFlags()...)
	args = append(args, strings.Fields(os.Getenv("PYRIC_HTTPCOST_SERVE_ARGS"))...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GCLOUD_PROJECT=", "PYRIC_DEBUG_PPROF="+pprof)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var ports map[string]any
	if err == nil {
		err = json.Unmarshal([]byte(line), &ports)
	}
	addr, _ := ports["auth"].(string)
	if err != nil || addr == "" {
		t.Fatalf("pyric serve --json: %q (%v)", line, err)
	}
	go io.Copy(io.Discard, out)
	benchkit.WaitListening(t, pprof)
	return &costProc{addr: addr, pid: cmd.Process.Pid, pprof: pprof}
}

// pprofMem reads a process's allocations so far from its
// /debug/pprof/heap?debug=1 (runtime.MemStats' Mallocs and TotalAlloc).
func pprofMem(t *testing.T, addr string) (allocs, bytes float64) {
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "# Mallocs = "); ok {
			allocs, _ = strconv.ParseFloat(v, 64)
		} else if v, ok := strings.CutPrefix(s.Text(), "# TotalAlloc = "); ok {
			bytes, _ = strconv.ParseFloat(v, 64)
		}
	}
	return allocs, bytes
}

// straced is the process strace (pid) runs.
func straced(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("strace's child: %q", b)
	}
	return child
}

// httpCost is one setup's figures per sign-in.
type httpCost struct{ cpu, sw, flt, allocs, bytes float64 }

// measureHTTPSetup signs in n times through setup and returns the
// server's cost per call.
func measureHTTPSetup(t *testing.T, setup string, n int) httpCost {
	p := startHTTPSetup(t, setup)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer c.CloseIdleConnections()
	base := "http://" + p.addr
	// post fails the test with Error: the clients call it on goroutines
	// of their own.
	post := func(path string, body []byte, ok ...int) {
		resp, err := c.Post(base+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 && !slices.Contains(ok, resp.StatusCode) {
			t.Errorf("%s %s: %d", setup, path, resp.StatusCode)
		}
	}
	const users = 100
	body := func(i int) []byte {
		b, _ := json.Marshal(map[string]any{"email": fmt.Sprintf("u%d@cost.example", i%users), "password": "secret-1", "returnSecureToken": true})
		return b
	}
	bodies := make([][]byte, users)
	for i := range users { // warm up: the accounts, the connection, stacks
		bodies[i] = body(i)
		// (400: EMAIL_EXISTS, on a server already running)
		post("/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", bodies[i], 400)
	}
	warm := 200
	if s := os.Getenv("PYRIC_HTTPCOST_WARM"); s != "" {
		warm, _ = strconv.Atoi(s)
	}
	for i := range warm {
		post("/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k", bodies[i%users])
	}
	if t.Failed() {
		t.FailNow()
	}
	// Two readings back to back tell what a reading allocates itself.
	ra, rb := p.mem(t)
	a0, b0 := p.mem(t)
	ra, rb = a0-ra, b0-rb
	c0, s0, f0 := benchkit.ProcCPU(p.pid), benchkit.ContextSwitches(p.pid), benchkit.PageFaults(p.pid)
	clients := 1
	if s := os.Getenv("PYRIC_HTTPCOST_CLIENTS"); s != "" {
		clients, _ = strconv.Atoi(s)
	}
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = clients
	// Each call on a connection of its own: what the port costs per
	// connection (its sniffing and hand-off).
	c.Transport.(*http.Transport).DisableKeepAlives = os.Getenv("PYRIC_HTTPCOST_NEWCONN") == "1"
	var wg sync.WaitGroup
	for k := range clients {
		wg.Go(func() {
			for i := k; i < n; i += clients {
				post("/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k", bodies[i%users])
			}
		})
	}
	wg.Wait()
	time.Sleep(20 * time.Millisecond)
	c1, s1, f1 := benchkit.ProcCPU(p.pid), benchkit.ContextSwitches(p.pid), benchkit.PageFaults(p.pid)
	a1, b1 := p.mem(t)
	return httpCost{
		cpu:    float64(c1-c0) / float64(time.Microsecond) / float64(n),
		sw:     float64(s1-s0) / float64(n),
		flt:    float64(f1-f0) / float64(n),
		allocs: (a1 - a0 - ra) / float64(n),
		bytes:  (b1 - b0 - rb) / float64(n),
	}
}

func TestHTTPPortCost(t *testing.T) {
	if os.Getenv("PYRIC_HTTPCOST") != "1" {
		t.Skip("measures the HTTP port's setups; PYRIC_HTTPCOST=1 runs it")
	}
	n := benchkit.EnvInt("PYRIC_HTTPCOST_N", 3000)
	setups := benchkit.EnvList("PYRIC_HTTPCOST_ONLY", httpSetups)
	rounds := benchkit.EnvInt("PYRIC_HTTPCOST_ROUNDS", 3)
	res := map[string]*httpCost{}
	for range rounds {
		for _, setup := range setups {
			c := measureHTTPSetup(t, setup, n)
			f := res[setup]
			if f == nil {
				f = &httpCost{cpu: c.cpu, sw: c.sw, flt: c.flt}
				res[setup] = f
			}
			// The least CPU and switches of the rounds (the machine is
			// shared); allocations do not depend on the load.
			f.cpu, f.sw, f.flt = min(f.cpu, c.cpu), min(f.sw, c.sw), min(f.flt, c.flt)
			f.allocs, f.bytes = c.allocs, c.bytes
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%-14s %10s %10s %10s %10s %10s\n", "setup", "cpu µs/op", "sw/op", "flt/op", "allocs/op", "B/op")
	for _, setup := range setups {
		f := res[setup]
		fmt.Fprintf(&out, "%-14s %10.1f %10.2f %10.2f %10.1f %10.0f\n", setup, f.cpu, f.sw, f.flt, f.allocs, f.bytes)
	}
	t.Logf("server cost per sign-in, %d calls, least of %d rounds:\n%s", n, rounds, out.String())
}
