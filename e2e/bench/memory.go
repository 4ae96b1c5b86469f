package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	firestorepb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/benchkit"
)

// MemoryConfig sizes the memory workload.
type MemoryConfig struct {
	Pyric     string        // the pyric binary; "" builds ./cmd/pyric
	Docs      int           // small documents loaded
	Writers   int           // concurrent overwriters
	Hot       int           // documents they overwrite
	Overwrite time.Duration // how long they write
	Extra     []string      // extra pyric serve flags
}

// Memory measures a `pyric serve` process (its own process, so the
// client's memory is not counted): RSS after loading cfg.Docs small
// documents through the Go client, the time and RSS to reopen that data
// dir, and RSS sampled while cfg.Writers clients overwrite cfg.Hot
// documents for cfg.Overwrite (the history window must keep it bounded).
func Memory(ctx context.Context, cfg MemoryConfig, w io.Writer) error {
	tmp, err := os.MkdirTemp("", "pyric-membench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := pyricBinary(cfg.Pyric, tmp)
	if err != nil {
		return err
	}
	data := filepath.Join(tmp, "data")
	fmt.Fprintf(w, "pyric serve %s (data dir, default durable mode)\n", strings.Join(cfg.Extra, " "))

	p, err := startServe(bin, tmp, data, cfg.Extra)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  started:                          RSS %s\n", mib(p.rss()))
	t0 := time.Now()
	if err := load(ctx, p.addr, cfg.Docs); err != nil {
		p.stop()
		return err
	}
	el := time.Since(t0)
	fmt.Fprintf(w, "  loaded %d docs in %v (server CPU %v): RSS %s (%s; peak %s)\n", cfg.Docs, el.Round(time.Millisecond), p.cpu().Round(10*time.Millisecond), mib(p.rss()), p.rssSplit(), mib(p.hwm()))
	time.Sleep(5 * time.Second)
	fmt.Fprintf(w, "  5 s later: RSS %s (%s)\n", mib(p.rss()), p.rssSplit())
	if fi, err := os.Stat(filepath.Join(data, "pyric.db")); err == nil {
		fmt.Fprintf(w, "  data file: %s\n", mib(fi.Size()))
	}
	p.stop()

	t0 = time.Now()
	p, err = startServe(bin, tmp, data, cfg.Extra)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  reopened in %v (process start to every port serving): RSS %s (%s)\n", time.Since(t0).Round(time.Millisecond), mib(p.rss()), p.rssSplit())
	defer p.stop()

	if cfg.Overwrite <= 0 {
		return nil
	}
	fmt.Fprintf(w, "  %d writers overwriting %d docs for %v:\n", cfg.Writers, cfg.Hot, cfg.Overwrite)
	var writes atomic.Int64
	octx, cancel := context.WithTimeout(ctx, cfg.Overwrite)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, cfg.Writers)
	for wi := range cfg.Writers {
		wg.Go(func() {
			c, closeC, err := client(ctx, p.addr)
			if err != nil {
				errc <- err
				return
			}
			defer closeC()
			col := c.Collection("hot")
			for i := 0; octx.Err() == nil; i++ {
				d := col.Doc(fmt.Sprintf("d%03d", (wi*cfg.Hot/cfg.Writers+i%(cfg.Hot/cfg.Writers))%cfg.Hot))
				if _, err := d.Set(octx, map[string]any{"w": wi, "i": i, "s": "some text of a small document"}); err != nil {
					if dl, _ := octx.Deadline(); time.Until(dl) > time.Second {
						errc <- err
					}
					return
				}
				writes.Add(1)
			}
		})
	}
	tick := time.NewTicker(cfg.Overwrite / 6)
	defer tick.Stop()
	start := time.Now()
loop:
	for {
		select {
		case <-octx.Done():
			break loop
		case <-tick.C:
			fmt.Fprintf(w, "    %5.0fs  %8d writes  RSS %s (%s)\n", time.Since(start).Seconds(), writes.Load(), mib(p.rss()), p.rssSplit())
		}
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return fmt.Errorf("overwrite: %w", err)
	}
	fmt.Fprintf(w, "    done   %8d writes  RSS %s (peak %s)\n", writes.Load(), mib(p.rss()), mib(p.hwm()))
	return nil
}

