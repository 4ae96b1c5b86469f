// Package origin checks pyric's origin and host policy from a real
// browser: a page of a foreign origin tries every attack a web site could
// make on a developer's running pyric and fails; the same page from a
// localhost dev server works; and every port refuses a foreign Host (DNS
// rebinding).
package origin

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

const project = "demo-origin"

const storageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} { allow read; }
  }
}
`

type call struct {
	method, url, body string
	owner             bool
}

func do(t *testing.T, c call) (int, string) {
	t.Helper()
	req, err := http.NewRequest(c.method, c.url, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.owner {
		req.Header.Set("Authorization", "Bearer owner")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// state is what an attack must not change, read without an Origin.
func state(t *testing.T, s *e2etest.Serve) map[string]string {
	out := map[string]string{}
	get := func(name string, c call) {
		st, body := do(t, c)
		out[name] = http.StatusText(st) + " " + body
	}
	get("rtdb data", call{"GET", "http://" + s.Database + "/.json?ns=" + project, "", true})
	get("rtdb rules", call{"GET", "http://" + s.Database + "/.settings/rules.json?ns=" + project, "", true})
	get("storage object", call{"GET", "http://" + s.Storage + "/v0/b/" + project + ".appspot.com/o/secret.txt?alt=media", "", true})
	// The rules in force: an unauthenticated upload stays denied.
	get("storage rules deny writes", call{"POST", "http://" + s.Storage + "/v0/b/" + project + ".appspot.com/o?name=planted.txt", "x", false})
	get("firestore document", call{"GET", "http://" + s.Firestore + "/v1/projects/" + project + "/databases/(default)/documents/secrets/s1", "", true})
	get("auth users", call{"GET", "http://" + s.Auth + "/identitytoolkit.googleapis.com/v1/projects/" + project + "/accounts:batchGet", "", true})
	get("ai script", call{"GET", "http://" + s.AI + "/emulator/v1/projects/" + project + "/ai/script", "", false})
	return out
}

func startSeeded(t *testing.T) *e2etest.Serve {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "storage.rules"), []byte(storageRules), 0o644); err != nil {
		t.Fatal(err)
	}
	s := e2etest.StartServe(t, dir, "--in-memory", "--project", project, "--no-capture", "--quiet")
	seed := []call{
		// Test-mode rules, as many apps start with: anyone may write.
		{"PUT", "http://" + s.Database + "/.settings/rules.json?ns=" + project, `{"rules": {".read": true, ".write": true}}`, true},
		{"PUT", "http://" + s.Database + "/.json?ns=" + project, `{"secret": "s3cr3t"}`, true},
		{"POST", "http://" + s.Storage + "/upload/storage/v1/b/" + project + ".appspot.com/o?uploadType=media&name=secret.txt", "top secret", true},
		{"PATCH", "http://" + s.Firestore + "/v1/projects/" + project + "/databases/(default)/documents/secrets/s1", `{"fields": {"v": {"stringValue": "s3cr3t"}}}`, true},
		{"POST", "http://" + s.Auth + "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", `{"email": "a@example.com", "password": "secret123"}`, false},
		{"PUT", "http://" + s.AI + "/emulator/v1/projects/" + project + "/ai/script", `[{"text": "GOOD"}]`, false},
	}
	for _, c := range seed {
		if st, body := do(t, c); st != 200 {
			t.Fatalf("seed %s %s: %d %s", c.method, c.url, st, body)
		}
	}
	return s
}

func TestForeignPageInChromium(t *testing.T) {
	bin := e2etest.Chromium(t)
	s := startSeeded(t)
	before := state(t, s)
	if !strings.Contains(before["rtdb data"], "s3cr3t") || !strings.Contains(before["storage object"], "top secret") ||
		!strings.HasPrefix(before["storage rules deny writes"], "Forbidden") || !strings.Contains(before["auth users"], "a@example.com") {
		t.Fatalf("seeded state: %v", before)
	}
	dir, _ := os.Getwd()
	steps := e2etest.RunSteps(t, 2*time.Minute, dir, "attacks.cjs",
		"FS="+s.Firestore, "AUTH="+s.Auth, "DB="+s.Database, "STORAGE="+s.Storage, "MESSAGING="+s.Messaging, "AI="+s.AI,
		"STUDIO="+strings.TrimPrefix(s.Studio, "http://"), "HUB="+s.Hub, "PROJECT="+project, "CHROMIUM="+bin)
	seen := 0
	for _, st := range steps {
		var got any
		_ = json.Unmarshal(st.Got, &got)
		m, _ := got.(map[string]any)
		status, _ := m["status"].(float64)
		body, _ := m["body"].(string)
		switch {
		case !st.OK:
			t.Errorf("%s: %s", st.Step, st.Error)
		case strings.HasPrefix(st.Step, "foreign: "):
			seen++
			// Nothing a foreign page reads gets through; no-cors requests go
			// out but change nothing (checked below).
			if got != "blocked" && got != "sent" {
				t.Errorf("%s: the page read %s", st.Step, st.Got)
			}
		case strings.HasPrefix(st.Step, "localhost: "):
			seen++
			if status != 200 {
				t.Errorf("%s from a localhost dev server: %s", st.Step, st.Got)
			}
			if st.Step == "localhost: rtdb read everything" && !strings.Contains(body, "s3cr3t") ||
				st.Step == "localhost: storage download" && body != "top secret" ||
				st.Step == "localhost: auth list users" && !strings.Contains(body, "a@example.com") {
				t.Errorf("%s: %s", st.Step, body)
			}
		case st.Step == "rebinding: rtdb page":
			seen++
			if strings.Contains(string(st.Got), "s3cr3t") || !strings.Contains(string(st.Got), "DNS rebinding") {
				t.Errorf("a rebound page of the Realtime Database port showed %s", st.Got)
			}
		}
	}
	if seen != 22+7+1 {
		t.Errorf("%d steps checked, want 30", seen)
	}
	after := state(t, s)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed by the foreign page:\nbefore %s\nafter  %s", k, v, after[k])
		}
	}
}

// TestDNSRebindingEveryPort: a request naming a foreign Host (a page whose
// name was rebound to 127.0.0.1 sends its own) is refused on every port,
// whatever it asks; the same request with the port's address passes.
func TestDNSRebindingEveryPort(t *testing.T) {
	s := startSeeded(t)
	ports := map[string]string{
		"firestore": "http://" + s.Firestore + "/v1/projects/" + project + "/databases/(default)/documents/secrets/s1",
		"auth":      "http://" + s.Auth + "/identitytoolkit.googleapis.com/v1/projects/" + project + "/accounts:batchGet",
		"database":  "http://" + s.Database + "/.json?ns=" + project,
		"storage":   "http://" + s.Storage + "/v0/b/" + project + ".appspot.com/o/secret.txt?alt=media",
		"messaging": "http://" + s.Messaging + "/emulator/v1/projects/" + project + "/messages",
		"ai":        "http://" + s.AI + "/emulator/v1/projects/" + project + "/ai/script",
		"studio":    s.Studio + "/api/services",
		"hub":       "http://" + s.Hub + "/emulators",
		"mcp":       s.Studio + "/mcp",
	}
	for name, url := range ports {
		for _, host := range []string{"", "rebind.evil.example", "localhost.evil.example:80"} {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer owner")
			if host != "" {
				req.Host = host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refused := resp.StatusCode == 403 && strings.Contains(string(b), "refusing Host")
			if host == "" && refused || host != "" && !refused {
				t.Errorf("%s with Host %q: %d %.200s", name, host, resp.StatusCode, b)
			}
		}
	}
}
