// Package snapshot saves and loads a pyric's whole state: offline on a
// data directory (SaveDir, LoadDir), online through an admin endpoint
// (Handler), and seeds a new data directory from a snapshot or a simple
// {"collection/doc": fields} map (Seed). Snapshots are the sandbox's
// {"version": 3, "services": {...}} format. It also writes and reads the
// Firebase Emulator Suite's export directories (ExportDir, ImportDir):
// the part of every service implementing service.Exporter and
// service.Importer (Firestore, Auth, Realtime Database and Storage, in
// the layouts the official emulator and firebase-tools use). It names no
// service: the offline functions take the registrations to open a data
// directory with.
package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// MaxSize bounds a snapshot read by Handler (256 MiB).
const MaxSize = 256 << 20

// ErrSeed is a seed file that is neither a snapshot nor a map of records
// (service.ErrSeed).
var ErrSeed = service.ErrSeed

// open opens a data directory's sandbox with the services it holds (the
// backend's registrations, which the command line passes: this package
// names no service).
func open(dir string, services []service.Registration) (*sandbox.Sandbox, error) {
	return openProject(dir, "", services)
}

// openProject opens a data directory's sandbox whose default project is
// project ("": the sandbox's default), the one a simple seed map writes to.
func openProject(dir, project string, services []service.Registration) (*sandbox.Sandbox, error) {
	return sandbox.Open(sandbox.Options{DataDir: dir, Project: project, Services: services})
}

// SaveDir returns the snapshot of the state kept in a data directory (the
// server must not be running on it: the store is locked while it is).
func SaveDir(dir string, services []service.Registration) ([]byte, error) {
	if _, err := os.Stat(filepath.Join(dir, "pyric.db")); err != nil {
		return nil, fmt.Errorf("snapshot: %s holds no pyric state (no pyric.db)", dir)
	}
	sb, err := open(dir, services)
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	return sb.Snapshot()
}

// LoadDir replaces the state of a data directory (created if new) with a
// snapshot; on error the previous state stays.
func LoadDir(dir string, data []byte, services []service.Registration) error {
	sb, err := open(dir, services)
	if err != nil {
		return err
	}
	if err := sb.LoadSnapshot(data); err != nil {
		sb.Close()
		return err
	}
	return sb.Close()
}

// IsNew reports whether a data directory holds no state yet (what
// `pyric serve --seed` checks before seeding).
func IsNew(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "pyric.db"))
	return errors.Is(err, os.ErrNotExist)
}

// Seed applies a seed file to a sandbox: a snapshot (an object with a
// "version" key) replaces the state; otherwise the file must map document
// paths to fields ({"users/alice": {"name": "Alice"}}), which the first
// service.Seeder of the sandbox (Firestore) writes as the admin. Call it
// only when the data directory is new.
func Seed(ctx context.Context, sb *sandbox.Sandbox, data []byte) error {
	var probe map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&probe); err != nil {
		return fmt.Errorf("%w: must be a JSON object: %v", ErrSeed, err)
	}
	if _, ok := probe["version"]; ok {
		return sb.LoadSnapshot(data)
	}
	for _, svc := range sb.Services() {
		if sd, ok := svc.(service.Seeder); ok {
			return sd.Seed(ctx, probe)
		}
	}
	return fmt.Errorf("%w: a record seed needs a service that takes one (Firestore's documents), and the sandbox runs none", ErrSeed)
}

// Prepare is what `pyric serve` calls before starting on a data
// directory: with fresh, the directory's state is discarded; then, when
// seedFile is set and the directory is new, the seed is applied (a simple
// {"collection/doc": fields} map into project's default database, the
// project the server then serves). dir "" (in memory) always seeds.
func Prepare(ctx context.Context, dir, project, seedFile string, fresh bool, services []service.Registration) error {
	if dir != "" && fresh {
		if err := sandbox.RemoveStore(dir); err != nil {
			return fmt.Errorf("--fresh: %w", err)
		}
	}
	if seedFile == "" || (dir != "" && !IsNew(dir)) {
		return nil
	}
	if dir == "" {
		return nil // in memory: call Seed on the running sandbox instead
	}
	data, err := os.ReadFile(seedFile)
	if err != nil {
		return fmt.Errorf("--seed: %w", err)
	}
	sb, err := openProject(dir, project, services)
	if err != nil {
		return err
	}
	if err := Seed(ctx, sb, data); err != nil {
		sb.Close()
		sandbox.RemoveStore(dir)
		return fmt.Errorf("--seed %s: %w", seedFile, err)
	}
	return sb.Close()
}

// Handler is the admin endpoint: GET returns the snapshot, PUT (or POST)
// with a snapshot body replaces the state (400 for a bad snapshot, the
// state unchanged). Mount it on the admin plane, e.g. at
// /__pyric/snapshot.
func Handler(sb *sandbox.Sandbox) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			data, err := sb.Snapshot()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(data)
		case http.MethodPut, http.MethodPost:
			data, err := io.ReadAll(io.LimitReader(r.Body, MaxSize+1))
			if err != nil {
				http.Error(w, "reading the snapshot: "+err.Error(), http.StatusBadRequest)
				return
			}
			if len(data) > MaxSize {
				http.Error(w, fmt.Sprintf("snapshot exceeds %d bytes", MaxSize), http.StatusRequestEntityTooLarge)
				return
			}
			if err := sb.LoadSnapshot(data); err != nil {
				status := http.StatusInternalServerError
				if errors.Is(err, sandbox.ErrSnapshot) {
					status = http.StatusBadRequest
				}
				http.Error(w, err.Error(), status)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`+"\n")
		default:
			w.Header().Set("Allow", "GET, PUT, POST")
			http.Error(w, "use GET to save and PUT to load a snapshot", http.StatusMethodNotAllowed)
		}
	})
}
