package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/pyric/pyric/firestore"
)

// indexesWatcher loads firestore.indexes.json (firebase.json's
// firestore.indexes) into the Firestore engine and reloads it whenever
// its content changes, polling like rulesWatcher. The declared indexes
// are built when the file is loaded and maintained on every commit from
// then on; with --enforce-indexes the file is also enforced. A file that
// does not parse, or disappears, leaves the last good indexes in force
// and says so on stderr.
type indexesWatcher struct {
	path    string
	enforce bool
	w       io.Writer
	e       *firestore.Engine // set once the backend runs

	mu      sync.Mutex
	content []byte // the content last looked at (nil: missing)
	seen    bool
}

// read parses the file: nil without one. Errors name the file.
func (iw *indexesWatcher) read() (*firestore.IndexConfig, []byte, error) {
	b, err := os.ReadFile(iw.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	cfg, err := firestore.ParseIndexFile(iw.path, b)
	return cfg, b, err
}

// start loads the file at startup, before the backend runs: with
// enforcement a bad file is an error (serve does not start), without it
// a warning (nothing is declared). It returns the enforced configuration
// for the backend's options (nil without enforcement).
func (iw *indexesWatcher) start() (enforced, declared *firestore.IndexConfig, err error) {
	cfg, b, err := iw.read()
	iw.seen, iw.content = true, b
	switch {
	case err != nil && iw.enforce:
		return nil, nil, err
	case err != nil:
		fmt.Fprintf(iw.w, "pyric: %v; no indexes are declared until it parses\n", err)
		return nil, nil, nil
	case iw.enforce && cfg == nil:
		return &firestore.IndexConfig{}, nil, nil // enforce, with nothing declared
	case iw.enforce:
		return cfg, nil, nil
	}
	return nil, cfg, nil
}

// load rereads the file and applies it when it changed since the last look.
func (iw *indexesWatcher) load() {
	cfg, b, err := iw.read()
	iw.mu.Lock()
	missing := err == nil && cfg == nil
	changed := missing != (iw.content == nil) || !bytes.Equal(b, iw.content)
	iw.content = b
	iw.mu.Unlock()
	switch {
	case !changed:
	case missing:
		fmt.Fprintf(iw.w, "pyric: %s was removed; the last good indexes stay in force\n", iw.path)
	case err != nil:
		fmt.Fprintf(iw.w, "pyric: %v; the last good indexes stay in force\n", err)
	default:
		start := time.Now()
		if iw.enforce {
			iw.e.SetIndexes(cfg)
		} else {
			iw.e.DeclareIndexes(cfg)
		}
		iw.e.WaitIndexes() // built beside traffic: only this watcher waits
		fmt.Fprintf(iw.w, "pyric: reloaded %s (%d composite indexes, built in %v)\n", iw.path, len(cfg.Indexes), time.Since(start).Round(time.Millisecond))
	}
}

// run polls until ctx ends.
func (iw *indexesWatcher) run(ctx context.Context, every time.Duration) { poll(ctx, every, iw.load) }
