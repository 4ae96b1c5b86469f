package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/rules/live"
	"github.com/pyric/pyric/sandbox/service"
)

// rulesTarget is what a rules file is loaded into: a service with live
// rules (Firestore, Storage, the Realtime Database).
type rulesTarget = service.LiveRules

// rulesWatcher loads a service's rules file into its target and reloads it
// whenever its content changes. It polls (every 500 ms) rather than using
// inotify: no dependency, and it sees editors that replace the file as
// well as ones that write in place. A file that does not compile, or
// disappears, leaves the last good rules live and says so on stderr with
// file:line:col for every error.
type rulesWatcher struct {
	service string // "Firestore", "Storage", "Database" in messages
	flag    string // the flag naming the file, for the warning
	path    string
	rm      rulesTarget
	w       io.Writer

	mu      sync.Mutex
	content []byte // the content last looked at (nil: missing)
	seen    bool
}

func newRulesWatcher(service, flag, path string, rm rulesTarget, w io.Writer) *rulesWatcher {
	return &rulesWatcher{service: service, flag: flag, path: path, rm: rm, w: w}
}

// load reads the file and applies it when it changed since the last look.
func (rw *rulesWatcher) load() {
	b, err := os.ReadFile(rw.path)
	missing := errors.Is(err, os.ErrNotExist)
	if err != nil && !missing {
		rw.report("pyric: cannot read %s: %v; the rules in force stay live\n", rw.path, err)
		return
	}
	rw.mu.Lock()
	changed := !rw.seen || (missing != (rw.content == nil)) || !bytes.Equal(b, rw.content)
	first := !rw.seen
	rw.seen = true
	if missing {
		rw.content = nil
	} else {
		rw.content = b
	}
	rw.mu.Unlock()
	if !changed {
		return
	}
	_, _, loaded := rw.rm.RulesFile()
	if missing {
		if !first && loaded {
			rw.report("pyric: %s was removed; the last good rules stay live\n", rw.path)
		}
		return
	}
	diags, err := rw.rm.SetRulesFile(rw.path, string(b))
	if err != nil {
		var ce *live.CompileError
		msg := err.Error()
		if errors.As(err, &ce) {
			msg = ce.Error()
		}
		if loaded {
			rw.report("pyric: %s does not compile; the last good rules stay live:\n%s\n", rw.path, indent(msg))
		} else {
			rw.report("pyric: %s does not compile; every client request is DENIED until it does:\n%s\n", rw.path, indent(msg))
		}
		return
	}
	warn := ""
	if n := len(diags); n > 0 {
		warn = fmt.Sprintf(" (%d warnings)", n)
	}
	if !first {
		rw.report("pyric: reloaded %s%s\n", rw.path, warn)
	}
}

func (rw *rulesWatcher) report(format string, args ...any) {
	fmt.Fprintf(rw.w, format, args...)
}

// status describes the rules in force for the banner.
func (rw *rulesWatcher) status() string {
	name, _, loaded := rw.rm.RulesFile()
	if loaded {
		return name + " (hot-reloaded on change)"
	}
	return "NONE: every client request is DENIED (no rules at " + rw.path + ")"
}

func (rw *rulesWatcher) loaded() bool {
	_, _, ok := rw.rm.RulesFile()
	return ok
}

func (rw *rulesWatcher) noRulesWarning() string {
	lines := []string{
		"NO " + strings.ToUpper(rw.service) + " RULES ARE LOADED: EVERY CLIENT REQUEST IS DENIED.",
		`Admin requests ("Authorization: Bearer owner") bypass rules.`,
		"Write " + rw.path + " (it is picked up as soon as it",
		"compiles) or pass " + rw.flag + " PATH.",
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l))
	}
	bar := strings.Repeat("!", width+6)
	var b strings.Builder
	b.WriteString(bar + "\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "!! %-*s !!\n", width, l)
	}
	b.WriteString(bar)
	return b.String()
}

// run polls until ctx ends.
func (rw *rulesWatcher) run(ctx context.Context, every time.Duration) { poll(ctx, every, rw.load) }

// poll calls load every interval until ctx ends: how serve and exec watch
// their rules and index files.
func poll(ctx context.Context, every time.Duration, load func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			load()
		}
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
