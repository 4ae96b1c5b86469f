package database

// The database's part of an Emulator Suite export, as firebase-tools
// writes and reads it: database_export/<namespace>.json, each namespace's
// data in the export format (GET /.json?format=export).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyric/pyric/sandbox/service"
)

// exportDir is the database's directory in an export.
const exportDir = "database_export"

// MaxExportFile bounds one namespace file read from an export.
const MaxExportFile = 1 << 30

// NewState implements service.TypedState.
func (d *Database) NewState() any { return &State{} }

// Describe implements service.Describer.
func (d *Database) Describe() string {
	return "Realtime Database: every namespace's JSON tree (export format, priorities as .priority) and the rules a namespace has of its own."
}

// Export implements service.Exporter: database_export/<ns>.json for
// every namespace with data.
func (d *Database) Export(root string) (service.ExportEntry, error) {
	raw, err := d.Snapshot()
	if err != nil {
		return service.ExportEntry{}, err
	}
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		return service.ExportEntry{}, fmt.Errorf("database export: %w", err)
	}
	out := filepath.Join(root, exportDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return service.ExportEntry{}, err
	}
	for ns, n := range s.Namespaces {
		if len(n.Data) == 0 || string(n.Data) == "null" {
			continue
		}
		if !validFileName(ns) {
			return service.ExportEntry{}, fmt.Errorf("database export: namespace %q cannot be a file name", ns)
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, n.Data, "", "  "); err != nil {
			return service.ExportEntry{}, fmt.Errorf("database export %s: %w", ns, err)
		}
		if err := writeExportFile(filepath.Join(out, ns+".json"), buf.Bytes()); err != nil {
			return service.ExportEntry{}, err
		}
	}
	return service.ExportEntry{Path: exportDir}, nil
}

// validFileName is a namespace name that is a plain file name (the
// database's names are DNS labels).
func validFileName(ns string) bool {
	if ns == "" || ns == "." || ns == ".." || len(ns) > 255 {
		return false
	}
	return !strings.ContainsAny(ns, `/\`+"\x00")
}

// ImportState implements service.Importer: every <ns>.json file in dir
// is a namespace.
func (d *Database) ImportState(dir string) (json.RawMessage, func() error, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", service.ErrExport, err)
	}
	s := State{Namespaces: map[string]NamespaceState{}}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(dir, name)
		data, err := readExportFile(path)
		if err != nil {
			return nil, nil, err
		}
		if err := oneJSONValue(data); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v", service.ErrExport, path, err)
		}
		s.Namespaces[strings.TrimSuffix(name, ".json")] = NamespaceState{Data: json.RawMessage(bytes.TrimSpace(data))}
	}
	st, err := json.Marshal(s)
	return st, nil, err
}

// oneJSONValue checks a namespace file is one JSON value.
func oneJSONValue(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func readExportFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", service.ErrExport, err)
	}
	if st.Size() > MaxExportFile {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", service.ErrExport, path, st.Size(), MaxExportFile)
	}
	return os.ReadFile(path)
}

func writeExportFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var (
	_ service.TypedState = (*Database)(nil)
	_ service.Exporter   = (*Database)(nil)
	_ service.Importer   = (*Database)(nil)
	_ service.Describer  = (*Database)(nil)

	_ service.SessionChecker = (*Database)(nil)
)
