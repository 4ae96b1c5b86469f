package firestoreserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/internal/testsession"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// TestBranchHandler: fork the live state with candidate rules and a
// fixture, see the replay's verdicts and the diff against live, promote
// one branch into live and discard another; bad input is a 4xx naming
// the problem.
func TestBranchHandler(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if err := testfs.Of(sb).Admin().SetDocument(ctx, "c/live", map[string]any{"owner": "zed"}); err != nil {
		t.Fatal(err)
	}
	live := func() (string, string, bool) { return "firestore.rules", testsession.OwnerRules, true }
	srv := httptest.NewServer(http.StripPrefix("/__pyric/branch", BranchHandler(sb, BranchOptions{LiveRules: live, Decode: capture.EventDecoder([]service.Registration{firestore.Registration(firestore.Options{})})})))
	defer srv.Close()
	do := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, srv.URL+"/__pyric/branch"+path, rd)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: %d, body is not JSON: %v", method, path, resp.StatusCode, err)
		}
		return resp.StatusCode, out
	}
	noBob := strings.Replace(testsession.OwnerRules, "allow create, update: if", "allow create, update: if request.auth.uid != 'bob' &&", 1)
	fixture := testsession.Creates(4) // alice creates c/d0, c/d2; bob c/d1, c/d3

	code, b1 := do("POST", "", map[string]any{"rules": noBob, "fixture": fixture})
	if code != http.StatusCreated {
		t.Fatalf("fork: %d %v", code, b1)
	}
	replay := b1["replay"].(map[string]any)
	divs := replay["divergences"].([]any)
	if replay["ok"] != false || replay["checkedEvents"] != float64(4) || len(divs) != 2 {
		t.Fatalf("replay: %v", replay)
	}
	for _, d := range divs {
		d := d.(map[string]any)
		if d["kind"] != "now-denied" || d["uid"] != "bob" || d["explanation"] == "" {
			t.Errorf("divergence %v, want bob's writes now-denied with an explanation", d)
		}
	}
	paths := func(r map[string]any) []string {
		var out []string
		for _, c := range r["changes"].([]any) {
			c := c.(map[string]any)
			if c["before"] != nil {
				t.Errorf("change %v: live had no such document", c)
			}
			out = append(out, c["path"].(string))
		}
		return out
	}
	if got := strings.Join(paths(b1), ","); got != "c/d0,c/d2" || b1["documents"] != float64(3) {
		t.Fatalf("changes %s, %v documents; want c/d0,c/d2 on 3", got, b1["documents"])
	}
	if d, _ := testfs.Of(sb).Admin().GetDocument(ctx, "c/d0"); d != nil {
		t.Fatal("forking wrote to live")
	}
	id := b1["id"].(string)
	if code, g := do("GET", "/"+id, nil); code != 200 || strings.Join(paths(g), ",") != "c/d0,c/d2" {
		t.Fatalf("GET branch: %d %v", code, g)
	}
	if code, l := do("GET", "", nil); code != 200 || len(l["branches"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, l)
	}

	// A second fork with the live rules (none sent): nothing diverges.
	code, b2 := do("POST", "", map[string]any{"fixture": fixture})
	if code != http.StatusCreated || b2["replay"].(map[string]any)["ok"] != true || b2["rules"] != "firestore.rules" {
		t.Fatalf("fork with live rules: %d %v", code, b2)
	}
	if code, d := do("DELETE", "/"+b2["id"].(string), nil); code != 200 || d["discarded"] != true {
		t.Fatalf("discard: %d %v", code, d)
	}
	if code, _ := do("POST", "/"+b2["id"].(string)+"/promote", nil); code != http.StatusNotFound {
		t.Fatalf("promote of a discarded branch: %d", code)
	}
	if d, _ := testfs.Of(sb).Admin().GetDocument(ctx, "c/d1"); d != nil {
		t.Fatal("a discarded branch reached live")
	}

	// Promote: live gets exactly the branch's changes.
	code, p := do("POST", "/"+id+"/promote", nil)
	if code != 200 || p["promoted"] != true || len(p["changes"].([]any)) != 2 {
		t.Fatalf("promote: %d %v", code, p)
	}
	for path, want := range map[string]bool{"c/d0": true, "c/d1": false, "c/d2": true, "c/d3": false, "c/live": true} {
		if d, _ := testfs.Of(sb).Admin().GetDocument(ctx, path); (d != nil) != want {
			t.Errorf("after promote, live %s present=%v, want %v", path, d != nil, want)
		}
	}
	if code, _ := do("GET", "/"+id, nil); code != http.StatusNotFound {
		t.Fatalf("a promoted branch is still open: %d", code)
	}

	// Bad input.
	code, e := do("POST", "", map[string]any{"rules": "rules_version = '2';\nservice cloud.firestore {\n  match /x { allow read: if ; }\n}"})
	diags, _ := e["diagnostics"].([]any)
	if code != 400 || len(diags) == 0 || diags[0].(map[string]any)["line"] != float64(3) {
		t.Fatalf("rules that do not compile: %d %v", code, e)
	}
	if code, e := do("POST", "", map[string]any{"fixture": map[string]any{"schema": "nope"}}); code != 400 || !strings.Contains(e["error"].(string), "fixture") {
		t.Fatalf("bad fixture: %d %v", code, e)
	}
	if code, _ := do("PUT", "", map[string]any{}); code != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", code)
	}
	if code, _ := do("GET", "/nope/x/y", nil); code != http.StatusNotFound {
		t.Fatalf("unknown route: %d", code)
	}
	none := httptest.NewServer(BranchHandler(sb, BranchOptions{}))
	defer none.Close()
	resp, err := http.Post(none.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("no rules anywhere: %d", resp.StatusCode)
	}
}

