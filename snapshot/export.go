package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// ExportMetadata is firebase-export-metadata.json, the Emulator Suite's
// index of an export directory: its version and one entry per service
// with a part in it, under the service's name.
type ExportMetadata struct {
	Version string
	// Services are the entries by service name ("firestore", "auth",
	// "database", "storage", ...).
	Services map[string]*ExportEntry
	// order is the order the entries are written in.
	order []string
}

// ExportEntry is one service's part of an export.
type ExportEntry struct {
	Version      string `json:"version"`
	Path         string `json:"path"`
	MetadataFile string `json:"metadata_file,omitempty"`
}

// add adds a service's entry, written after those added before.
func (m *ExportMetadata) add(name string, e *ExportEntry) {
	if m.Services == nil {
		m.Services = map[string]*ExportEntry{}
	}
	if _, ok := m.Services[name]; !ok {
		m.order = append(m.order, name)
	}
	m.Services[name] = e
}

// MarshalJSON writes the version first, then the entries in the order
// they were added (the sandbox's service order), as the Emulator Suite
// lists them.
func (m ExportMetadata) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	v, _ := json.Marshal(m.Version)
	buf.WriteString(`{"version":`)
	buf.Write(v)
	order := m.order
	if len(order) != len(m.Services) {
		order = order[:0:0]
		for k := range m.Services {
			order = append(order, k)
		}
		sort.Strings(order)
	}
	for _, k := range order {
		kb, _ := json.Marshal(k)
		eb, err := json.Marshal(m.Services[k])
		if err != nil {
			return nil, err
		}
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(eb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the version and every entry that is an object
// (other keys are left alone, as firebase-tools leaves them).
func (m *ExportMetadata) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = ExportMetadata{}
	if v, ok := raw["version"]; ok {
		if err := json.Unmarshal(v, &m.Version); err != nil {
			return fmt.Errorf("version: %w", err)
		}
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "version" || !bytes.HasPrefix(bytes.TrimSpace(raw[k]), []byte("{")) {
			continue
		}
		var e ExportEntry
		if err := json.Unmarshal(raw[k], &e); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		m.add(k, &e)
	}
	return nil
}

// ExportVersion is the version pyric writes into export metadata.
const ExportVersion = "pyric-1"

// MaxExportFile bounds one file read from an export.
const MaxExportFile = 1 << 30

// ErrExport is an export directory that cannot be read.
var ErrExport = service.ErrExport

// ExportDir writes sb's state into dir in the Emulator Suite's layout:
// firebase-export-metadata.json and the part of every service that
// implements service.Exporter (Firestore's firestore_export/ in the
// Datastore export format the official emulator writes, Auth's
// auth_export/, the Realtime Database's database_export/ and Storage's
// storage_export/ as firebase-tools writes them).
func ExportDir(sb *sandbox.Sandbox, dir string) error {
	md := ExportMetadata{Version: ExportVersion}
	for _, svc := range sb.Services() {
		ex, ok := svc.(service.Exporter)
		if !ok {
			continue
		}
		e, err := ex.Export(dir)
		if err != nil {
			return err
		}
		md.add(svc.Name(), &ExportEntry{Version: ExportVersion, Path: e.Path, MetadataFile: e.MetadataFile})
	}
	js, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "firebase-export-metadata.json"), js)
}

// servicePath is a service's directory in an export, from its metadata
// entry ("" when the export has none); it must stay inside the export.
func servicePath(dir, svc string, e *ExportEntry) (string, error) {
	if e == nil || e.Path == "" {
		return "", nil
	}
	if filepath.IsAbs(e.Path) || strings.Contains(e.Path, "..") {
		return "", fmt.Errorf("%w: firebase-export-metadata.json: %s.path %q must be a relative path inside the export", ErrExport, svc, e.Path)
	}
	return filepath.Join(dir, e.Path), nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrExport, err)
	}
	if st.Size() > MaxExportFile {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrExport, path, st.Size(), MaxExportFile)
	}
	return os.ReadFile(path)
}

// ImportDir replaces sb's state with an export directory's (with
// firebase-export-metadata.json, or a bare Firestore export directory):
// the states every service implementing service.Importer reads from its
// part are restored in one go (all or nothing, the services without a
// part emptied), then each service finishes its import (Auth adds the
// export's accounts, Storage creates its buckets). It is what `pyric
// serve --import DIR` does at start.
func ImportDir(sb *sandbox.Sandbox, dir string) error {
	var md ExportMetadata
	mdPath := filepath.Join(dir, "firebase-export-metadata.json")
	if _, err := os.Stat(mdPath); errors.Is(err, os.ErrNotExist) {
		// A bare Firestore export: the directory is Firestore's part.
		md.add("firestore", &ExportEntry{Path: "."})
	} else {
		data, err := readBounded(mdPath)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &md); err != nil {
			return fmt.Errorf("%w: firebase-export-metadata.json: %v", ErrExport, err)
		}
	}
	services := map[string]json.RawMessage{}
	var finish []func() error
	for _, svc := range sb.Services() {
		im, ok := svc.(service.Importer)
		if !ok {
			continue
		}
		path, err := servicePath(dir, svc.Name(), md.Services[svc.Name()])
		if err != nil {
			return err
		}
		if path == "" {
			continue
		}
		st, fin, err := im.ImportState(path)
		if err != nil {
			return err
		}
		if st != nil {
			services[svc.Name()] = st
		}
		if fin != nil {
			finish = append(finish, fin)
		}
	}
	snap, err := json.Marshal(map[string]any{"version": sandbox.SnapshotVersion, "services": services})
	if err != nil {
		return err
	}
	if err := sb.LoadSnapshot(snap); err != nil {
		return err
	}
	for _, f := range finish {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// ExportHandler is the admin endpoint behind `pyric export DIR --url`:
// POST {"dir": "/abs/path"} writes the export on the server's machine.
// Mount it on the admin plane, e.g. at /__pyric/export.
func ExportHandler(sb *sandbox.Sandbox) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, `POST {"dir": "/absolute/path"} to export`, http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			Dir string `json:"dir"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || req.Dir == "" || !filepath.IsAbs(req.Dir) {
			http.Error(w, `body must be {"dir": "/absolute/path"}`, http.StatusBadRequest)
			return
		}
		if err := ExportDir(sb, req.Dir); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`+"\n")
	})
}

// ExportDataDir exports the state of a stopped server's data directory.
func ExportDataDir(dataDir, dir string, services []service.Registration) error {
	sb, err := open(dataDir, services)
	if err != nil {
		return err
	}
	defer sb.Close()
	return ExportDir(sb, dir)
}

// ImportDataDir replaces a data directory's state with an export.
func ImportDataDir(dataDir, dir string, services []service.Registration) error {
	sb, err := open(dataDir, services)
	if err != nil {
		return err
	}
	if err := ImportDir(sb, dir); err != nil {
		sb.Close()
		return err
	}
	return sb.Close()
}
