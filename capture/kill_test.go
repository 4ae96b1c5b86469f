package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/testfs"
)

// TestKillChild is the child of TestRecorderSurvivesKill: it records a
// session into the file $PYRIC_CAPTURE_KILL names while writing as fast
// as it can, printing "ACK i" after each write, until it is killed.
func TestKillChild(t *testing.T) {
	path := os.Getenv("PYRIC_CAPTURE_KILL")
	if path == "" {
		t.Skip("the child of TestRecorderSurvivesKill")
	}
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fs := testfs.Of(b.Sandbox).Admin()
	for i := range 300 { // state the first rewrite writes
		fs.SetDocument(ctx, fmt.Sprintf("pre/d%d", i), map[string]any{"i": i, "pad": strings.Repeat("p", 200)})
	}
	// Small bounds, so that rewrites (when the file outgrows them) come
	// often and kills land in them too.
	rec, err := Start(ctx, b.Sandbox, path, Options{Debounce: time.Millisecond, FirstFlush: time.Millisecond, MaxEvents: 300, MaxBytes: 128 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	out := bufio.NewWriter(os.Stdout)
	for i := 1; ; i++ {
		if err := fs.SetDocument(ctx, fmt.Sprintf("c/d%d", i%40), map[string]any{"i": i}); err != nil {
			fmt.Fprintln(out, "ERR", err)
		}
		if i%5 == 0 {
			fs.DeleteDocument(ctx, fmt.Sprintf("x/d%d", i%3))
		} else {
			fs.SetDocument(ctx, fmt.Sprintf("x/d%d", i%3), map[string]any{"i": i})
		}
		fmt.Fprintln(out, "ACK", i)
		out.Flush()
	}
}

// TestRecorderSurvivesKill kills (SIGKILL) a process recording a busy
// session at several points, in the middle of appends and of rewrites,
// and checks the file it leaves loads, holds events in order, and a
// state never behind its events; then that the next Start keeps it as
// the previous session and removes a torn rewrite's temporary file.
func TestRecorderSurvivesKill(t *testing.T) {
	if os.Getenv("PYRIC_CAPTURE_KILL") != "" {
		t.Skip("in the child")
	}
	for _, want := range []int{1, 20, 150, 400, 1200} {
		t.Run(strconv.Itoa(want), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "last-session.json")
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$")
			cmd.Env = append(os.Environ(), "PYRIC_CAPTURE_KILL="+path)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			acked := 0
			deadline := time.Now().Add(60 * time.Second)
			for acked < want && sc.Scan() && time.Now().Before(deadline) {
				line := sc.Text()
				if strings.HasPrefix(line, "ERR") {
					t.Errorf("child: %s", line)
				}
				if n, ok := strings.CutPrefix(line, "ACK "); ok {
					acked, _ = strconv.Atoi(n)
				}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if acked < want {
				t.Fatalf("the child acknowledged %d writes, want %d", acked, want)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fx, err := decode(data)
			if err != nil {
				t.Fatalf("the file a kill left does not load: %v", err)
			}
			// The state is the state at some flush no earlier than the
			// events': each document's i is at least its last commit's.
			docs, err := stateDocs(fx)
			if err != nil {
				t.Fatal(err)
			}
			last := map[string]int64{}
			for _, e := range fx.Events {
				if e.Kind == "commit" && strings.HasPrefix(e.Path, "c/") {
					if m, ok := e.Commit.After.(map[string]any); ok {
						last[e.Path], _ = m["i"].(json.Number).Int64()
					}
				}
			}
			for p, n := range last {
				d, ok := docs[p].(map[string]any)
				if !ok {
					t.Errorf("%s has a commit in the file but no state", p)
					continue
				}
				if got, _ := d["i"].(json.Number).Int64(); got < n {
					t.Errorf("%s: state i=%d is behind its last commit's i=%d", p, got, n)
				}
			}
			if sd := fx.Services["firestore"]; sd != nil && len(sd.State) > 0 && len(docs) < 300 {
				t.Errorf("the state has %d documents, the 300 written before Start missing", len(docs))
			}
			// The next session keeps the killed one and cleans up.
			b, err := backend.Start(backend.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Shutdown(context.Background())
			rec, err := Start(context.Background(), b.Sandbox, path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rec.Close()
			head := &headFields{}
			if readHead(data, head); head.empty() {
				// Killed before its first flush: nothing to keep, and
				// nothing kept over the previous session (none here).
				if _, err := os.Stat(PreviousPath(path)); !os.IsNotExist(err) {
					t.Errorf("a session that never flushed was kept as the previous one: %v", err)
				}
			} else if prev, err := os.ReadFile(PreviousPath(path)); err != nil || string(prev) != string(data) {
				t.Errorf("the killed session is not kept as the previous one: %v", err)
			}
			if tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(tmp) > 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
			t.Logf("killed after %d writes: %d events, %d documents, %d KiB", acked, len(fx.Events), len(docs), len(data)>>10)
		})
	}
}
