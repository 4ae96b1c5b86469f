package storagebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
)

// smallSize is the small objects' size.
const smallSize = 1 << 10

func TestMain(m *testing.M) {
	if addr := os.Getenv(floorEnv); addr != "" {
		serveFloor(addr)
	}
	os.Exit(m.Run())
}

// config is one run's workload sizes.
type config struct {
	small    int // sequential small uploads (then as many downloads, metadata reads)
	lists    int // listings of a 100-object prefix
	clients  int // concurrent clients
	perCli   int // uploads+downloads each
	largeMiB int // the large object
}

type target struct {
	name    string
	host    string // host:port for STORAGE_EMULATOR_HOST
	startup time.Duration
	pid     int // the server's process, for its CPU time
	// profiles, when set, is where each workload's CPU profile of the
	// server goes (pyric's, through PYRIC_DEBUG_PPROF at pprofAddr).
	profiles string
}

// profileEnv names the folder that, when set, receives a CPU profile of
// pyric serve per workload: after each workload is measured, it runs
// again, over and over for profileTime, while pyric's profile is taken
// (the reruns replace objects the first run created). The measured
// figures are those of the first run, with pyric sampling its mutex and
// block profiles (PYRIC_DEBUG_PPROF turns them on): compare ratios of
// runs without it.
//
//	PYRIC_BENCH=1 PYRIC_BENCH_PROFILE=/tmp/prof go test -v -run Bench ./e2e/storagebench
//	go tool pprof -top /tmp/prof/small-upload.pprof
const profileEnv = "PYRIC_BENCH_PROFILE"

const profileTime = 5 * time.Second

// pprofAddr is pyric serve's profile address in a profiling run.
var pprofAddr string

// profile runs fn again and again for profileTime while the target's
// CPU profile is written to its profiles folder as <workload>.pprof.
func profile(t *testing.T, tg target, workload string, fn func()) {
	t.Helper()
	path := filepath.Join(tg.profiles, strings.ReplaceAll(workload, " ", "-")+".pprof")
	got := make(chan error, 1)
	go func() {
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, int(profileTime/time.Second)))
		if err != nil {
			got <- err
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", res.Status, b)
		}
		if err == nil {
			err = os.WriteFile(path, b, 0o644)
		}
		got <- err
	}()
	for deadline := time.Now().Add(profileTime); time.Now().Before(deadline); {
		fn()
	}
	if err := <-got; err != nil {
		t.Fatalf("%s: profile of %s: %v", tg.name, workload, err)
	}
}

type result = map[string]float64

func TestBench(t *testing.T) {
	full := os.Getenv("PYRIC_BENCH") == "1"
	if !full && testing.Short() {
		t.Skip("benchmark harness")
	}
	cfg := config{small: 50, lists: 10, clients: 8, perCli: 5, largeMiB: 8}
	if full {
		cfg = config{small: 1000, lists: 200, clients: 64, perCli: 50, largeMiB: 100}
	}
	var targets []target

	e2etest.Pyric(t)
	profDir := os.Getenv(profileEnv)
	if profDir != "" {
		pprofAddr = benchkit.FreeAddr(t)
		t.Setenv("PYRIC_DEBUG_PPROF", pprofAddr) // pyric serve's profiles
	}
	start := time.Now()
	srv := e2etest.StartServe(t, t.TempDir(), "--data-dir", t.TempDir())
	targets = append(targets, target{name: "pyric", host: srv.Storage, startup: time.Since(start), pid: srv.Pid(), profiles: profDir})

	if full || os.Getenv("PYRIC_E2E_REQUIRED") == "1" {
		bin := buildPeer(t)
		addr := benchkit.FreeAddr(t)
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(bin, "-scheme", "http", "-host", "127.0.0.1", "-port", port, "-backend", "memory",
			"-public-host", addr, "-external-url", "http://"+addr, "-log-level", "error")
		start = time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		benchkit.WaitListening(t, addr)
		targets = append(targets, target{name: "fake-gcs-server", host: addr, startup: time.Since(start), pid: cmd.Process.Pid})
	}

	addr, took, pid := benchkit.StartFloorProcess(t, floorEnv)
	targets = append(targets, target{name: "floor", host: addr, startup: took, pid: pid})

	res, cpu := benchkit.Results{}, benchkit.Results{}
	var names []string
	for _, tg := range targets {
		r, c := run(t, tg, cfg)
		r["startup ms"] = float64(tg.startup.Milliseconds())
		res[tg.name], cpu[tg.name], names = r, c, append(names, tg.name)
	}
	ratios := []benchkit.Ratio{{Of: "floor"}, {Of: "fake-gcs-server"}}
	t.Logf("Cloud Storage through cloud.google.com/go/storage (ratios: higher is better for pyric)\n%s\n"+
		"the server's costs: CPU time per operation (its process's run time over the workload's operations; the large rows per MiB, load-independent) and peak RSS:\n%s",
		benchkit.Table(names, res, ratios...), benchkit.Table(names, cpu, ratios...))
}

