// Command bench runs one Go-client workload (cloud.google.com/go/firestore)
// against pyric and the official Cloud Firestore emulator in the same run
// and prints each side's throughput and latency and their ratio:
// sequential set, get, query and transaction (as wire-probes/
// go_firestore_bench.go measured for wire-protocols.md §9.2), then 64
// concurrent clients. pyric runs in-process (in memory, with its default
// durable store, syncing every batch) and as its own `pyric serve` process
// (pyric-serve: default durable store), as the emulator, started from its
// jar (or reached at -official), runs in its own JVM. In-process, the 64
// clients and the server share one Go scheduler; on a machine with few
// cores that caps the in-process numbers, so pyric-serve is the like-for-
// like comparison. The floor is a do-nothing Firestore server in its own
// process (floor.go): the most any server could reach through this client
// on this machine.
//
//	go run ./e2e/bench                 # full run
//	go run ./e2e/bench -rounds 3       # best of three alternating rounds
//	go run ./e2e/bench -n 100 -only pyric-memory
//	PYRIC_BENCH=1 go test -v ./e2e/bench
//	go run ./e2e/bench -memory         # RSS of a pyric serve process
//
// It measures; it asserts nothing about timing.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	gcfirestore "cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/internal/freeport"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	fsserver "github.com/pyric/pyric/server/firestore"
)

// Config sizes the workload.
type Config struct {
	N          int // documents set and got sequentially
	Queries    int // sequential queries over the N documents (where g == k)
	Txns       int // sequential read-modify-write transactions
	Clients    int // concurrent clients
	PerClient  int // operations per concurrent client (alternating set and get)
	Rounds     int // measured rounds, the targets taking turns; each keeps its best (0: one)
	Only       []string
	Official   string // host:port of a running official emulator; "" starts one
	NoOfficial bool
	Pyric      string   // the pyric binary for pyric-serve; "" builds ./cmd/pyric
	ServeFlags []string // extra pyric serve flags (e.g. --no-capture)
}

// Result is one workload's measurement on one target.
type Result struct {
	Ops      int
	Elapsed  time.Duration
	P50, P99 time.Duration
	// ServerCPU is the CPU time the server's process used during the
	// workload (0 when it runs in this process): with other work on the
	// machine, server CPU per operation compares servers better than
	// throughput, which the load moves run to run.
	ServerCPU time.Duration
	Err       error
}

// CPUPerOp is the server's CPU time per operation (0 if not measured).
func (r Result) CPUPerOp() time.Duration {
	if r.Ops == 0 {
		return 0
	}
	return r.ServerCPU / time.Duration(r.Ops)
}

// OpsPerSec is the throughput.
func (r Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// Target is a running backend.
type Target struct {
	Name  string
	Addr  string
	Stop  func()
	Notes string
	// CPU is the CPU time the server's process used so far, for a target
	// in its own process; nil otherwise.
	CPU func() time.Duration
}

var workloads = []string{"set", "get", "query", "txn", "concurrent"}

// Workload runs every workload on one target with fresh collections; cpu,
// when not nil, is the server process's CPU time so far (Result.ServerCPU).
func Workload(ctx context.Context, cfg Config, addr string, cpu func() time.Duration) (map[string]Result, error) {
	c, closeC, err := client(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer closeC()
	col := c.Collection(fmt.Sprintf("bench%d", time.Now().UnixNano()))
	doc := func(i int) *gcfirestore.DocumentRef { return col.Doc(fmt.Sprintf("d%05d", i)) }
	out := measured{cpu: cpu, results: map[string]Result{}}
	out.run("set", func() Result {
		return sequential(cfg.N, func(i int) error {
			_, err := doc(i).Set(ctx, map[string]any{"i": i, "g": i % 10, "s": "x"})
			return err
		})
	})
	out.run("get", func() Result {
		return sequential(cfg.N, func(i int) error { _, err := doc(i).Get(ctx); return err })
	})
	out.run("query", func() Result {
		return sequential(cfg.Queries, func(i int) error {
			_, err := col.Where("g", "==", i%10).Documents(ctx).GetAll()
			return err
		})
	})
	out.run("txn", func() Result {
		return sequential(cfg.Txns, func(i int) error {
			return c.RunTransaction(ctx, func(ctx context.Context, tx *gcfirestore.Transaction) error {
				d := doc(i % cfg.N)
				s, err := tx.Get(d)
				if err != nil {
					return err
				}
				v, _ := s.DataAt("i")
				return tx.Update(d, []gcfirestore.Update{{Path: "i", Value: v.(int64) + 1}})
			})
		})
	})
	out.run("concurrent", func() Result { return concurrent(ctx, cfg, addr, col.ID) })
	return out.results, nil
}

// measured collects a target's workload results with the server CPU each
// took.
type measured struct {
	cpu     func() time.Duration
	results map[string]Result
}

func (m measured) run(name string, f func() Result) {
	var before time.Duration
	if m.cpu != nil {
		before = m.cpu()
	}
	r := f()
	if m.cpu != nil {
		r.ServerCPU = m.cpu() - before
	}
	m.results[name] = r
}

func client(ctx context.Context, addr string) (*gcfirestore.Client, func(), error) {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(owner{}))
	if err != nil {
		return nil, nil, err
	}
	c, err := gcfirestore.NewClient(ctx, "demo-bench", option.WithGRPCConn(conn))
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return c, func() { c.Close(); conn.Close() }, nil
}

type owner struct{}

func (owner) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer owner"}, nil
}
func (owner) RequireTransportSecurity() bool { return false }

