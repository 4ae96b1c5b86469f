package functions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// loadTimeout bounds a worker's start (node, the module's top level).
const loadTimeout = 60 * time.Second

// codebase is one codebase's functions and its pool of workers. The
// pool's workers all belong to the current generation (the last code that
// loaded); a reload starts a new generation and retires the old one's
// workers once their invocations end.
type codebase struct {
	e   *Engine
	cfg Codebase
	// inspectPort is the Node inspector's port for its worker, 0 off.
	inspectPort int

	loadMu      sync.Mutex // one load at a time
	fingerprint string     // of the files last loaded (guarded by loadMu)

	mu        sync.Mutex
	gen       int
	memMB     int
	endpoints map[string]*Endpoint
	workers   []*worker // the current generation's, retired ones excluded
	starting  int       // workers of the current generation not ready yet
	// unready are the started workers not ready yet (a load's, the
	// pool's growth): stop kills them too.
	unready map[*worker]bool
	changed chan struct{}
	stopped bool
	lastErr error
}

// load starts a generation from the code on disk: a worker loads the
// module; when it is ready its endpoints replace the codebase's and its
// workers replace the previous generation's. A load failure is reported
// and the previous generation keeps serving.
func (cb *codebase) load() {
	cb.loadMu.Lock()
	defer cb.loadMu.Unlock()
	cb.mu.Lock()
	if cb.stopped {
		cb.mu.Unlock()
		return
	}
	gen := cb.gen + 1
	mem := cb.memMB
	cb.mu.Unlock()
	if mem == 0 {
		mem = DefaultMemoryMB
	}
	start := time.Now()
	w, eps, err := cb.startLoaded(gen, mem)
	if err == nil {
		// The module's functions ask for more memory than the worker was
		// started with: restart with the largest.
		if want := maxMemory(eps); want != mem {
			w.kill()
			mem = want
			w, eps, err = cb.startLoaded(gen, mem)
		}
	}
	if err != nil {
		cb.mu.Lock()
		cb.lastErr = err
		old, stopped := len(cb.endpoints), cb.stopped
		cb.mu.Unlock()
		if stopped {
			return // the engine closed during the load: nothing to report
		}
		var le *LoadError
		if errors.As(err, &le) {
			cb.e.printf("functions: %s failed to load:\n%s\n", cb.label(), firstNonEmpty(le.Err.Stack, le.Err.Message))
		} else {
			cb.e.printf("functions: %s failed to load: %v\n", cb.label(), err)
		}
		if old > 0 {
			cb.e.printf("functions: %s keeps serving its previous version\n", cb.label())
		}
		return
	}
	cb.mu.Lock()
	if cb.stopped {
		cb.mu.Unlock()
		w.kill()
		return
	}
	old := cb.workers
	cb.gen, cb.memMB, cb.lastErr = gen, mem, nil
	cb.workers = []*worker{w}
	cb.starting = 0
	w.live = true
	cb.endpoints = map[string]*Endpoint{}
	for i := range eps {
		cb.endpoints[eps[i].ID] = &eps[i]
	}
	for _, o := range old {
		o.retired = true
		if o.total == 0 {
			o.kill()
		}
	}
	cb.broadcast()
	cb.mu.Unlock()
	names := make([]string, len(eps))
	for i, ep := range eps {
		names[i] = ep.ID
	}
	if user, err := LoadUserEnv(cb.cfg.Source, cb.e.project); err == nil && len(user.Files) > 0 {
		cb.e.printf("functions: %s: loaded environment variables from %s\n", cb.label(), strings.Join(user.Files, ", "))
	}
	cb.e.printf("functions: %s loaded %d function(s) in %s: %s\n", cb.label(), len(eps),
		time.Since(start).Round(time.Millisecond), strings.Join(names, ", "))
	cb.e.notifyChanged()
}

func (cb *codebase) label() string {
	return fmt.Sprintf("codebase %s (%s)", cb.cfg.Name, cb.cfg.Source)
}