// TestBranchHandlerSession: without a fixture a fork re-runs the live
// session from the state it started in, so the live rules change nothing
// and rules forbidding bob take exactly bob's documents out.
func TestBranchHandlerSession(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	f := testsession.Creates(4)
	for i := 0; i < 4; i++ {
		p := fmt.Sprintf("c/d%d", i)
		if err := testfs.Of(sb).Admin().SetDocument(ctx, p, f.Events[2*i+1].Commit.After.(map[string]any)); err != nil {
			t.Fatal(err)
		}
	}
	testfs.Of(sb).Admin().SetDocument(ctx, "c/before", map[string]any{"owner": "zed"})
	h := BranchHandler(sb, BranchOptions{LiveRules: func() (string, string, bool) { return "firestore.rules", testsession.OwnerRules, true },
		Session: capture.Encoded(func() (*capture.Fixture, error) { return f, nil }), Decode: capture.EventDecoder([]service.Registration{firestore.Registration(firestore.Options{})})})
	post := func(body string) map[string]any {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(body)))
		var out map[string]any
		json.Unmarshal(rec.Body.Bytes(), &out)
		if rec.Code != http.StatusCreated {
			t.Fatalf("fork %s: %d %v", body, rec.Code, out)
		}
		return out
	}
	if same := post(`{}`); len(same["changes"].([]any)) != 0 || same["replay"].(map[string]any)["ok"] != true {
		t.Fatalf("the session re-run with its own rules changes live: %v", same)
	}
	noBob := strings.Replace(testsession.OwnerRules, "allow create, update: if", "allow create, update: if request.auth.uid != 'bob' &&", 1)
	b, _ := json.Marshal(map[string]any{"rules": noBob})
	got := post(string(b))
	var paths []string
	for _, c := range got["changes"].([]any) {
		c := c.(map[string]any)
		if c["after"] != nil || c["before"] == nil {
			t.Errorf("change %v: want a live document the branch lacks", c)
		}
		paths = append(paths, c["path"].(string))
	}
	if strings.Join(paths, ",") != "c/d1,c/d3" || got["documents"] != float64(3) {
		t.Fatalf("changes %v (%v documents), want bob's c/d1,c/d3 gone and c/before kept", paths, got["documents"])
	}
}

func TestBranchForkApplyPromote(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	testfs.Of(sb).Admin().SetDocument(ctx, "c/live", map[string]any{"owner": "zed"})
	gate, _ := firestore.NewRulesGate(source.NewFile("r", testsession.OwnerRules))
	br, err := testfs.Of(sb).Fork(gate)
	if err != nil {
		t.Fatal(err)
	}
	f := testsession.Creates(4)
	res, err := br.Apply(f.Events)
	if err != nil || !res.OK || res.CheckedEvents != 4 {
		t.Fatalf("apply: %v %+v", err, res)
	}
	if br.Len() != 5 {
		t.Fatalf("branch has %d docs", br.Len())
	}
	// The live database is untouched until promote.
	if d, _ := testfs.Of(sb).Admin().GetDocument(ctx, "c/d0"); d != nil {
		t.Fatal("apply leaked into live")
	}
	changes, err := testfs.Of(sb).Promote(ctx, br)
	if err != nil || len(changes) != 4 {
		t.Fatalf("promote: %v %+v", err, changes)
	}
	live, _ := testfs.Of(sb).Fork(nil)
	if d := br.Diff(live.Docs()); len(d) != 0 {
		t.Fatalf("after promote, branch and live differ: %+v", d)
	}
}
