package functions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/pyric/pyric/internal/procgroup"
)

// worker is one supervised node process running the harness over one
// codebase: it serves invocations over HTTP on a unix socket and reports
// on its control pipe.
type worker struct {
	cb     *codebase
	gen    int
	n      int // number within the engine, for the socket name and logs
	memMB  int
	sock   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	client *workerClient

	ready  chan struct{} // closed when the harness listens (or the process ended)
	exited chan struct{} // closed when the process ended

	// Guarded by cb.mu.
	inflight map[string]int // by function id
	total    int
	retired  bool
	live     bool // ready and not exited

	mu       sync.Mutex
	manifest map[string]json.RawMessage
	loadErr  *ScriptError
	crash    *ScriptError // an uncaught exception or process.exit, and the invocation it came from
	crashInv string
	invs     map[string]*invocation
	exitErr  error
}

// ScriptError is an error thrown by the app's code.
type ScriptError struct {
	Message string `json:"message"`
	Stack   string `json:"stack"`
}

func (e *ScriptError) Error() string { return e.Message }

// controlMsg is one line of the harness's control pipe.
type controlMsg struct {
	T         string                     `json:"t"`
	Fn        string                     `json:"fn"`
	Inv       string                     `json:"inv"`
	Severity  string                     `json:"severity"`
	Text      string                     `json:"text"`
	Message   string                     `json:"message"`
	Stack     string                     `json:"stack"`
	Code      *int                       `json:"code"`
	Endpoints map[string]json.RawMessage `json:"endpoints"`
	Node      string                     `json:"node"`
}

// startWorker starts a node process over the codebase's source.
func (cb *codebase) startWorker(gen, memMB int) (*worker, error) {
	e := cb.e
	n := int(e.workerSeq.Add(1))
	w := &worker{cb: cb, gen: gen, n: n, memMB: memMB, sock: filepath.Join(e.dir, "w"+strconv.Itoa(n)+".sock"),
		ready: make(chan struct{}), exited: make(chan struct{}), inflight: map[string]int{}, invs: map[string]*invocation{}}
	os.Remove(w.sock)
	args := []string{"--max-old-space-size=" + strconv.Itoa(memMB)}
	if p := cb.inspectPort; p > 0 {
		args = append(args, "--inspect=127.0.0.1:"+strconv.Itoa(p))
	}
	args = append(args, filepath.Join(e.dir, "harness.js"))
	cmd := exec.Command(e.node, args...)
	cmd.Dir = cb.cfg.Source
	env, err := cb.workerEnv()
	if err != nil {
		return nil, err
	}
	cmd.Env = append(env, "PYRIC_FN_SOCKET="+w.sock, "PYRIC_FN_COMPILE_CACHE="+e.compileCache)
	// Its own process group, so a kill ends what it spawned too. (No
	// Pdeathsig: it fires when the spawning OS thread exits, not the
	// process; the worker leaves when its stdin, held by pyric, ends.)
	procgroup.Own(cmd)
	ctrlR, ctrlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{ctrlW}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	// The worker exits when its stdin ends: when pyric exits, even by
	// kill -9, no worker outlives it.
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		ctrlR.Close()
		ctrlW.Close()
		return nil, fmt.Errorf("start %s: %w", e.node, err)
	}
	ctrlW.Close()
	w.cmd = cmd
	w.client = &workerClient{sock: w.sock}
	var pipes sync.WaitGroup
	pipes.Add(3)
	go func() { defer pipes.Done(); w.readControl(ctrlR) }()
	go func() { defer pipes.Done(); w.copyOutput(stdout) }()
	go func() { defer pipes.Done(); w.copyOutput(stderr) }()
	go func() {
		pipes.Wait()
		err := cmd.Wait()
		w.mu.Lock()
		w.exitErr = err
		w.mu.Unlock()
		w.client.close()
		os.Remove(w.sock)
		close(w.exited)
		w.markReady()
		cb.workerExited(w)
	}()
	return w, nil
}

func (w *worker) markReady() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.ready:
	default:
		close(w.ready)
	}
}