// run drives one target through the workload and returns its rates and
// the server's CPU time per operation of each workload.
func run(t *testing.T, tg target, cfg config) (result, result) {
	t.Helper()
	t.Setenv("STORAGE_EMULATOR_HOST", "http://"+tg.host)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := gcs.NewClient(ctx, option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bucket := "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := c.Bucket(bucket).Create(ctx, "demo-pyric", nil); err != nil {
		t.Fatalf("%s: create bucket: %v", tg.name, err)
	}
	b := c.Bucket(bucket)
	small := bytes.Repeat([]byte("s"), smallSize)
	r, cpu := result{}, result{}
	// measure runs fn, n operations of a workload, and records their rate
	// (key) and the server's CPU time per operation.
	measure := func(key string, n int, fn func()) {
		cpu0 := benchkit.ProcCPU(tg.pid)
		start := time.Now()
		fn()
		r[key] = float64(n) / time.Since(start).Seconds()
		name, unit := strings.TrimSuffix(strings.TrimSuffix(key, " /s"), " ops/s"), "µs/op"
		if cut, ok := strings.CutSuffix(key, " MiB/s"); ok {
			name, unit = cut, "µs/MiB"
		}
		cpu[name+" CPU "+unit] = float64((benchkit.ProcCPU(tg.pid) - cpu0).Microseconds()) / float64(n)
		if tg.profiles != "" {
			profile(t, tg, name, fn)
		}
	}

	put := func(name string, data []byte, chunk int) {
		w := b.Object(name).NewWriter(ctx)
		w.ChunkSize = chunk
		if _, err := w.Write(data); err != nil {
			t.Fatalf("%s: write %s: %v", tg.name, name, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: close %s: %v", tg.name, name, err)
		}
	}
	get := func(name string) int64 {
		rd, err := b.Object(name).NewReader(ctx)
		if err != nil {
			t.Fatalf("%s: read %s: %v", tg.name, name, err)
		}
		n, err := io.Copy(io.Discard, rd)
		rd.Close()
		if err != nil {
			t.Fatalf("%s: read %s: %v", tg.name, name, err)
		}
		return n
	}
	rate := func(key string, n int, fn func(i int)) {
		measure(key, n, func() {
			for i := range n {
				fn(i)
			}
		})
	}

	rate("small upload /s", cfg.small, func(i int) { put(fmt.Sprintf("small/%06d", i), small, 0) })
	rate("small download /s", cfg.small, func(i int) {
		if n := get(fmt.Sprintf("small/%06d", i)); n != smallSize {
			t.Fatalf("%s: downloaded %d bytes, want %d", tg.name, n, smallSize)
		}
	})
	rate("metadata /s", cfg.small, func(i int) {
		if _, err := b.Object(fmt.Sprintf("small/%06d", i)).Attrs(ctx); err != nil {
			t.Fatalf("%s: attrs: %v", tg.name, err)
		}
	})
	for i := range 100 {
		put(fmt.Sprintf("list/%03d", i), small[:16], 0)
	}
	rate("list 100 /s", cfg.lists, func(int) {
		it := b.Objects(ctx, &gcs.Query{Prefix: "list/"})
		n := 0
		for {
			_, err := it.Next()
			if err == iterator.Done {
				break
			}
			if err != nil {
				t.Fatalf("%s: list: %v", tg.name, err)
			}
			n++
		}
		if n != 100 {
			t.Fatalf("%s: listed %d objects, want 100", tg.name, n)
		}
	})

	measure(fmt.Sprintf("%d clients ops/s", cfg.clients), 2*cfg.clients*cfg.perCli, func() {
		var wg sync.WaitGroup
		for ci := range cfg.clients {
			wg.Go(func() {
				for i := range cfg.perCli {
					name := fmt.Sprintf("conc/%d/%d", ci, i)
					put(name, small, 0)
					get(name)
				}
			})
		}
		wg.Wait()
	})

	large := bytes.Repeat([]byte("0123456789abcdef"), cfg.largeMiB<<16)
	measure("large upload MiB/s", cfg.largeMiB, func() { put("large.bin", large, 16<<20) })
	measure("large download MiB/s", cfg.largeMiB, func() {
		if n := get("large.bin"); n != int64(len(large)) {
			t.Fatalf("%s: downloaded %d of %d bytes", tg.name, n, len(large))
		}
	})
	cpu["peak RSS MiB"] = float64(benchkit.ProcStatus(tg.pid, "VmHWM:")) / (1 << 20)
	return r, cpu
}

// buildPeer builds fake-gcs-server from the pinned module in ./peer,
// once per version (kept in the user's cache directory).
func buildPeer(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "pyric", "fake-gcs-server-v1.56.1")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "build", "-o", bin, "github.com/fsouza/fake-gcs-server")
	cmd.Dir = "peer"
	if out, err := cmd.CombinedOutput(); err != nil {
		e2etest.Missing(t, "fake-gcs-server (the Storage peer) did not build from e2e/storagebench/peer: %v\n%s", err, out)
	}
	return bin
}
