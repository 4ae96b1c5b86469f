// Package rtdbbench measures the Realtime Database through the official
// JS SDK (firebase@12.19.0 in Node, WebSocket protocol v5) and the admin
// REST API against `pyric serve` (durable, the default) and a do-nothing
// server that speaks just enough of the protocol (the most any server
// could reach through these clients here), each in its own process, in
// the same run, and prints each side's figures and Pyric's ratio to the
// floor: set, update, get, transaction, a query on an `.indexOn` child,
// listener fan-out (many clients on one path, one write: delivery p50
// and p99) and REST put/patch/get. The official RTDB emulator cannot
// run here, so the floor is the only anchor. Beside each rate it prints
// the server process's CPU per operation ("… CPU µs/op", from /proc),
// which the machine's other load moves less than the rate, and for the
// fan-out the CPU per write of the server and of the listening clients'
// processes: clients that spend more per write than the latency asked
// of the server make the fan-out's latency the clients'. So the fan-out
// is measured a second time ("fan-out Go …") with listeners that are
// bare WebSocket connections in the test process (gofanout_test.go),
// each costing the client side tens of microseconds per value instead
// of the JS SDK's hundreds: the server's delivery time.
//
//	PYRIC_BENCH=1 go test -v -run Bench ./e2e/rtdbbench
//
// PYRIC_RTDB_BENCH_N (JS operations per row), PYRIC_RTDB_BENCH_FANOUT
// (listeners) and PYRIC_RTDB_BENCH_REST (REST requests per row) shrink
// the workloads on a loaded machine.
//
// Without PYRIC_BENCH=1 it runs a small smoke workload. It measures; it
// asserts nothing about timing.
package rtdbbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
)

const ns = "demo-rtdbbench-default-rtdb"

func TestMain(m *testing.M) {
	if addr := os.Getenv(floorEnv); addr != "" {
		serveFloor(addr)
	}
	os.Exit(m.Run())
}

type target struct {
	name, host string
	pid        int // the server's process, whose CPU per operation is measured
}

type result = map[string]float64

func TestBench(t *testing.T) {
	full := os.Getenv("PYRIC_BENCH") == "1"
	if !full && testing.Short() {
		t.Skip("benchmark harness")
	}
	e2etest.NeedNode(t, "firebase")
	n, fanout, rest, rounds := 30, 50, 50, 3
	if full {
		n, fanout, rest, rounds = 500, 1000, 2000, 5
	}
	n, fanout, rest = sizeEnv(t, "PYRIC_RTDB_BENCH_N", n), sizeEnv(t, "PYRIC_RTDB_BENCH_FANOUT", fanout), sizeEnv(t, "PYRIC_RTDB_BENCH_REST", rest)
	dir := t.TempDir()
	rules := `{"rules": {".read": true, ".write": true, "scores": {".indexOn": ["score"]}}}`
	if err := os.WriteFile(filepath.Join(dir, "database.rules.json"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := e2etest.StartServe(t, dir, "--data-dir", t.TempDir(), "--project", "demo-rtdbbench", "--database-rules", "database.rules.json")
	targets := []target{{"pyric", srv.Database, srv.Pid()}}

	addr, _, floorPid := benchkit.StartFloorProcess(t, floorEnv)
	targets = append(targets, target{"floor", addr, floorPid})

	res := benchkit.Results{}
	var names []string
	for _, tg := range targets {
		r := result{}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		_, file, _, _ := runtime.Caller(0)
		out := e2etest.RunNode(t, ctx, filepath.Join(filepath.Dir(file), "drive.cjs"),
			"DB="+tg.host, "NS="+ns, fmt.Sprint("N=", n), fmt.Sprint("FANOUT=", fanout), fmt.Sprint("SERVER_PID=", tg.pid))
		cancel()
		e2etest.LastJSONLine(t, out, &r)
		settle(tg.pid)
		restRates(t, tg, rest, r)
		settle(tg.pid)
		goFanout(t, tg, fanout, rounds, r)
		res[tg.name], names = r, append(names, tg.name)
	}
	t.Logf("Realtime Database through the JS SDK (WebSocket) and REST (ratios: higher is better for pyric)\n%s",
		benchkit.Table(names, res, benchkit.Ratio{Of: "floor"}))
}

// sizeEnv is the workload size the environment variable name sets (to
// shrink a run on a loaded machine), else def.
func sizeEnv(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}

// settle waits (at most 10 s) until server process pid is idle: using
// less than 2 ms of CPU in 100 ms. The fan-out's thousand connections
// close as its clients exit, and the server's work for them (their
// listeners' ends, their events) must not be counted as the next
// workload's.
func settle(pid int) {
	last := benchkit.ProcCPU(pid)
	for range 100 {
		time.Sleep(100 * time.Millisecond)
		now := benchkit.ProcCPU(pid)
		if now-last < 2*time.Millisecond {
			return
		}
		last = now
	}
}

// restRates measures the admin REST API (as the Admin SDKs' REST
// clients and curl use it): sequential PUT, PATCH and GET, their rates
// and the server's CPU per request.
func restRates(t *testing.T, tg target, n int, r result) {
	t.Helper()
	c := &http.Client{}
	do := func(method, path string, body string) {
		req, _ := http.NewRequest(method, "http://"+tg.host+path+".json?ns="+ns, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer owner")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s %s: %d %v", tg.name, method, path, resp.StatusCode, v)
		}
	}
	rate := func(key string, fn func(i int)) {
		cpu0, start := benchkit.ProcCPU(tg.pid), time.Now()
		for i := range n {
			fn(i)
		}
		r[key] = float64(n) / time.Since(start).Seconds()
		if cpu := benchkit.ProcCPU(tg.pid) - cpu0; cpu > 0 {
			r[strings.TrimSuffix(key, " /s")+" CPU µs/op"] = float64(cpu.Microseconds()) / float64(n)
		}
	}
	rate("REST put /s", func(i int) { do("PUT", fmt.Sprintf("/rest/r%d", i), fmt.Sprintf(`{"n":%d,"s":"x"}`, i)) })
	rate("REST patch /s", func(i int) { do("PATCH", fmt.Sprintf("/rest/r%d", i), `{"n":0}`) })
	rate("REST get /s", func(i int) { do("GET", fmt.Sprintf("/rest/r%d", i), "") })
}