// readControl handles the harness's control messages until the pipe
// closes.
func (w *worker) readControl(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var m controlMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.T {
		case "ready":
			w.mu.Lock()
			w.manifest = m.Endpoints
			w.mu.Unlock()
			w.markReady()
		case "loadError":
			w.mu.Lock()
			w.loadErr = &ScriptError{Message: m.Message, Stack: m.Stack}
			w.mu.Unlock()
		case "log":
			w.log(m.Fn, m.Inv, m.Severity, m.Text)
		case "end":
			w.mu.Lock()
			inv := w.invs[m.Inv]
			w.mu.Unlock()
			if inv != nil {
				inv.markEnded()
			}
		case "error":
			w.mu.Lock()
			if inv := w.invs[m.Inv]; inv != nil {
				inv.scriptErr = &ScriptError{Message: m.Message, Stack: m.Stack}
			}
			w.mu.Unlock()
			w.log(m.Fn, m.Inv, "ERROR", firstNonEmpty(m.Stack, m.Message))
		case "crash", "exit":
			se := &ScriptError{Message: m.Message, Stack: m.Stack}
			if m.T == "exit" {
				code := 0
				if m.Code != nil {
					code = *m.Code
				}
				se = &ScriptError{Message: fmt.Sprintf("the function called process.exit(%d)", code)}
			}
			w.mu.Lock()
			w.crash, w.crashInv = se, m.Inv
			w.mu.Unlock()
			who := firstNonEmpty(m.Fn, "codebase "+w.cb.cfg.Name)
			w.cb.e.printf("functions[%s]: the worker ended: %s\n", who, firstNonEmpty(m.Stack, se.Message))
		}
	}
}

// log prints a function's log line on the terminal, prefixed with the
// function's name, and keeps it with its invocation.
func (w *worker) log(fn, inv, severity, text string) {
	// firebase-functions' logger writes a JSON entry; show its message.
	if len(text) > 0 && text[0] == '{' {
		var entry struct {
			Severity string `json:"severity"`
			Message  string `json:"message"`
		}
		if json.Unmarshal([]byte(text), &entry) == nil && entry.Severity != "" {
			severity, text = entry.Severity, entry.Message
		}
	}
	w.mu.Lock()
	if i := w.invs[inv]; i != nil {
		i.addLog(severity, text)
	}
	w.mu.Unlock()
	w.cb.e.printf("functions[%s]: %s\n", firstNonEmpty(fn, w.cb.cfg.Name), text)
}

// copyOutput prints what the worker writes outside the console.
func (w *worker) copyOutput(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		w.cb.e.printf("functions[%s]: %s\n", w.cb.cfg.Name, sc.Text())
	}
	io.Copy(io.Discard, r)
}

// kill ends the process (and its process group).
func (w *worker) kill() {
	if w.cmd != nil && w.cmd.Process != nil {
		procgroup.Signal(w.cmd, syscall.SIGKILL)
		w.cmd.Process.Kill()
	}
	if w.stdin != nil {
		w.stdin.Close()
	}
}

// waitReady waits until the harness listens, or reports why it never will.
func (w *worker) waitReady(ctx context.Context) error {
	select {
	case <-w.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-w.exited:
		return w.deathError()
	default:
		return nil
	}
}

// deathError says why the process ended.
func (w *worker) deathError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.loadErr != nil:
		return &LoadError{Codebase: w.cb.cfg.Name, Dir: w.cb.cfg.Source, Err: w.loadErr}
	case w.crash != nil:
		return w.crash
	case w.exitErr != nil:
		return fmt.Errorf("the functions worker of codebase %s ended: %v", w.cb.cfg.Name, w.exitErr)
	}
	return fmt.Errorf("the functions worker of codebase %s ended", w.cb.cfg.Name)
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

var errWorkerGone = errors.New("the functions worker ended")

// hasExited reports whether the worker's process has ended, which can be
// known before the codebase marks it dead: an invocation retried after a
// crash must not be handed the same worker.
func (w *worker) hasExited() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}