// startLoaded starts a worker and waits for its manifest.
func (cb *codebase) startLoaded(gen, mem int) (*worker, []Endpoint, error) {
	w, err := cb.startWorker(gen, mem)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	if err := cb.waitReady(ctx, w); err != nil {
		w.kill()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the module did not load within %s", loadTimeout)
		}
		return nil, nil, err
	}
	w.mu.Lock()
	manifest := w.manifest
	w.mu.Unlock()
	eps, errs := parseManifest(cb.cfg.Name, manifest)
	for _, err := range errs {
		cb.e.printf("functions: %s: %v\n", cb.label(), err)
	}
	return w, eps, nil
}

func maxMemory(eps []Endpoint) int {
	m := DefaultMemoryMB
	for _, ep := range eps {
		m = max(m, ep.MemoryMB)
	}
	return m
}

// waitReady waits for a worker started by startWorker to be ready,
// keeping it among the unready ones stop kills meanwhile (a worker
// started after stop is killed at once).
func (cb *codebase) waitReady(ctx context.Context, w *worker) error {
	cb.mu.Lock()
	if cb.stopped {
		cb.mu.Unlock()
		w.kill()
		return errors.New("the functions engine is closed")
	}
	if cb.unready == nil {
		cb.unready = map[*worker]bool{}
	}
	cb.unready[w] = true
	cb.mu.Unlock()
	defer func() {
		cb.mu.Lock()
		delete(cb.unready, w)
		cb.mu.Unlock()
	}()
	return w.waitReady(ctx)
}

// broadcast wakes everyone waiting for a worker (cb.mu held).
func (cb *codebase) broadcast() {
	if cb.changed != nil {
		close(cb.changed)
	}
	cb.changed = make(chan struct{})
}

// acquire reserves a slot for function fn on a worker of the current
// generation, starting one when every worker is at the function's
// concurrency and the pool has room, and waiting otherwise.
func (cb *codebase) acquire(ctx context.Context, ep *Endpoint) (*worker, error) {
	tried := false
	for {
		cb.mu.Lock()
		if cb.stopped {
			cb.mu.Unlock()
			return nil, errors.New("the functions engine is closed")
		}
		conc := ep.Concurrency
		// Under the inspector invocations run one at a time (the
		// Emulator Suite's sequential mode), so stepping through one
		// never interleaves another.
		serial := cb.e.opts.InspectPort > 0
		var best *worker
		for _, w := range cb.workers {
			if w.live && !w.retired && !w.hasExited() && w.inflight[ep.ID] < conc && (!serial || w.total == 0) && (best == nil || w.total < best.total) {
				best = w
			}
		}
		if best != nil {
			best.inflight[ep.ID]++
			best.total++
			cb.mu.Unlock()
			return best, nil
		}
		if len(cb.workers) == 0 && cb.starting == 0 && cb.lastErr != nil && tried {
			err := cb.lastErr
			cb.mu.Unlock()
			return nil, err
		}
		if len(cb.workers)+cb.starting < cb.e.opts.MaxWorkers {
			cb.starting++
			tried = true
			go cb.grow(cb.gen, cb.memMB)
		}
		if cb.changed == nil {
			cb.changed = make(chan struct{})
		}
		wait := cb.changed
		cb.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// grow adds a worker to the generation gen.
func (cb *codebase) grow(gen, mem int) {
	if mem == 0 {
		mem = DefaultMemoryMB
	}
	w, err := cb.startWorker(gen, mem)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
		err = cb.waitReady(ctx, w)
		cancel()
		if err != nil {
			w.kill()
		}
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if gen == cb.gen {
		cb.starting--
	}
	if err != nil {
		cb.e.printf("functions: %s: a worker failed to start: %v\n", cb.label(), err)
		cb.lastErr = err
		cb.broadcast()
		return
	}
	if gen != cb.gen || cb.stopped {
		w.kill()
		return
	}
	w.live = true
	cb.lastErr = nil
	cb.workers = append(cb.workers, w)
	cb.broadcast()
}

// release returns a slot taken by acquire.
func (cb *codebase) release(w *worker, fn string) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	w.inflight[fn]--
	w.total--
	if w.retired && w.total == 0 {
		w.kill()
	}
	cb.broadcast()
}

// retire takes a worker out of service (it hung or broke); it is killed
// when its last invocation ends, or at once with now. A replacement
// starts when the pool would be empty.
func (cb *codebase) retire(w *worker, now bool) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	cb.removeLocked(w)
	w.retired = true
	if now || w.total == 0 {
		w.kill()
	}
	cb.broadcast()
}