func sequential(n int, f func(i int) error) Result {
	lat := make([]time.Duration, 0, n)
	t0 := time.Now()
	for i := range n {
		s := time.Now()
		if err := f(i); err != nil {
			return Result{Err: err}
		}
		lat = append(lat, time.Since(s))
	}
	return summarize(lat, time.Since(t0))
}

// concurrent runs cfg.Clients clients (one connection each), each writing
// and reading its own documents.
func concurrent(ctx context.Context, cfg Config, addr, coll string) Result {
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	clients := make([]*gcfirestore.Client, cfg.Clients)
	for i := range clients {
		c, closeC, err := client(ctx, addr)
		if err != nil {
			return Result{Err: err}
		}
		defer closeC()
		clients[i] = c
	}
	t0 := time.Now()
	for w, c := range clients {
		wg.Go(func() {
			mine := make([]time.Duration, 0, cfg.PerClient)
			col := c.Collection(coll + "c")
			for i := range cfg.PerClient {
				d := col.Doc(fmt.Sprintf("w%02d-%03d", w, i/2))
				s := time.Now()
				var err error
				if i%2 == 0 {
					_, err = d.Set(ctx, map[string]any{"w": w, "i": i})
				} else {
					_, err = d.Get(ctx)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(s))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return Result{Err: errs[0]}
	}
	return summarize(lat, time.Since(t0))
}

func summarize(lat []time.Duration, el time.Duration) Result {
	r := Result{Ops: len(lat), Elapsed: el}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.P50 = lat[int(float64(len(lat)-1)*0.5)]
		r.P99 = lat[int(float64(len(lat)-1)*0.99)]
	}
	return r
}

// StartPyric serves a fresh sandbox in-process on a free port: in memory
// ("pyric-memory"), with the durable store `pyric serve` uses by default
// ("pyric-durable": group commit, sync=batch — written before the ack,
// fsync every second), or syncing every commit batch ("pyric-always").
func StartPyric(name string) (*Target, error) {
	opts := sandbox.Options{Project: "demo-bench", Services: []service.Registration{firestore.Registration(firestore.Options{})}}
	notes := "in-process, --in-memory"
	var dir string
	if name != "pyric-memory" {
		var err error
		if dir, err = os.MkdirTemp("", "pyric-bench-"); err != nil {
			return nil, err
		}
		opts.DataDir = dir
		opts.Sync = sandbox.SyncBatch
		notes = "in-process, bbolt store, group commit, sync=batch (the serve default)"
		if name == "pyric-always" {
			opts.Sync = sandbox.SyncAlways
			notes = "in-process, bbolt store, group commit, sync=always (fsync per batch)"
		}
	}
	sb, err := sandbox.Open(opts)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sb.Close()
		return nil, err
	}
	eng, _ := sandbox.Lookup[*firestore.Engine](sb)
	fs := fsserver.New(fsserver.Options{Engine: eng, DefaultProject: "demo-bench"})
	port, svc := fsserver.NewPort(l, fs)
	go port.Serve()
	return &Target{Name: name, Addr: l.Addr().String(), Notes: notes, Stop: func() {
		svc.Drain()
		port.Close()
		sb.Close()
		if dir != "" {
			os.RemoveAll(dir)
		}
	}}, nil
}

// StartOfficial starts the official emulator from its jar, or returns the
// one at addr.
func StartOfficial(addr string) (*Target, error) {
	if addr != "" {
		return &Target{Name: "official", Addr: addr, Notes: "external", Stop: func() {}}, nil
	}
	jar := emulator.Jar()
	if jar == "" {
		return nil, fmt.Errorf("the official emulator is not installed (google-cloud-cli-firestore-emulator)")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("java not found")
	}
	p, err := freeport.Run(1)
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(p)
	addr = "127.0.0.1:" + port
	cmd := exec.Command(java, "-Duser.language=en", "-Xss4m", "-cp", jar,
		"com.google.cloud.datastore.emulator.firestore.CloudFirestore", "start", "--host=127.0.0.1", "--port="+port)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("emulator did not start: %s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &Target{Name: "official", Addr: addr, Notes: "official emulator jar, separate JVM process", Stop: stop}, nil
}

// Run starts the targets, warms each with a small untimed pass, measures,
// and prints the table.
func Run(ctx context.Context, cfg Config, w io.Writer) (map[string]map[string]Result, error) {
	var targets []*Target
	want := func(name string) bool { return len(cfg.Only) == 0 || slices.Contains(cfg.Only, name) }
	if !cfg.NoOfficial && want("official") {
		t, err := StartOfficial(cfg.Official)
		if err != nil {
			fmt.Fprintf(w, "official emulator unavailable (%v); measuring pyric only\n", err)
		} else {
			targets = append(targets, t)
		}
	}
	for _, name := range []string{"floor", "pyric-memory", "pyric-durable", "pyric-always", "pyric-serve", "pyric-serve-nocapture"} {
		if !want(name) {
			continue
		}
		var t *Target
		var err error
		switch name {
		case "floor":
			t, err = StartFloor(cfg.N / 10)
		case "pyric-serve":
			t, err = StartServe(cfg.Pyric, cfg.ServeFlags)
		case "pyric-serve-nocapture":
			// What session capture costs: pyric serve without it.
			if t, err = StartServe(cfg.Pyric, append(slices.Clone(cfg.ServeFlags), "--no-capture")); err == nil {
				t.Name, t.Notes = name, t.Notes+", --no-capture"
			}
		default:
			t, err = StartPyric(name)
		}
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	defer func() {
		for _, t := range targets {
			t.Stop()
		}
	}()
	// One untimed pass of the same workload first: the JVM needs it (the
	// reference numbers of wire-protocols.md §9.2 are on a warm JVM), and
	// every target gets the same treatment.
	warm := cfg
	results := map[string]map[string]Result{}
	for _, t := range targets {
		if _, err := Workload(ctx, warm, t.Addr, nil); err != nil {
			return nil, fmt.Errorf("%s warm-up: %w", t.Name, err)
		}
	}
	// With Rounds > 1 the targets take turns, round after round, and each
	// keeps its best round per workload: on a shared machine a burst of
	// other work then costs one round, not one target's whole run.
	for range max(cfg.Rounds, 1) {
		for _, t := range targets {
			r, err := Workload(ctx, cfg, t.Addr, t.CPU)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			if results[t.Name] == nil {
				results[t.Name] = r
				continue
			}
			for wl, x := range r {
				if x.OpsPerSec() > results[t.Name][wl].OpsPerSec() {
					results[t.Name][wl] = x
				}
			}
		}
	}
	printTable(w, cfg, targets, results)
	return results, nil
}

func printTable(w io.Writer, cfg Config, targets []*Target, results map[string]map[string]Result) {
	fmt.Fprintf(w, "Go client workload: set %d, get %d, query %d (over %d docs, where g==k), txn %d (get+update), concurrent %d clients x %d ops (set/get)\n",
		cfg.N, cfg.N, cfg.Queries, cfg.N, cfg.Txns, cfg.Clients, cfg.PerClient)
	for _, t := range targets {
		fmt.Fprintf(w, "  %-14s %s (%s)\n", t.Name, t.Addr, t.Notes)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	off, haveOff := results["official"]
	fl, haveFloor := results["floor"]
	_, haveServe := results["pyric-serve"]
	haveFloor = haveFloor && haveServe
	noCap, haveNoCap := results["pyric-serve-nocapture"]
	haveNoCap = haveNoCap && haveServe
	fmt.Fprint(tw, "workload\t")
	for _, t := range targets {
		fmt.Fprintf(tw, "%s ops/s\tp50\tp99\t", t.Name)
	}
	if haveOff {
		for _, t := range targets {
			if t.Name != "official" {
				fmt.Fprintf(tw, "%s/official\t", t.Name)
			}
		}
	}
	if haveFloor {
		fmt.Fprint(tw, "pyric-serve/floor\t")
	}
	if haveNoCap {
		fmt.Fprint(tw, "capture on/off\t")
	}
	fmt.Fprintln(tw)
	for _, wl := range workloads {
		fmt.Fprintf(tw, "%s\t", wl)
		for _, t := range targets {
			r := results[t.Name][wl]
			if r.Err != nil {
				fmt.Fprintf(tw, "error\t\t\t")
				continue
			}
			fmt.Fprintf(tw, "%.0f\t%v\t%v\t", r.OpsPerSec(), r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond))
		}
		if haveOff {
			for _, t := range targets {
				if t.Name == "official" {
					continue
				}
				ratio := results[t.Name][wl].OpsPerSec() / off[wl].OpsPerSec()
				if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
					fmt.Fprint(tw, "-\t")
					continue
				}
				fmt.Fprintf(tw, "%.2fx\t", ratio)
			}
		}
		if haveFloor {
			fmt.Fprintf(tw, "%.2fx\t", results["pyric-serve"][wl].OpsPerSec()/fl[wl].OpsPerSec())
		}
		if haveNoCap {
			fmt.Fprintf(tw, "%.2fx\t", results["pyric-serve"][wl].OpsPerSec()/noCap[wl].OpsPerSec())
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	printCPU(w, targets, results)
}

// printCPU prints the server CPU per operation of the targets in their own
// process and, with the floor, the floor's over pyric-serve's: the share
// of pyric's server work that the transport alone costs (1.00x: pyric's
// own work is free). Unlike throughput it moves little with the load of
// the machine, so it is the ratio to compare from run to run.
func printCPU(w io.Writer, targets []*Target, results map[string]map[string]Result) {
	var own []*Target
	for _, t := range targets {
		if t.CPU != nil {
			own = append(own, t)
		}
	}
	if len(own) == 0 {
		return
	}
	fl, haveFloor := results["floor"]
	_, haveServe := results["pyric-serve"]
	haveFloor = haveFloor && haveServe
	fmt.Fprintln(w, "server CPU per operation (the server process's run time over the workload's operations):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\t")
	for _, t := range own {
		fmt.Fprintf(tw, "%s\t", t.Name)
	}
	if haveFloor {
		fmt.Fprint(tw, "floor/pyric-serve CPU\t")
	}
	fmt.Fprintln(tw)
	for _, wl := range workloads {
		fmt.Fprintf(tw, "%s\t", wl)
		for _, t := range own {
			fmt.Fprintf(tw, "%v\t", results[t.Name][wl].CPUPerOp().Round(100*time.Nanosecond))
		}
		if haveFloor {
			ratio := float64(fl[wl].CPUPerOp()) / float64(results["pyric-serve"][wl].CPUPerOp())
			if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
				fmt.Fprint(tw, "-\t")
			} else {
				fmt.Fprintf(tw, "%.2fx\t", ratio)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func main() {
	serveFloorIfAsked()
	cfg := Config{}
	flag.IntVar(&cfg.N, "n", 500, "documents set and got sequentially")
	flag.IntVar(&cfg.Queries, "queries", 50, "sequential queries")
	flag.IntVar(&cfg.Txns, "txns", 100, "sequential transactions")
	flag.IntVar(&cfg.Clients, "clients", 64, "concurrent clients")
	flag.IntVar(&cfg.PerClient, "per-client", 100, "operations per concurrent client")
	flag.IntVar(&cfg.Rounds, "rounds", 1, "measured rounds, the targets taking turns; each target keeps its best round per workload (for a loaded machine)")
	only := flag.String("only", "", "comma-separated targets: official, floor, pyric-memory, pyric-durable, pyric-always, pyric-serve, pyric-serve-nocapture (pyric serve --no-capture: the capture on/off column)")
	flag.StringVar(&cfg.Official, "official", "", "host:port of a running official emulator (default: start one)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (pyric runs in-process) to this file")
	memory := flag.Bool("memory", false, "measure a pyric serve process's memory instead: RSS after loading -docs documents, reopen time, RSS while -writers overwrite -hot documents for -overwrite")
	var mc MemoryConfig
	flag.StringVar(&mc.Pyric, "pyric", "", "pyric binary for -memory and pyric-serve (default: go build ./cmd/pyric)")
	flag.IntVar(&mc.Docs, "docs", 100000, "documents loaded (-memory)")
	flag.IntVar(&mc.Writers, "writers", 16, "concurrent overwriters (-memory)")
	flag.IntVar(&mc.Hot, "hot", 160, "documents overwritten (-memory)")
	flag.DurationVar(&mc.Overwrite, "overwrite", time.Minute, "how long the writers overwrite (-memory)")
	serveFlags := flag.String("serve-flags", "", "extra pyric serve flags for pyric-serve and -memory, space-separated (pyric serve runs as users get it: add --no-capture to leave session capture out)")
	flag.Parse()
	if *memory {
		mc.Extra = strings.Fields(*serveFlags)
		if err := Memory(context.Background(), mc, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	cfg.Pyric = mc.Pyric
	cfg.ServeFlags = strings.Fields(*serveFlags)
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	if _, err := Run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
