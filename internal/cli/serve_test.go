package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/server"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls the buffer until it contains want.
func (s *syncBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	if !await.Poll(10*time.Second, func() bool { return strings.Contains(s.String(), want) }) {
		t.Fatalf("stderr never contained %q:\n%s", want, s.String())
	}
}

type served struct {
	Project   string `json:"project"`
	Firestore string `json:"firestore"`
	Auth      string `json:"auth"`
	Storage   string `json:"storage"`
	AI        string `json:"ai"`
	Messaging string `json:"messaging"`
	Studio    string `json:"studio"`
	Hub       string `json:"hub"`
	Functions string `json:"functions"`
	stderr    *syncBuffer
	stop      func() int
}

// startServe runs `pyric serve --json --firestore-port 0 --auth-port 0
// args...` in-process and waits for its JSON line.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		code := Run(ctx, append(append([]string{"serve", "--json"}, e2etest.FreePortFlags()...), args...),
			Stdio{Out: pw, Err: stderr})
		pw.Close()
		done <- code
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, pr)
	}()
	var s served
	select {
	case line, ok := <-lines:
		if !ok {
			cancel()
			t.Fatalf("serve exited without its JSON line (exit %d):\n%s", <-done, stderr.String())
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("JSON line %q: %v", line, err)
		}
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("no JSON line within 20s:\n%s", stderr.String())
	}
	var once sync.Once
	code := 0
	s.stderr = stderr
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(15 * time.Second):
				t.Errorf("serve did not stop within 15s")
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	if s.Functions != "" && !await.Poll(60*time.Second, func() bool { return e2etest.FunctionsLoaded(s.Functions) }) {
		t.Fatalf("the functions did not load within 60 s:\n%s", stderr.String())
	}
	return &s
}

type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if b == "" {
		return nil, nil
	}
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

func goClient(t *testing.T, addr, project, token string) *firestore.Client {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(bearer(token)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := firestore.NewClient(context.Background(), project, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); conn.Close() })
	return c
}

func authPost(t *testing.T, addr, method string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post("http://"+addr+"/identitytoolkit.googleapis.com/v1/accounts:"+method+"?key=fake", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v", method, resp.StatusCode, out)
	}
	return out
}

const openRules = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{doc=**} {\n      allow read, write: if true;\n    }\n  }\n}\n"

func TestServeJSONAndShutdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rules := filepath.Join(dir, "firestore.rules")
	os.WriteFile(rules, []byte(openRules), 0o644)
	s := startServe(t, "--project", "demo-serve", "--rules", rules, "--in-memory")
	if s.Project != "demo-serve" || !strings.HasPrefix(s.Firestore, "127.0.0.1:") || !strings.HasPrefix(s.Auth, "127.0.0.1:") {
		t.Fatalf("JSON line: %+v", s)
	}
	ctx := context.Background()
	// An unauthenticated client is allowed by the open rules.
	c := goClient(t, s.Firestore, "demo-serve", "")
	if _, err := c.Doc("a/b").Set(ctx, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	// Auth answers on its own port.
	authPost(t, s.Auth, "signUp", map[string]any{"email": "a@example.com", "password": "secret1", "returnSecureToken": true})
	// An open listener must not hold the shutdown.
	it := c.Doc("a/b").Snapshots(ctx)
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if code := s.stop(); code != 0 {
		t.Errorf("exit code %d:\n%s", code, s.stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	for _, want := range []string{"Firestore  " + s.Firestore, "Auth       " + s.Auth, "in memory", "shutting down"} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, s.stderr)
		}
	}
}

// pyric serve gives the runtime a P beyond the CPUs for light requests
// (server.SpareProcessor), unless the user set GOMAXPROCS.
func TestServeSparesAProcessor(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS set by the user: serve leaves it")
	}
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	runtime.GOMAXPROCS(server.Processors())
	startServe(t, "--project", "demo-serve", "--in-memory")
	if got := runtime.GOMAXPROCS(0); got != server.Processors()+1 {
		t.Fatalf("GOMAXPROCS %d while serving, want %d (the CPUs + 1)", got, server.Processors()+1)
	}
}

func TestServeWithoutRulesDeniesClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, "--rules", filepath.Join(dir, "firestore.rules"), "--in-memory")
	if !strings.Contains(s.stderr.String(), "EVERY CLIENT REQUEST IS DENIED") {
		t.Errorf("no loud warning:\n%s", s.stderr)
	}
	ctx := context.Background()
	_, err := goClient(t, s.Firestore, s.Project, "").Doc("a/b").Set(ctx, map[string]any{"x": 1})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("unauthenticated write: %v", err)
	}
	if _, err := goClient(t, s.Firestore, s.Project, "owner").Doc("a/b").Set(ctx, map[string]any{"x": 1}); err != nil {
		t.Errorf("owner write: %v", err)
	}
	// The file appears: it is loaded.
	os.WriteFile(filepath.Join(dir, "firestore.rules"), []byte(openRules), 0o644)
	// err is the last read's error, shown if the file is never picked up.
	if !await.Poll(10*time.Second, func() bool {
		_, err = goClient(t, s.Firestore, s.Project, "").Doc("a/b").Get(ctx)
		return err == nil
	}) {
		t.Fatalf("rules file never picked up: %v\n%s", err, s.stderr)
	}
}

func TestServeRulesHotReloadKeepsLastGood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rules := filepath.Join(dir, "firestore.rules")
	os.WriteFile(rules, []byte(openRules), 0o644)
	s := startServe(t, "--rules", rules, "--in-memory")
	ctx := context.Background()
	c := goClient(t, s.Firestore, s.Project, "")
	if _, err := c.Doc("a/b").Set(ctx, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	// Broken rules: reported with file:line:col, the open rules stay live.
	os.WriteFile(rules, []byte("service cloud.firestore {\n  match /a { allow read: if ; }\n}\n"), 0o644)
	s.stderr.waitFor(t, rules+":2:")
	s.stderr.waitFor(t, "the last good rules stay live")
	if _, err := c.Doc("a/b").Set(ctx, map[string]any{"x": 2}); err != nil {
		t.Errorf("write under the last good rules: %v", err)
	}
	// Rules that deny writes: reloaded, writes denied naming the rule.
	deny := strings.Replace(openRules, "allow read, write: if true;", "allow read: if true;\n      allow write: if false;", 1)
	os.WriteFile(rules, []byte(deny), 0o644)
	s.stderr.waitFor(t, "reloaded "+rules)
	_, err := c.Doc("a/b").Set(ctx, map[string]any{"x": 3})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "@ L6") {
		t.Errorf("write after reload: %v", err)
	}
}

// rulesAt is the default rules files in dir, Firestore's being fs.
func rulesAt(dir, fs string) map[string]string {
	return map[string]string{"firestore": filepath.Join(dir, fs), "storage": filepath.Join(dir, "storage.rules"), "database": filepath.Join(dir, "database.rules.json")}
}

