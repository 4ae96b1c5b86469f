// Package integration runs the official Go client's own integration suite
// (cloud.google.com/go/firestore's integration_test.go, TestIntegration_DefaultDB)
// in emulator mode against an in-process pyric, as wire-protocols.md §10.1
// describes for the official emulator. The suite is compiled from the module
// cache at test time (nothing is copied into the repository) and needs no
// network.
//
// It takes about a minute on a cold build cache, so it runs only when
// PYRIC_GO_INTEGRATION=1 is set:
//
//	PYRIC_GO_INTEGRATION=1 go test -race -v -run TestGoClientIntegrationSuite ./e2e/integration/
package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/server/firestore/fstest"

	"github.com/pyric/pyric/internal/e2etest"
)

// clientModule is the client release whose suite runs; go.mod pins it.
const clientModule = "cloud.google.com/go/firestore@v1.29.2"

// expectedFailures are the suite's tests that no emulator can pass, with why.
var expectedFailures = map[string]string{
	// It expects option.WithCredentialsFile("non existent filepath") to
	// fail, but in emulator mode the client ignores every credentials
	// option: this fails against the official emulator too.
	"TestIntegration_DefaultDB/NewClientWithDatabase": "emulator mode ignores credentials options",
}

// expectedSkips are skipped by the suite itself in emulator mode.
var expectedSkips = []string{
	"TestIntegration_DefaultDB/GetAll_WithRunOptions",
	"TestIntegration_DefaultDB/Query_WithRunOptions",
	"TestIntegration_DefaultDB/RunTransaction_WithRunOptions",
	"TestIntegration_DefaultDB/AggregationQueries_WithRunOptions",
}

// indexes are the composite indexes the suite needs on its
// "indexed_collection" collection group (its production project declares
// them; QueryUnary's equality+inequality queries need them). With
// enforcement on, the suite's one query on an unindexed collection must
// fail with FAILED_PRECONDITION (QueryDocuments).
const indexes = `{
  "indexes": [
    {"collectionGroup": "indexed_collection", "queryScope": "COLLECTION", "fields": [
      {"fieldPath": "x", "order": "ASCENDING"}, {"fieldPath": "testNull", "order": "ASCENDING"}, {"fieldPath": "q", "order": "ASCENDING"}]},
    {"collectionGroup": "indexed_collection", "queryScope": "COLLECTION", "fields": [
      {"fieldPath": "x", "order": "ASCENDING"}, {"fieldPath": "testNaN", "order": "ASCENDING"}, {"fieldPath": "q", "order": "ASCENDING"}]}
  ]
}`

func TestGoClientIntegrationSuite(t *testing.T) {
	if os.Getenv("PYRIC_GO_INTEGRATION") != "1" {
		t.Skip("set PYRIC_GO_INTEGRATION=1 to run the Go client's integration suite (about a minute)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		e2etest.Missing(t, "go command not found")
	}
	modDir := moduleDir(t, goBin)
	work := t.TempDir()
	bin := filepath.Join(work, "fsint.test")
	build := exec.Command(goBin, "test", "-c", "-o", bin, ".")
	build.Dir = modDir
	// The module cache holds the client's sources and every dependency the
	// pyric module already needs: build offline.
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the suite in %s: %v\n%s", modDir, err, out)
	}

	cfg, err := firestore.ParseIndexConfig([]byte(indexes))
	if err != nil {
		t.Fatal(err)
	}
	srv := fstest.Start(t, fstest.Options{Project: "demo-int", Indexes: cfg})
	key := writeFakeKey(t, work)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, bin, "-test.run", "^TestIntegration_DefaultDB$", "-test.v", "-test.count=1", "-test.timeout=9m")
	run.Dir = modDir
	run.Env = append(os.Environ(),
		"GCLOUD_TESTS_GOLANG_FIRESTORE_PROJECT_ID=demo-int",
		"GCLOUD_TESTS_GOLANG_FIRESTORE_KEY="+key,
		"FIRESTORE_EMULATOR_HOST="+srv.Addr)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	start := time.Now()
	runErr := run.Run()
	res := parse(out.String())
	t.Logf("suite ran in %v: %d PASS, %d FAIL, %d SKIP (top-level subtests of TestIntegration_DefaultDB)",
		time.Since(start).Round(time.Millisecond), len(res.pass), len(res.fail), len(res.skip))
	for _, n := range res.fail {
		if why, ok := expectedFailures[n]; ok {
			t.Logf("expected failure %s (%s)", n, why)
			continue
		}
		t.Errorf("FAIL %s", n)
	}
	for _, n := range expectedSkips {
		if !contains(res.skip, n) {
			t.Errorf("%s: not skipped", n)
		}
	}
	if len(res.pass) < 47 {
		t.Errorf("%d tests passed; want at least 47 (the official emulator's 43, PartitionQuery's 3 and the missing-index test)", len(res.pass))
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("suite output (exit: %v):\n%s", runErr, tail(out.String(), 400))
	}
}

func moduleDir(t *testing.T, goBin string) string {
	cmd := exec.Command(goBin, "env", "GOMODCACHE")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), clientModule)
	if _, err := os.Stat(filepath.Join(dir, "integration_test.go")); err != nil {
		dl := exec.Command(goBin, "mod", "download", strings.Split(clientModule, "@")[0])
		dl.Dir = "."
		if b, err := dl.CombinedOutput(); err != nil {
			e2etest.Missing(t, "%s is not in the module cache and cannot be downloaded: %v\n%s", clientModule, err, b)
		}
	}
	return dir
}

// writeFakeKey writes a service-account key that parses (the suite's
// TestMain insists) but is never used: in emulator mode the client sends
// "Bearer owner".
func writeFakeKey(t *testing.T, dir string) string {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "demo-int",
		"private_key_id": "fake",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "fake@demo-int.iam.gserviceaccount.com",
		"client_id":      "1",
		"token_uri":      "http://127.0.0.1:1/token",
	})
	p := filepath.Join(dir, "fake-sa.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type results struct{ pass, fail, skip []string }

var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)

// parse collects the verdicts of TestIntegration_DefaultDB's direct subtests.
func parse(out string) results {
	var r results
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		if m == nil || strings.Count(m[2], "/") != 1 || !strings.HasPrefix(m[2], "TestIntegration_DefaultDB/") {
			continue
		}
		switch m[1] {
		case "PASS":
			r.pass = append(r.pass, m[2])
		case "FAIL":
			r.fail = append(r.fail, m[2])
		case "SKIP":
			r.skip = append(r.skip, m[2])
		}
	}
	sort.Strings(r.fail)
	return r
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func tail(s string, lines int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > lines {
		ls = append([]string{fmt.Sprintf("... (%d lines omitted)", len(ls)-lines)}, ls[len(ls)-lines:]...)
	}
	return strings.Join(ls, "\n")
}
