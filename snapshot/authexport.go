package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
)

const authDir = "auth_export"

// accountsFile is auth_export/accounts.json, firebase-tools' Auth emulator
// layout: an identitytoolkit#DownloadAccountResponse of every account.
type accountsFile struct {
	Kind  string            `json:"kind"`
	Users []json.RawMessage `json:"users"`
}

// exportAuth writes auth_export/accounts.json and config.json for the
// default project (tenants are not exported).
func exportAuth(sb *sandbox.Sandbox, dir string) error {
	c := auth.Call{Caller: identity.AdminIdentity(), Project: sb.Database().Project}
	out := accountsFile{Kind: "identitytoolkit#DownloadAccountResponse", Users: []json.RawMessage{}}
	token := ""
	for {
		page, err := sb.Auth().BatchGet(c, auth.BatchGetRequest{MaxResults: "1000", NextPageToken: token})
		if err != nil {
			return fmt.Errorf("auth export: %w", err)
		}
		for _, u := range page.Users {
			b, err := json.Marshal(u)
			if err != nil {
				return err
			}
			out.Users = append(out.Users, b)
		}
		if page.NextPageToken == "" || len(page.Users) == 0 {
			break
		}
		token = page.NextPageToken
	}
	if err := os.MkdirAll(filepath.Join(dir, authDir), 0o755); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(out, "", "  ")
	if err := writeAtomic(filepath.Join(dir, authDir, "accounts.json"), js); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, authDir, "config.json"), []byte(`{"signIn":{"allowDuplicateEmails":false}}`+"\n"))
}

// importAuth loads auth_export/accounts.json into the default project
// (overwriting accounts with the same uid).
func importAuth(sb *sandbox.Sandbox, dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "accounts.json"))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrExport, err)
	}
	var f struct {
		Users []auth.ImportUser `json:"users"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrExport, filepath.Join(dir, "accounts.json"), err)
	}
	if len(f.Users) == 0 {
		return nil
	}
	c := auth.Call{Caller: identity.AdminIdentity(), Project: sb.Database().Project}
	for start := 0; start < len(f.Users); start += 1000 {
		end := min(start+1000, len(f.Users))
		res, err := sb.Auth().BatchCreate(c, auth.BatchCreateRequest{Users: f.Users[start:end], AllowOverwrite: true})
		if err != nil {
			return fmt.Errorf("auth import: %w", err)
		}
		if len(res.Error) > 0 {
			return fmt.Errorf("auth import: account %d: %s", start+res.Error[0].Index, res.Error[0].Message)
		}
	}
	return nil
}
