// Package startupbench measures how long `pyric serve` takes from
// process start until every port answers a real request correctly (see
// probes: a Firestore read of a stored document, an Auth sign-up, an
// RTDB read, a Storage listing, Pub/Sub, Messaging and AI Logic requests,
// the Studio and the hub, and with functions the emulator's listing on
// the functions port and the task queues' answer), each probed from the
// moment the process starts,
// in the cases #27 names — a fresh data dir, in memory, a data dir
// holding 100k Firestore documents (without session capture, and with it
// as users get it by default: the last session's file holding every
// document), and with a Cloud Functions codebase configured — beside the official Cloud Firestore emulator's start (the
// anchor) in the same run, and prints the median and best of several
// starts of each. With functions, a separate row is the first callable
// answered: the functions port serves while the codebase loads, and a
// call made meanwhile waits for the load, its cold start.
//
//	PYRIC_BENCH=1 go test -v -run Bench ./e2e/startupbench
//
// Without PYRIC_BENCH=1 it runs a small smoke workload (fewer starts, 5k
// documents). It measures; it asserts nothing about timing.
package startupbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/internal/emulator"
)

const project = "demo-startup"

type row struct {
	name  string
	times []time.Duration
	last  string // the port that answered last most often
}

func (r row) median() time.Duration {
	s := append([]time.Duration(nil), r.times...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func (r row) best() time.Duration {
	b := r.times[0]
	for _, d := range r.times {
		b = min(b, d)
	}
	return b
}

func TestBench(t *testing.T) {
	full := os.Getenv("PYRIC_BENCH") == "1"
	if !full && testing.Short() {
		t.Skip("benchmark harness")
	}
	starts, docs := 3, 5000
	if full {
		starts, docs = 7, 100_000
	}
	e2etest.Pyric(t) // built before any clock starts
	// serve starts pyric on ports chosen beforehand, probes every one of
	// them from the start, and returns when the last answered correctly.
	lastPorts := map[string]int{} // of the current row: how often each port answered last
	// firstCalls are the current row's start → first function answered
	// times (with functions).
	var firstCalls []time.Duration
	serve := func(dir string, c probeCase, args ...string) time.Duration {
		ports, portArgs := assignPorts(t, c.functions)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		answered := probeAll(ctx, ports, c)
		s := e2etest.StartServe(t, dir, append(append(portArgs, "--project", project), args...)...)
		last, lastName, call, err := answered()
		if err != nil {
			t.Fatalf("%v\n%s", err, s.Stderr())
		}
		lastPorts[lastName]++
		if c.functions {
			firstCalls = append(firstCalls, call.Sub(start))
		}
		s.Stop()
		return last.Sub(start)
	}
	var rows []row
	measure := func(name string, fn func() time.Duration) {
		r := row{name: name}
		clear(lastPorts)
		for range starts {
			r.times = append(r.times, fn())
		}
		for p, n := range lastPorts {
			if n > lastPorts[r.last] || (n == lastPorts[r.last] && p < r.last) {
				r.last = p
			}
		}
		rows = append(rows, r)
	}

	measure("pyric serve, fresh data dir", func() time.Duration { return serve(t.TempDir(), probeCase{}, "--data-dir", t.TempDir()) })
	measure("pyric serve --in-memory", func() time.Duration { return serve(t.TempDir(), probeCase{}, "--in-memory") })

	loaded := t.TempDir()
	loadDocuments(t, loaded, docs)
	measure(fmt.Sprintf("pyric serve, %dk documents", docs/1000), func() time.Duration {
		return serve(t.TempDir(), probeCase{loaded: docs}, "--data-dir", loaded, "--no-capture")
	})
	// The default mode: each start keeps the session the one before
	// captured (the state of every document) as the previous one,
	// checking both files first.
	measure(fmt.Sprintf("pyric serve, %dk docs, capture on", docs/1000), func() time.Duration {
		return serve(t.TempDir(), probeCase{loaded: docs}, "--data-dir", loaded)
	})

	_, err := os.Stat(filepath.Join(e2etest.FunctionsDir(), "node_modules", "firebase-functions"))
	if err == nil || os.Getenv("PYRIC_E2E_REQUIRED") == "1" {
		t.Setenv("PATH", e2etest.NeedFunctions(t))
		fnDir := t.TempDir()
		src, _ := filepath.Abs(filepath.Join(e2etest.FunctionsDir(), "js"))
		cfg := fmt.Sprintf(`{"functions": [{"source": %q, "codebase": "js"}]}`, src)
		if err := os.WriteFile(filepath.Join(fnDir, "firebase.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		firstCalls = nil
		measure("pyric serve with functions", func() time.Duration { return serve(fnDir, probeCase{functions: true}, "--in-memory") })
		rows = append(rows, row{name: "  … first function answered", times: firstCalls, last: firstCall})
	}

	if emulator.Jar() != "" || os.Getenv("PYRIC_E2E_REQUIRED") == "1" {
		measure("official Firestore emulator", func() time.Duration {
			start := time.Now()
			e := emulator.StartWith(t) // until GET / answers "Ok"
			d := time.Since(start)
			lastPorts["firestore"]++
			e.Stop()
			return d
		})
	}

	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%-34s %10s %10s  %s\n", "start → every port answering", "median", "best", "last to answer")
	for _, r := range rows {
		fmt.Fprintf(&buf, "%-34s %8dms %8dms  %s\n", r.name, r.median().Milliseconds(), r.best().Milliseconds(), r.last)
	}
	t.Logf("startup (%d starts each)\n%s", starts, buf.String())
}

// loadDocuments fills a data dir with n small Firestore documents
// through the Go client, then stops the server.
func loadDocuments(t *testing.T, dir string, n int) {
	t.Helper()
	s := e2etest.StartServe(t, t.TempDir(), "--data-dir", dir, "--no-capture", "--project", project)
	defer s.Stop()
	t.Setenv("FIRESTORE_EMULATOR_HOST", s.Firestore)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const batch, workers = 500, 4
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			c, err := firestore.NewClient(ctx, project)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			col := c.Collection("load")
			for {
				first := int(next.Add(batch)) - batch
				if first >= n {
					return
				}
				b := c.BulkWriter(ctx)
				for i := first; i < min(first+batch, n); i++ {
					if _, err := b.Set(col.Doc(fmt.Sprintf("d%07d", i)), map[string]any{"n": i, "s": "some text"}); err != nil {
						t.Error(err)
						return
					}
				}
				b.End()
			}
		})
	}
	wg.Wait()
}
