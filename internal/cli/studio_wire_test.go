package cli

import (
	"encoding/json"
	"github.com/pyric/pyric/internal/await"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeStudioRulesStatus: `pyric serve` gives the Studio every
// service's rules: Home's status lists Firestore, Storage and the
// Realtime Database, a storage.rules that does not compile with its
// file:line:col and source line, and the fixed file once it is reloaded.
func TestServeStudioRulesStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	storagePath, dbPath := filepath.Join(dir, "storage.rules"), filepath.Join(dir, "database.rules.json")
	os.WriteFile(storagePath, []byte("rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o { allow read: if ; }\n}\n"), 0o644)
	os.WriteFile(dbPath, []byte(`{"rules": {".read": "auth != null"}}`), 0o644)
	s := startServe(t, "--in-memory", "--storage-rules", storagePath, "--database-rules", dbPath)
	type status struct {
		Service, State, File string
		Errors               []struct{ Where, SourceLine string }
	}
	statuses := func() map[string]status {
		resp, err := http.Get(s.Studio + "/api/services")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct{ Rules []status }
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		out := map[string]status{}
		for _, r := range got.Rules {
			out[r.Service] = r
		}
		return out
	}
	got := statuses()
	if _, ok := got["firestore"]; !ok || len(got) != 3 {
		t.Fatalf("rules status of %d services, want firestore, storage and database: %+v", len(got), got)
	}
	if db := got["database"]; db.State != "live" {
		t.Errorf("database rules: %+v", db)
	}
	st := got["storage"]
	if st.State != "error" || len(st.Errors) == 0 || !strings.HasPrefix(st.Errors[0].Where, storagePath+":3:") ||
		!strings.Contains(st.Errors[0].SourceLine, "allow read: if ;") {
		t.Fatalf("storage rules: %+v", st)
	}
	os.WriteFile(storagePath, []byte("rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o { allow read: if true; }\n}\n"), 0o644)
	if !await.Poll(15*time.Second, func() bool { st = statuses()["storage"]; return st.State == "live" }) {
		t.Fatalf("the fixed storage.rules never became live: %+v", st)
	}
}