func (cb *codebase) removeLocked(w *worker) {
	for i, x := range cb.workers {
		if x == w {
			cb.workers = append(cb.workers[:i:i], cb.workers[i+1:]...)
			break
		}
	}
}

// workerExited is called when a worker's process ended: it leaves the
// pool, and a crash of a serving worker is reported.
func (cb *codebase) workerExited(w *worker) {
	cb.mu.Lock()
	wasServing := w.live && !w.retired
	w.live = false
	cb.removeLocked(w)
	cb.broadcast()
	cb.mu.Unlock()
	if wasServing {
		cb.e.printf("functions: %s: a worker exited (%v); it is replaced on the next invocation\n", cb.label(), w.deathError())
	}
}

// stop kills every worker and waits (a while) for them to end.
func (cb *codebase) stop() {
	cb.mu.Lock()
	cb.stopped = true
	ws := cb.workers
	cb.workers = nil
	for w := range cb.unready {
		ws = append(ws, w)
	}
	for _, w := range ws {
		w.retired = true
	}
	cb.broadcast()
	cb.mu.Unlock()
	for _, w := range ws {
		w.kill()
	}
	for _, w := range ws {
		select {
		case <-w.exited:
		case <-time.After(5 * time.Second):
		}
	}
}

// watch reloads the codebase when its files change.
func (cb *codebase) watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fp, err := cb.scan()
		if err != nil {
			continue
		}
		cb.loadMu.Lock()
		same := fp == cb.fingerprint
		cb.fingerprint = fp
		cb.loadMu.Unlock()
		if same {
			continue
		}
		// Let an editor or tsc finish writing before loading.
		time.Sleep(every / 2)
		fp2, _ := cb.scan()
		cb.loadMu.Lock()
		cb.fingerprint = fp2
		cb.loadMu.Unlock()
		cb.e.printf("functions: %s changed; reloading\n", cb.label())
		cb.load()
	}
}

// scan fingerprints the codebase's files (names, sizes, modification
// times), leaving out its ignore patterns.
func (cb *codebase) scan() (string, error) {
	h := sha256.New()
	root := cb.cfg.Source
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && ignored(filepath.ToSlash(rel), cb.cfg.Ignore) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if n++; n > 20000 {
			return errors.New("too many files")
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", rel, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ignored reports whether a slash-separated relative path matches one of
// firebase.json's ignore globs (matched against the path and against
// each of its elements, as a gitignore-style name pattern).
func ignored(rel string, patterns []string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range patterns {
		p = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
		if strings.HasPrefix(p, "**/") {
			p = p[3:]
		}
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
		if !strings.Contains(p, "/") {
			for _, part := range parts {
				if ok, _ := path.Match(p, part); ok {
					return true
				}
			}
		}
	}
	return false
}

// workerEnv is the worker's whole environment: pyric's own, then the
// codebase's .env files and secrets, then what the Emulator Suite sets.
func (cb *codebase) workerEnv() ([]string, error) {
	user, err := LoadUserEnv(cb.cfg.Source, cb.e.project)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	for k, v := range user.Vars {
		vars[k] = v
	}
	cb.e.mu.Lock()
	for k, v := range cb.e.env {
		vars[k] = v
	}
	cb.e.mu.Unlock()
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}