// ports is every service's default port with some overridden.
func ports(over map[string]int) map[string]int {
	out := map[string]int{}
	for _, s := range backend.Catalog() {
		out[s.Service] = s.DefaultPort
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func TestParseServeDefaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"firestore": {"rules": "rules/fs.rules", "indexes": "ix.json"},
		"emulators": {"firestore": {"port": 8181}, "auth": {"port": 9199}}}`), 0o644)
	os.WriteFile(filepath.Join(dir, ".firebaserc"), []byte(`{"projects": {"default": "from-rc"}}`), 0o644)
	sub := filepath.Join(dir, "web")
	os.MkdirAll(sub, 0o755)
	env := func(k string) string { return map[string]string{"GCLOUD_PROJECT": "from-env"}[k] }
	for _, tc := range []struct {
		name string
		cwd  string
		args []string
		want serveOptions
	}{
		{"firebase.json and .firebaserc from a subdirectory", sub, nil, serveOptions{host: "127.0.0.1", project: "from-rc",
			ports: ports(map[string]int{"firestore": 8181, "auth": 9199}), rulesPaths: rulesAt(dir, "rules/fs.rules"), dataDir: filepath.Join(dir, ".pyric"),
			indexesPath: filepath.Join(dir, "ix.json")}},
		{"flags win", sub, []string{"--project", "p", "--firestore-port", "0", "--auth-port", "7", "--rules", "x.rules", "--in-memory", "--host", "0.0.0.0", "--json", "--enforce-indexes"},
			serveOptions{host: "0.0.0.0", project: "p", ports: ports(map[string]int{"firestore": 0, "auth": 7}), rulesPaths: map[string]string{"firestore": filepath.Join(sub, "x.rules"), "storage": filepath.Join(dir, "storage.rules"), "database": filepath.Join(dir, "database.rules.json")},
				indexesPath: filepath.Join(dir, "ix.json"), enforceIndexes: true, json: true}},
		{"no configuration: GCLOUD_PROJECT, emulator ports", t.TempDir(), []string{"--data-dir", "/tmp/d"}, serveOptions{host: "127.0.0.1",
			project: "from-env", ports: ports(nil), dataDir: "/tmp/d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			got, ok := parseServe(tc.args, Stdio{Err: &errb}, env, tc.cwd)
			if !ok {
				t.Fatalf("parse failed: %s", errb.String())
			}
			want := tc.want
			if want.sync == "" {
				want.sync = sandbox.SyncBatch
			}
			if want.studioPort == 0 && want.hubPort == 0 {
				want.studioPort, want.hubPort = defaultStudioPort, defaultHubPort
			}
			if want.dataDir != "" {
				want.capture = filepath.Join(want.dataDir, "last-session.json")
			}
			if want.rulesPaths == nil {
				want.rulesPaths = rulesAt(tc.cwd, "firestore.rules")
			}
			if want.indexesPath == "" {
				want.indexesPath = filepath.Join(tc.cwd, "firestore.indexes.json")
			}
			if got.policy == nil || len(got.policy.Origins) != 0 || got.policy.Hosts[0] != want.host {
				t.Errorf("policy %+v: want no origins beyond loopback and the host %q", got.policy, want.host)
			}
			got.policy = nil
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
	noEnv := func(string) string { return "" }
	if got, _ := parseServe(nil, Stdio{Err: io.Discard}, noEnv, t.TempDir()); got.project != "demo-pyric" {
		t.Errorf("default project %q", got.project)
	}
}

func TestServePortInUse(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--in-memory")
	var errb syncBuffer
	_, port, _ := strings.Cut(s.Firestore, ":")
	code := Run(context.Background(), append(append([]string{"serve", "--in-memory"}, e2etest.FreePortFlags()...), "--firestore-port", port), Stdio{Out: io.Discard, Err: &errb})
	if code != exitError || !strings.Contains(errb.String(), "--firestore-port") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// TestServeSurvivesKill9 kills a real `pyric serve` with SIGKILL right
// after acknowledged writes (Firestore through the Go client, Auth through
// REST) and checks a restart on the same data directory has them all.
func TestServeSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the pyric binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "pyric")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/pyric")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := t.TempDir()
	start := func() (*exec.Cmd, served) {
		cmd := exec.Command(bin, append(append([]string{"serve", "--json"}, e2etest.FreePortFlags()...), "--data-dir", data,
			"--project", "demo-kill", "--rules", filepath.Join(data, "none.rules"))...)
		out, _ := cmd.StdoutPipe()
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(out)
			sc.Scan()
			line <- sc.Text()
			io.Copy(io.Discard, out)
		}()
		var s served
		select {
		case l := <-line:
			if err := json.Unmarshal([]byte(l), &s); err != nil {
				cmd.Process.Kill()
				t.Fatalf("JSON line %q: %v\n%s", l, err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("no JSON line:\n%s", stderr.String())
		}
		return cmd, s
	}
	ctx := context.Background()
	cmd, s := start()
	c := goClient(t, s.Firestore, "demo-kill", "owner")
	const n = 50
	for i := range n {
		if _, err := c.Doc(fmt.Sprintf("docs/d%03d", i)).Set(ctx, map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Doc("docs/d000").Update(ctx, []firestore.Update{{Path: "n", Value: firestore.Increment(5)}}); err != nil {
		t.Fatal(err)
	}
	up := authPost(t, s.Auth, "signUp", map[string]any{"email": "kill@example.com", "password": "secret1", "returnSecureToken": true})
	cmd.Process.Kill() // SIGKILL: no shutdown path runs
	cmd.Wait()

	cmd2, s2 := start()
	exited := false
	defer func() {
		if !exited {
			cmd2.Process.Kill()
			cmd2.Wait()
		}
	}()
	c2 := goClient(t, s2.Firestore, "demo-kill", "owner")
	docs, err := c2.Collection("docs").Documents(ctx).GetAll()
	if err != nil || len(docs) != n {
		t.Fatalf("after kill -9: %d docs, %v", len(docs), err)
	}
	if v := docs[0].Data()["n"]; v != int64(5) {
		t.Errorf("increment lost: n = %v", v)
	}
	in := authPost(t, s2.Auth, "signInWithPassword", map[string]any{"email": "kill@example.com", "password": "secret1", "returnSecureToken": true})
	if in["localId"] != up["localId"] {
		t.Errorf("auth user after kill -9: %v, want %v", in["localId"], up["localId"])
	}

	// SIGTERM with a listener open: a clean exit, quickly.
	it := c2.Collection("docs").Snapshots(ctx)
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	cmd2.Process.Signal(syscall.SIGTERM)
	err = cmd2.Wait()
	exited = true
	if err != nil || time.Since(begin) > 5*time.Second {
		t.Errorf("SIGTERM: exit %v after %v", err, time.Since(begin))
	}
}

func TestServeEnforcesIndexes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"firestore": {"indexes": "ix.json"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "ix.json"), []byte(`{"indexes": [{"collectionGroup": "c", "queryScope": "COLLECTION",
		"fields": [{"fieldPath": "a", "order": "ASCENDING"}, {"fieldPath": "b", "order": "ASCENDING"}]}]}`), 0o644)
	o, ok := parseServe(append(e2etest.FreePortFlags(), "--enforce-indexes", "--in-memory", "--json"),
		Stdio{Err: io.Discard}, func(string) string { return "" }, dir)
	if !ok {
		t.Fatal("parse")
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, Stdio{Out: pw, Err: io.Discard}); pw.Close() }()
	defer func() { cancel(); <-done }()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	var s served
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	c := goClient(t, s.Firestore, s.Project, "owner")
	if _, err := c.Collection("c").Where("a", "==", 1).OrderBy("b", firestore.Asc).Documents(context.Background()).GetAll(); err != nil {
		t.Errorf("declared index: %v", err)
	}
	_, err := c.Collection("c").Where("a", "==", 1).OrderBy("z", firestore.Asc).Documents(context.Background()).GetAll()
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("undeclared index: %v", err)
	}
}

// TestServeEveryService: one `pyric serve` answers on every service's
// port, loads an AI script from --ai-script, and its banner names each
// service with the variable clients set.
func TestServeEveryService(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "ai.json")
	os.WriteFile(script, []byte(`[{"text": "scripted hello"}]`), 0o644)
	fixture := filepath.Join(dir, "session.json")
	s := startServe(t, "--in-memory", "--project", "demo-all", "--ai-script", script, "--capture", fixture)
	if s.Storage == "" || s.AI == "" || s.Messaging == "" || !strings.HasPrefix(s.Studio, "http://127.0.0.1:") || s.Hub == "" {
		t.Fatalf("--json lacks a service: %+v", s)
	}
	// The hub lists every service; the Studio's event API and /mcp answer.
	for _, u := range []string{"http://" + s.Hub + "/emulators", s.Studio + "/api/events", s.Studio + "/api/services"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", u, resp.StatusCode, body)
		}
		if strings.HasSuffix(u, "/emulators") && (!strings.Contains(string(body), `"firestore"`) || !strings.Contains(string(body), `"database"`)) {
			t.Errorf("hub: %s", body)
		}
	}
	req, _ := http.NewRequest("POST", s.Studio+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "serverInfo") {
		t.Errorf("/mcp initialize: %d %s", resp.StatusCode, body)
	}
	if _, err := os.Stat(fixture); err != nil {
		t.Errorf("the session is not captured: %v", err)
	}
	resp, err = http.Post("http://"+s.AI+"/v1beta/models/gemini-2.5-flash:generateContent?key=k", "application/json",
		strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "scripted hello") {
		t.Fatalf("AI answer: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{"STORAGE_EMULATOR_HOST=http://" + s.Storage, "FIREBASE_STORAGE_EMULATOR_HOST=" + s.Storage,
		"PYRIC_AI_BASE_URL=http://" + s.AI, "PYRIC_MESSAGING_URL=http://" + s.Messaging, "NO STORAGE RULES ARE LOADED"} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, s.stderr.String())
		}
	}
}

func TestParseServeSync(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	o, ok := parseServe([]string{"--sync", "always"}, Stdio{Err: &errb}, func(string) string { return "" }, t.TempDir())
	if !ok || o.sync != sandbox.SyncAlways {
		t.Fatalf("--sync always: %+v %s", o, errb.String())
	}
	if _, ok := parseServe([]string{"--sync", "sometimes"}, Stdio{Err: &errb}, func(string) string { return "" }, t.TempDir()); ok || !strings.Contains(errb.String(), "--sync") {
		t.Fatalf("--sync sometimes accepted: %s", errb.String())
	}
}