// load writes n small documents in batches of 500 from 4 clients.
func load(ctx context.Context, addr string, n int) error {
	const batch, workers = 500, 4
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			c, closeC, err := client(ctx, addr)
			if err != nil {
				errc <- err
				return
			}
			defer closeC()
			col := c.Collection("load")
			for {
				first := int(next.Add(batch)) - batch
				if first >= n {
					return
				}
				b := c.BulkWriter(ctx)
				for i := first; i < min(first+batch, n); i++ {
					if _, err := b.Set(col.Doc(fmt.Sprintf("d%07d", i)), map[string]any{"n": i, "s": "some text"}); err != nil {
						errc <- err
						return
					}
				}
				b.End()
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	// BulkWriter reports failures per job; check that every document is there.
	c, closeC, err := client(ctx, addr)
	if err != nil {
		return err
	}
	defer closeC()
	r, err := c.Collection("load").NewAggregationQuery().WithCount("n").Get(ctx)
	if err != nil {
		return err
	}
	if got, ok := r["n"].(*firestorepb.Value); !ok || got.GetIntegerValue() != int64(n) {
		return fmt.Errorf("loaded %v documents, want %d", got, n)
	}
	return nil
}

// pyricBinary returns bin, or builds ./cmd/pyric into dir.
func pyricBinary(bin, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "pyric")
	build := exec.Command("go", "build", "-o", bin, "github.com/pyric/pyric/cmd/pyric")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build pyric: %w", err)
	}
	return bin, nil
}

// StartServe runs `pyric serve` (default durable mode) as its own
// process, as the official emulator runs: the client's goroutines and the
// server's then do not share one Go scheduler.
func StartServe(bin string, extra []string) (*Target, error) {
	tmp, err := os.MkdirTemp("", "pyric-bench-serve-")
	if err != nil {
		return nil, err
	}
	if bin, err = pyricBinary(bin, tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	p, err := startServe(bin, tmp, filepath.Join(tmp, "data"), extra)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Target{Name: "pyric-serve", Addr: p.addr, Notes: "pyric serve, its own process, default durable store (sync=batch), session capture on",
		CPU: p.cpu, Stop: func() { p.stop(); os.RemoveAll(tmp) }}, nil
}

type serveProc struct {
	cmd  *exec.Cmd
	addr string
}

// startServe runs `pyric serve` on data in dir (no firebase.json there)
// with every port picked free, and waits for its --json line.
func startServe(bin, dir, data string, extra []string) (*serveProc, error) {
	// As users run it (session capture on), but for the denial log (the
	// workload is never denied) and the Studio.
	args := []string{"serve", "--json", "--quiet", "--project", "demo-bench", "--data-dir", data,
		"--studio-port", "-1", "--hub-port", "-1"}
	for _, s := range backend.Catalog() {
		args = append(args, "--"+s.Service+"-port", "0")
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("pyric serve printed no --json line: %v", err)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["firestore"] == "" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("pyric serve --json: %q", line)
	}
	go io.Copy(io.Discard, out)
	return &serveProc{cmd: cmd, addr: m["firestore"]}, nil
}

func (p *serveProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

func (p *serveProc) rss() int64 { return benchkit.ProcStatus(p.cmd.Process.Pid, "VmRSS:") }

// cpu is the user and system CPU time the process used so far (0 if
// unknown), from /proc/PID/stat (in clock ticks, 100 per second on Linux).
func (p *serveProc) cpu() time.Duration { return benchkit.ProcCPU(p.cmd.Process.Pid) }

// rssSplit is the RSS's anonymous part (the heap) and its file-backed part
// (the mapped store file's pages, shared with the page cache).
func (p *serveProc) rssSplit() string {
	return fmt.Sprintf("anon %s, file %s", mib(benchkit.ProcStatus(p.cmd.Process.Pid, "RssAnon:")), mib(benchkit.ProcStatus(p.cmd.Process.Pid, "RssFile:")))
}
func (p *serveProc) hwm() int64 { return benchkit.ProcStatus(p.cmd.Process.Pid, "VmHWM:") }

func mib(b int64) string {
	if b < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
