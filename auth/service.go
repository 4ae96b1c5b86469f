package auth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// Registration puts Auth in a sandbox: an engine on the environment's
// clock, random source, events and log, holding what the log holds, with
// the default project's accounts in exports.
var Registration = service.Registration{Name: Service, New: newService}

// legacyStateKey is where versions before the service contract kept the
// whole state as one blob in the bucket; a start finds it there, removes
// it and restores it record by record.
var legacyStateKey = []byte("state")

func newService(env service.Env) (service.Service, error) {
	legacy, err := takeLegacyState(env.Bucket)
	if err != nil {
		return nil, err
	}
	if err := moveBucketRecords(env.Bucket, env.Log); err != nil {
		return nil, fmt.Errorf("auth: move the records of the previous format to the log: %w", err)
	}
	e, err := Open(Options{Clock: env.Now, Events: env.Events, Log: env.Log, Outbox: env.Outbox, IDs: env.Rand})
	if err != nil {
		return nil, err
	}
	if legacy != nil {
		if err := e.Restore(legacy); err != nil {
			return nil, fmt.Errorf("restore auth from the previous format: %w", err)
		}
	}
	project := env.Project
	if project == "" {
		project = service.DefaultProject
	}
	return &engineService{Engine: e, project: project}, nil
}

func takeLegacyState(b service.Bucket) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	var state []byte
	if err := b.View(func(tx service.Tx) error {
		if v := tx.Get(legacyStateKey); v != nil {
			state = bytes.Clone(v)
		}
		return nil
	}); err != nil || state == nil {
		return nil, err
	}
	if err := b.Update(func(tx service.Tx) error { return tx.Delete(legacyStateKey) }); err != nil {
		return nil, err
	}
	return state, nil
}

// moveBucketRecords moves the records versions before the log kept in the
// bucket (the log's layout, store.go) to the log: appended first, then
// deleted from the bucket, so a crash between the two leaves them in both
// and the next start appends the same records again.
func moveBucketRecords(b service.Bucket, log service.Log) error {
	if b == nil || log == nil {
		return nil
	}
	var moved []service.LogChange
	if err := b.View(func(tx service.Tx) error {
		for _, kind := range []byte{'c', 't', 's'} {
			if err := tx.ForEach([]byte{kind}, func(k, v []byte) error {
				moved = append(moved, service.LogChange{Key: string(k), Value: bytes.Clone(v)})
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil || len(moved) == 0 {
		return err
	}
	if err := log.Append(logSpace, moved); err != nil {
		return err
	}
	return b.Update(func(tx service.Tx) error {
		for _, kind := range []byte{'c', 't', 's'} {
			if err := tx.DeletePrefix([]byte{kind}); err != nil {
				return err
			}
		}
		return nil
	})
}

// engineService is the Engine on the service contract, with the default
// project its exports hold.
type engineService struct {
	*Engine
	project string
}

// Unwrap implements service.Wrapper: sandbox.Lookup[*auth.Engine] finds
// the engine.
func (s *engineService) Unwrap() any { return s.Engine }

// NewState implements service.TypedState: the state is a Snapshot.
func (s *engineService) NewState() any { return &Snapshot{} }

// Describe implements service.Describer.
func (s *engineService) Describe() string {
	return "Auth: every project's accounts (with their password hashes), tenants, IdP configs and pending out-of-band codes."
}

// exportDir is Auth's part of an export, as firebase-tools' Auth emulator
// lays it out.
const exportDir = "auth_export"

// accountsFile is auth_export/accounts.json: an
// identitytoolkit#DownloadAccountResponse of every account.
type accountsFile struct {
	Kind  string            `json:"kind"`
	Users []json.RawMessage `json:"users"`
}

// Export implements service.Exporter: auth_export/accounts.json and
// config.json for the default project (tenants are not exported).
func (s *engineService) Export(root string) (service.ExportEntry, error) {
	c := Call{Caller: identity.AdminIdentity(), Project: s.project}
	out := accountsFile{Kind: "identitytoolkit#DownloadAccountResponse", Users: []json.RawMessage{}}
	token := ""
	for {
		page, err := s.BatchGet(c, BatchGetRequest{MaxResults: "1000", NextPageToken: token})
		if err != nil {
			return service.ExportEntry{}, fmt.Errorf("auth export: %w", err)
		}
		for _, u := range page.Users {
			b, err := json.Marshal(u)
			if err != nil {
				return service.ExportEntry{}, err
			}
			out.Users = append(out.Users, b)
		}
		if page.NextPageToken == "" || len(page.Users) == 0 {
			break
		}
		token = page.NextPageToken
	}
	dir := filepath.Join(root, exportDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return service.ExportEntry{}, err
	}
	js, _ := json.MarshalIndent(out, "", "  ")
	if err := writeExportFile(filepath.Join(dir, "accounts.json"), js); err != nil {
		return service.ExportEntry{}, err
	}
	if err := writeExportFile(filepath.Join(dir, "config.json"), []byte(`{"signIn":{"allowDuplicateEmails":false}}`+"\n")); err != nil {
		return service.ExportEntry{}, err
	}
	return service.ExportEntry{Path: exportDir}, nil
}

// ImportState implements service.Importer: the accounts of
// auth_export/accounts.json are added to the default project after the
// other services' states are restored (overwriting accounts with the same
// uid).
func (s *engineService) ImportState(dir string) (json.RawMessage, func() error, error) {
	path := filepath.Join(dir, "accounts.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", service.ErrExport, err)
	}
	var f struct {
		Users []ImportUser `json:"users"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", service.ErrExport, path, err)
	}
	if len(f.Users) == 0 {
		return nil, nil, nil
	}
	finish := func() error {
		c := Call{Caller: identity.AdminIdentity(), Project: s.project}
		for start := 0; start < len(f.Users); start += 1000 {
			end := min(start+1000, len(f.Users))
			res, err := s.BatchCreate(c, BatchCreateRequest{Users: f.Users[start:end], AllowOverwrite: true})
			if err != nil {
				return fmt.Errorf("auth import: %w", err)
			}
			if len(res.Error) > 0 {
				return fmt.Errorf("auth import: account %d: %s", start+res.Error[0].Index, res.Error[0].Message)
			}
		}
		return nil
	}
	return nil, finish, nil
}

// writeExportFile writes an export file through a temporary name, so a
// reader never sees half of it.
func writeExportFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var (
	_ service.Wrapper    = (*engineService)(nil)
	_ service.TypedState = (*engineService)(nil)
	_ service.Exporter   = (*engineService)(nil)
	_ service.Importer   = (*engineService)(nil)
	_ service.Describer  = (*engineService)(nil)
)
