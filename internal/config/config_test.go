package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		files     map[string]string
		from      string
		want      Project
		wantError string
	}{
		{name: "nothing", want: Project{}},
		{
			name: "firebase.json in a parent with .firebaserc",
			files: map[string]string{
				"firebase.json": `{"firestore": {"rules": "fs.rules", "indexes": "ix.json"},
					"emulators": {"firestore": {"port": 8181, "host": "0.0.0.0"}, "auth": {"port": 9199}}}`,
				".firebaserc": `{"projects": {"default": "my-app"}}`,
			},
			from: "src/app",
			want: Project{Dir: ".", ID: "my-app", FirestoreRules: "fs.rules", FirestoreIndexes: "ix.json",
				FirestorePort: 8181, FirestoreHost: "0.0.0.0", AuthPort: 9199, Ports: map[string]int{"firestore": 8181, "auth": 9199}, Hosts: []string{"0.0.0.0"}},
		},
		{
			name:  "allowed origins",
			files: map[string]string{"firebase.json": `{"emulators": {"allowOrigins": ["http://192.168.1.20:5173", "*"], "auth": {"host": "devbox.lan"}}}`},
			want:  Project{Dir: ".", AuthHost: "devbox.lan", Ports: map[string]int{}, Hosts: []string{"devbox.lan"}, AllowOrigins: []string{"http://192.168.1.20:5173", "*"}},
		},
		{name: "allowed origins not a list", files: map[string]string{"firebase.json": `{"emulators": {"allowOrigins": "http://x"}}`}, wantError: "emulators.allowOrigins"},
		{
			name: "database and storage rules, every emulator's port",
			files: map[string]string{"firebase.json": `{"database": {"rules": "db.rules.json"}, "storage": [{"bucket": "b", "rules": "st.rules"}],
				"emulators": {"database": {"port": 9001}, "storage": {"port": 9198}, "ui": {"port": 4001}, "hub": {"port": 4401}, "singleProjectMode": true}}`},
			want: Project{Dir: ".", DatabaseRules: "db.rules.json", StorageRules: "st.rules",
				Ports: map[string]int{"database": 9001, "storage": 9198, "ui": 4001, "hub": 4401}},
		},
		{name: "a port out of range", files: map[string]string{"firebase.json": `{"emulators": {"database": {"port": 70000}}}`}, wantError: "emulators.database.port"},
		{
			name: "several databases: the default one",
			files: map[string]string{"firebase.json": `{"firestore": [
				{"database": "other", "rules": "other.rules"},
				{"database": "(default)", "rules": "main.rules"}]}`},
			want: Project{Dir: ".", FirestoreRules: "main.rules", Ports: map[string]int{}},
		},
		{name: ".firebaserc alone", files: map[string]string{".firebaserc": `{"projects": {"default": "p1"}}`}, want: Project{ID: "p1"}},
		{name: "malformed firebase.json", files: map[string]string{"firebase.json": `{`}, wantError: "firebase.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for name, content := range tc.files {
				write(t, filepath.Join(root, name), content)
			}
			from := filepath.Join(root, tc.from)
			os.MkdirAll(from, 0o755)
			got, err := Discover(from)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			abs := func(s string) string {
				if s == "" {
					return ""
				}
				return filepath.Join(root, s)
			}
			want.Dir, want.FirestoreRules, want.FirestoreIndexes = abs(want.Dir), abs(want.FirestoreRules), abs(want.FirestoreIndexes)
			want.DatabaseRules, want.StorageRules = abs(want.DatabaseRules), abs(want.StorageRules)
			if want.Dir == filepath.Join(root, ".") {
				want.Dir = root
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}
