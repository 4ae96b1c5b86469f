// Package hostinge2e drives an app served by pyric's Hosting in a real
// browser: its page loads the Firebase SDK and /__/firebase/init.js from
// Hosting, reads /__/firebase/init.json, signs in with the Auth emulator
// and writes Firestore through pyric.
package hostinge2e

import (
	"context"
	"encoding/json"
	"github.com/chromedp/chromedp"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

// copyApp copies testdata/app into a temporary project, naming the
// pinned SDK's version in index.html and linking node_modules (where
// Hosting finds its local copy of the SDK).
func copyApp(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2etest.JSDir(), "node_modules", "firebase", "package.json"))
	if err != nil {
		e2etest.Missing(t, "e2e/js/node_modules/firebase is absent (run `npm ci` in e2e/js)")
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join("testdata", "app")
	err = filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data = []byte(strings.ReplaceAll(string(data), "{{VERSION}}", pkg.Version))
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(e2etest.JSDir(), "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowserApp serves testdata/app with `pyric serve` and lets its own
// code run in Chromium: a deep link is rewritten to index.html, the SDK
// comes from Hosting's local copy, init.js points it at pyric's Auth and
// Firestore, the rules admit the owner's write and deny another's, and the
// note is in Firestore afterwards.
func TestBrowserApp(t *testing.T) {
	chromium := e2etest.Chromium(t)
	dir := copyApp(t)
	srv := e2etest.StartServe(t, dir, "--in-memory", "--no-capture")
	if srv.Hosting == "" {
		t.Fatalf("pyric serve started no Hosting site:\n%s", srv.Stderr())
	}
	steps := e2etest.RunSteps(t, 3*time.Minute, e2etest.Root()+"/e2e/hosting", "browser.cjs",
		"HOSTING_URL=http://"+srv.Hosting, "CHROMIUM="+chromium)
	got := map[string]json.RawMessage{}
	for _, s := range steps {
		if !s.OK {
			t.Fatalf("step %q failed: %s", s.Step, s.Error)
		}
		got[s.Step] = s.Got
	}
	var open struct {
		Status int
		Title  string
		Errors []string
	}
	json.Unmarshal(got["open a deep link (rewritten to index.html)"], &open)
	if open.Status != 200 || open.Title != "notes" || len(open.Errors) != 0 {
		t.Errorf("opening the app: %+v", open)
	}
	var saved struct {
		ProjectID, AppProject, UID, Text, Denied string
	}
	json.Unmarshal(got["sign in and write through the app"], &saved)
	if saved.ProjectID != "demo-hosting" || saved.AppProject != "demo-hosting" || saved.UID == "" ||
		saved.Text != "hello from hosting" || saved.Denied != "permission-denied" {
		t.Fatalf("the app's write: %+v", saved)
	}
	// The note is in pyric's Firestore (read as admin over REST).
	req, _ := http.NewRequest("GET", "http://"+srv.Firestore+"/v1/projects/demo-hosting/databases/(default)/documents/notes/"+saved.UID, nil)
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Fields map[string]struct {
			StringValue string `json:"stringValue"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	if resp.StatusCode != 200 || doc.Fields["text"].StringValue != "hello from hosting" || doc.Fields["uid"].StringValue != saved.UID {
		t.Errorf("the note in Firestore: %d %+v", resp.StatusCode, doc)
	}

	// The Studio's Hosting page lists the site and the requests it
	// answered, the deep link with the rewrite that served it.
	if srv.Studio == "" {
		t.Fatalf("pyric serve started no Studio:\n%s", srv.Stderr())
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-background-networking", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	bctx, cancelC := context.WithTimeout(bctx, 60*time.Second)
	defer cancelC()
	var siteURL, answeredBy string
	err = chromedp.Run(bctx,
		chromedp.Navigate(srv.Studio+"/hosting"),
		chromedp.WaitVisible(`nav a[href="/hosting"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`table[aria-label="sites"] tr[data-site] a`, chromedp.ByQuery),
		chromedp.Text(`table[aria-label="sites"] tr[data-site] a`, &siteURL, chromedp.ByQuery),
		chromedp.WaitVisible(`table[aria-label="requests"] tr[data-path="/notes/today"]`, chromedp.ByQuery),
		chromedp.Text(`table[aria-label="requests"] tr[data-path="/notes/today"] td:nth-child(5)`, &answeredBy, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("the Studio's Hosting page: %v", err)
	}
	if siteURL != "http://"+srv.Hosting || !strings.Contains(answeredBy, "rewrite") {
		t.Errorf("the Studio's Hosting page shows site %q and the deep link answered by %q, want http://%s and a rewrite", siteURL, answeredBy, srv.Hosting)
	}

	// A page whose host name resolves to this machine (DNS rebinding)
	// cannot read the site through it: the port's host policy.
	rebound, _ := http.NewRequest("GET", "http://"+srv.Hosting+"/notes/today", nil)
	rebound.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(rebound); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a rebinding Host on the Hosting port answered %d, want 403", resp.StatusCode)
		}
	}
}
