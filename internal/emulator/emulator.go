// Package emulator starts the official Cloud Firestore emulator (Google's
// own engine, installed on the project machines as the Debian package
// google-cloud-cli-firestore-emulator) for differential tests, and gives
// firebase-tools the environment to run that same jar as its Firestore
// emulator (FirebaseToolsEnv). Tests that need it skip with a clear
// message when it is not installed.
package emulator

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/freeport"
	"github.com/pyric/pyric/internal/needs"
)

// Emulator is a running official Firestore emulator.
type Emulator struct {
	Host    string // host:port
	Project string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has ended
	log     *bytes.Buffer
	client  *http.Client
}

// Jar returns the emulator jar's path, or "" when it is not installed.
func Jar() string {
	if p := os.Getenv("PYRIC_FIRESTORE_EMULATOR_JAR"); p != "" {
		return p
	}
	candidates := []string{"/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar"}
	if out, err := exec.Command("dpkg", "-L", "google-cloud-cli-firestore-emulator").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasSuffix(l, "cloud-firestore-emulator.jar") {
				candidates = append([]string{l}, candidates...)
			}
		}
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}

var (
	sharedMu sync.Mutex
	shared   = map[string]*Emulator{}
)

// Start starts an emulator for the test (or returns the one already
// started by this test binary) and stops it when the binary's tests end
// via Stop in TestMain, or at process exit. It skips the test when Java or
// the emulator is missing.
func Start(t testing.TB) *Emulator {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if e := shared["default"]; e != nil {
		return e
	}
	e := launch(t)
	shared["default"] = e
	return e
}

// StartWith starts an emulator of the test's own with extra command-line
// flags (e.g. --seed_from_export=PATH, what firebase-tools passes for
// `emulators:start --import`) and stops it when the test ends.
func StartWith(t testing.TB, args ...string) *Emulator {
	t.Helper()
	e := launch(t, args...)
	t.Cleanup(e.Stop)
	return e
}

// launch starts an emulator process and waits until it serves.
func launch(t testing.TB, args ...string) *Emulator {
	t.Helper()
	jar := Jar()
	if jar == "" {
		needs.Missing(t, "official Firestore emulator not installed (Debian package google-cloud-cli-firestore-emulator)")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		needs.Missing(t, "java not found; the official Firestore emulator needs Java 17")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	e := &Emulator{Host: fmt.Sprintf("127.0.0.1:%d", port), Project: "pyric-oracle", log: &bytes.Buffer{},
		client: &http.Client{Timeout: 30 * time.Second}}
	e.cmd = exec.Command(java, append([]string{"-Duser.language=en", "-Xss4m", "-cp", jar,
		"com.google.cloud.datastore.emulator.firestore.CloudFirestore", "start",
		"--host=127.0.0.1", fmt.Sprintf("--port=%d", port)}, args...)...)
	e.cmd.Stdout, e.cmd.Stderr = e.log, e.log
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	e.exited = make(chan struct{})
	go func() { e.cmd.Wait(); close(e.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-e.exited:
			// Read after the process ended: no more writes to the log.
			t.Fatalf("emulator exited before serving:\n%s", e.log.String())
		default:
		}
		resp, err := e.client.Get("http://" + e.Host + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			e.Stop()
			t.Fatalf("emulator did not start within 60s:\n%s", e.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return e
}

// StopAll stops every emulator this binary started; call it from TestMain.
func StopAll() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for k, e := range shared {
		e.Stop()
		delete(shared, k)
	}
}

// Stop kills the emulator process.
func (e *Emulator) Stop() {
	if e.cmd != nil && e.cmd.Process != nil {
		e.cmd.Process.Kill()
		<-e.exited
	}
}

func freePort() (int, error) { return freeport.Run(1) }

// Response is an HTTP response from the emulator.
type Response struct {
	Status int
	Body   []byte
}

// ErrorMessage returns error.message of a Google JSON error body.
func (r Response) ErrorMessage() string {
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	json.Unmarshal(r.Body, &e)
	return e.Error.Message
}

// Do sends a request with an optional JSON body and bearer token.
func (e *Emulator) Do(ctx context.Context, method, path string, body any, bearer string) (Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Response{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+e.Host+path, rd)
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Body: b}, err
}

// SetRules loads a firestore.rules source. A compile error is returned as
// the emulator's message ("Error compiling rules:\nL1:53 ...").
func (e *Emulator) SetRules(ctx context.Context, src string) error {
	r, err := e.Do(ctx, "PUT", "/emulator/v1/projects/"+e.Project+":securityRules",
		map[string]any{"rules": map[string]any{"files": []any{map[string]any{"name": "firestore.rules", "content": src}}}}, "")
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return fmt.Errorf("%s", r.ErrorMessage())
	}
	return nil
}

// Clear deletes every document of the default database.
func (e *Emulator) Clear(ctx context.Context) error {
	_, err := e.Do(ctx, "DELETE", "/emulator/v1/projects/"+e.Project+"/databases/(default)/documents", nil, "")
	return err
}

// DocumentsURL is the REST prefix of the default database's documents.
func (e *Emulator) DocumentsURL() string {
	return "/v1/projects/" + e.Project + "/databases/(default)/documents"
}

// MockToken returns an unsigned JWT like the SDKs' mock user tokens.
func MockToken(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]any{"alg": "none", "type": "JWT"}) + "." + enc(claims) + "."
}
