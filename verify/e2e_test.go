package verify_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/verify"
)

const sessionRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /posts/{id} {
      allow read: if true;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
      allow update, delete: if request.auth != null && resource.data.owner == request.auth.uid;
    }
  }
}
`

// Bob may no longer write: every create/update/delete needs uid != 'bob'.
const noBobRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /posts/{id} {
      allow read: if true;
      allow create: if request.auth != null && request.auth.uid != 'bob' && request.resource.data.owner == request.auth.uid;
      allow update, delete: if request.auth != null && request.auth.uid != 'bob' && resource.data.owner == request.auth.uid;
    }
  }
}
`

// bearer is a per-RPC credential carrying an unsigned emulator token.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

func userToken(uid string) bearer {
	enc := base64.RawURLEncoding.EncodeToString
	return bearer(enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc([]byte(`{"sub":"`+uid+`","user_id":"`+uid+`"}`)) + ".")
}

func client(t *testing.T, addr, project, uid string) *firestore.Client {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(userToken(uid)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c, err := firestore.NewClient(context.Background(), project, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// session runs a session of allowed and denied writes by alice and bob
// through the official Go client and returns the captured fixture path.
func session(t *testing.T) (string, map[string]bool) {
	t.Helper()
	dir := t.TempDir()
	b, err := backend.Start(backend.Options{Firestore: backend.FirestoreOptions{Rules: sessionRules}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	path := filepath.Join(dir, "last-session.json")
	rec, err := capture.Start(context.Background(), b.Sandbox, path, capture.Options{Debounce: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alice := client(t, b.Addr(backend.Firestore), b.Project, "alice")
	bob := client(t, b.Addr(backend.Firestore), b.Project, "bob")
	denied := func(err error) {
		t.Helper()
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("want PERMISSION_DENIED, got %v", err)
		}
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	bobWrites := map[string]bool{}
	must(alice.Doc("posts/a1").Set(ctx, map[string]any{"owner": "alice", "title": "hello", "n": 1}))
	must(bob.Doc("posts/b1").Set(ctx, map[string]any{"owner": "bob", "title": "hi", "at": firestore.ServerTimestamp}))
	bobWrites["posts/b1"] = true
	_, err = bob.Doc("posts/a1").Update(ctx, []firestore.Update{{Path: "title", Value: "hacked"}})
	denied(err)
	_, err = alice.Doc("posts/x").Set(ctx, map[string]any{"owner": "bob"})
	denied(err)
	must(bob.Doc("posts/b1").Update(ctx, []firestore.Update{{Path: "title", Value: "hi again"}}))
	must(alice.Doc("posts/a1").Get(ctx))
	ref, _, err := bob.Collection("posts").Add(ctx, map[string]any{"owner": "bob", "title": "auto"})
	must(nil, err)
	bobWrites[ref.Path[strings.Index(ref.Path, "/documents/")+len("/documents/"):]] = true
	// A listened query that needs a composite index (equality + order).
	it := alice.Collection("posts").Where("owner", "==", "alice").OrderBy("title", firestore.Desc).Snapshots(ctx)
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	it.Stop()
	must(alice.Doc("posts/a2").Set(ctx, map[string]any{"owner": "alice"}))
	must(alice.Doc("posts/a2").Delete(ctx))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path, bobWrites
}

func load(t *testing.T, path string) *capture.Fixture {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := capture.DecodeWith(data, regs())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSessionVerify(t *testing.T) {
	path, bobWrites := session(t)
	f := load(t, path)
	if f.Services["firestore"] == nil || f.Services["firestore"].Rules == nil || f.Services["firestore"].Rules.Source != sessionRules {
		t.Fatalf("fixture does not carry the rules: %+v", f.Services["firestore"])
	}
	same, err := verify.Run(f, verify.Options{Registrations: regs()})
	if err != nil {
		t.Fatal(err)
	}
	if !same.OK {
		t.Fatalf("same rules diverge: %+v", same.Services["firestore"].Divergences)
	}
	if n := same.Services["firestore"].CheckedEvents; n < 8 {
		t.Fatalf("checked %d events, want every client request (>= 8)", n)
	}
	res, err := verify.Run(f, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"firestore": sourceFile("candidate.rules", noBobRules)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK {
		t.Fatal("rules forbidding bob verified ok")
	}
	var nowDenied []verify.Divergence
	for _, d := range res.Services["firestore"].Divergences {
		switch d.Kind {
		case verify.NowDenied:
			nowDenied = append(nowDenied, d)
			if d.UID != "bob" {
				t.Errorf("now-denied for %q: %+v", d.UID, d)
			}
			if !strings.Contains(d.Explanation, "bob") || !strings.Contains(d.Explanation, "false") {
				t.Errorf("explanation %q does not name the failing condition", d.Explanation)
			}
		case verify.NowAllowed, verify.Unsupported:
			t.Errorf("unexpected %+v", d)
		}
	}
	// bob's allowed writes: create b1, update b1, add auto-id.
	if len(nowDenied) != 3 {
		t.Fatalf("now-denied = %+v, want bob's 3 writes", nowDenied)
	}
	for _, d := range nowDenied {
		if !bobWrites[d.Path] {
			t.Errorf("now-denied %s is not one of bob's writes %v", d.Path, bobWrites)
		}
	}
	// and the final state drifts where bob's documents are missing.
	drift := 0
	for _, d := range res.Services["firestore"].Divergences {
		if d.Kind == verify.StateDrift {
			drift++
			if !bobWrites[d.Path] {
				t.Errorf("state-drift at %s", d.Path)
			}
		}
	}
	if drift != 2 {
		t.Errorf("state-drift count %d, want 2 (b1 and the auto-id doc)", drift)
	}

	// The same through the pyric binary: exit codes and JSON shape.
	bin := e2etest.Pyric(t)
	dir := t.TempDir()
	cand := filepath.Join(dir, "candidate.rules")
	os.WriteFile(cand, []byte(noBobRules), 0o644)
	same2 := filepath.Join(dir, "same.rules")
	os.WriteFile(same2, []byte(sessionRules), 0o644)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := run("verify", "--fixture", path, "--rules", same2); code != 0 {
		t.Fatalf("same rules: exit %d\n%s", code, out)
	}
	txt, _ := run("verify", "--fixture", path, "--rules", cand)
	t.Log(txt)
	out, code := run("verify", "--fixture", path, "--rules", cand, "--format", "json")
	if code != 1 {
		t.Fatalf("no-bob rules: exit %d\n%s", code, out)
	}
	var shape struct {
		OK       *bool `json:"ok"`
		Services map[string]struct {
			OK            *bool `json:"ok"`
			CheckedEvents int   `json:"checkedEvents"`
			Divergences   []map[string]any
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(out), &shape); err != nil || shape.OK == nil || *shape.OK || shape.Services["firestore"].OK == nil {
		t.Fatalf("json shape: %v\n%s", err, out)
	}
	for _, d := range shape.Services["firestore"].Divergences {
		for _, k := range []string{"kind", "eventId", "method", "path", "uid", "before", "after", "explanation"} {
			if _, ok := d[k]; !ok && d["kind"] == "now-denied" {
				t.Errorf("divergence lacks %q: %v", k, d)
			}
		}
	}
	// capture save keeps a named, valid fixture.
	cmdSave := exec.Command(bin, "capture", "save", "two-users", "--from", path, "--dir", filepath.Join(dir, "fixtures"))
	if out, err := cmdSave.CombinedOutput(); err != nil {
		t.Fatalf("capture save: %v %s", err, out)
	}
	if _, code := run("verify", "--fixture", filepath.Join(dir, "fixtures", "two-users.json"), "--rules", same2); code != 0 {
		t.Fatalf("verify of the saved fixture: exit %d", code)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"pyric.verify.fixture.v1","events":{}}`), 0o644)
	if _, code := run("verify", "--fixture", bad, "--rules", cand); code != 2 {
		t.Fatalf("malformed fixture: exit %d, want 2", code)
	}
	broken := filepath.Join(dir, "broken.rules")
	os.WriteFile(broken, []byte("rules_version = '2'; service cloud.firestore { match /x { allow read: if ; } }"), 0o644)
	if _, code := run("verify", "--fixture", path, "--rules", broken); code != 2 {
		t.Fatalf("rules that don't compile: exit %d, want 2", code)
	}
	out, code = run("verify", "--fixture", path, "--derive-cases", "-")
	if code != 0 || !strings.Contains(out, `"testCases"`) {
		t.Fatalf("derive-cases: exit %d\n%s", code, out)
	}
	idx := filepath.Join(dir, "firestore.indexes.json")
	os.WriteFile(idx, []byte(`{"indexes":[{"collectionGroup":"other","queryScope":"COLLECTION","fields":[{"fieldPath":"a","order":"ASCENDING"},{"fieldPath":"b","order":"ASCENDING"}]}]}`), 0o644)
	if out, code := run("firestore", "indexes", "suggest", "--fixture", path, "--out", idx); code != 0 {
		t.Fatalf("indexes suggest: exit %d %s", code, out)
	}
	ib, _ := os.ReadFile(idx)
	if !strings.Contains(string(ib), `"collectionGroup": "posts"`) || !strings.Contains(string(ib), `"fieldPath": "title"`) || !strings.Contains(string(ib), `"DESCENDING"`) || !strings.Contains(string(ib), `"other"`) {
		t.Fatalf("suggested indexes:\n%s", ib)
	}
	run("firestore", "indexes", "suggest", "--fixture", path, "--out", idx, "--prune")
	if ib, _ := os.ReadFile(idx); strings.Contains(string(ib), `"other"`) || !strings.Contains(string(ib), `"posts"`) {
		t.Fatalf("--prune:\n%s", ib)
	}
	// The derived cases pass the simulator with the session's rules.
	casesFile := filepath.Join(dir, "cases.json")
	os.WriteFile(casesFile, []byte(out), 0o644)
	cmd := exec.Command(bin, "firestore", "rules", "simulate", "--stdin", "--format", "json")
	in, _ := os.Open(casesFile)
	defer in.Close()
	cmd.Stdin = in
	simOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("simulate derived cases: %v\n%s", err, simOut)
	}
}

func sourceFile(name, text string) *source.File { return source.NewFile(name, text) }
