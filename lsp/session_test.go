package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/lsp"
)

// TestSessionLensesAndDenials writes a captured session beside a rules
// file (.pyric/last-session.json, where pyric serve keeps it) with two
// allowed and one denied read at the users block's allow read, and one
// allowed write; the lenses and hints count them per allow and the
// denial is an information diagnostic on the sub-expression that failed.
func TestSessionLensesAndDenials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "firestore.rules")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	block := "/databases/{database}/documents/users/{userId}"
	failLine := strings.Count(sample[:strings.Index(sample, "me == uid")], "\n") + 1
	req := func(seq uint64, verdict event.Verdict, method string, index int, uid string) event.Event {
		e := event.Event{Seq: seq, ID: "evt-" + string(rune('0'+seq)), At: time.Unix(1700000000+int64(seq), 0).UTC(), Kind: event.KindRequest, Service: "firestore",
			Method: method, Path: "users/alice", Identity: event.Identity{Lens: "user", UID: uid},
			Request: &event.Request{Verdict: verdict, Rule: &event.Rule{Index: index, MatchPath: block, Operations: []string{method}}}}
		if verdict == event.Deny {
			e.Request.Trace = []event.Step{{Text: "me == uid", Value: "false", Line: failLine, Column: 14, Depth: 1}}
		}
		return e
	}
	fx := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}, Events: []event.Event{
		req(1, event.Allow, "get", 0, "alice"),
		req(2, event.Allow, "get", 0, "alice"),
		req(3, event.Deny, "get", 0, "bob"),
		req(4, event.Allow, "create", 1, "alice"),
	}}
	b, err := capture.Encode(fx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.DecodeWith(b, backend.Services(&backend.Options{})); err != nil {
		t.Fatalf("the test's fixture: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".pyric"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".pyric", "last-session.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	c := start(t, lsp.Options{Debounce: -1}, dir)
	uri := fileURI(path)
	c.open(uri, "firestore-rules", sample)
	diags := c.waitDiags(uri, 1)
	if len(diags) != 1 || diags[0].Severity != lsp.SeverityInformation || diags[0].Code != "SESSION_DENIED" ||
		!strings.Contains(diags[0].Message, "get users/alice (uid bob)") || !strings.Contains(diags[0].Message, "`me == uid` was false") ||
		diags[0].Range.Start.Line != failLine-1 || diags[0].Range.Start.Character != 13 {
		t.Fatalf("live denials: %+v", diags)
	}
	var lenses []lsp.CodeLens
	c.call("textDocument/codeLens", lsp.DocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri}}, &lenses)
	var titles []string
	for _, l := range lenses {
		if strings.HasPrefix(l.Command.Title, "session:") { // the replay's lenses come when it is done
			titles = append(titles, l.Command.Title)
		}
	}
	if got := strings.Join(titles, "; "); got != "session: 2 allowed, 1 denied; session: 1 allowed, 0 denied" {
		t.Fatalf("lenses: %s", got)
	}
	var hints []lsp.InlayHint
	c.call("textDocument/inlayHint", lsp.DocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri}}, &hints)
	if len(hints) != 2 || hints[0].Label != "✓2 ✗1" || hints[1].Label != "✓1 ✗0" {
		t.Fatalf("hints: %+v", hints)
	}
}

// TestReplayLens captures a session in which alice created her profile,
// then edits the buffer so that the write rule no longer accepts it: a
// lens on that allow says the create would now be denied (pyric verify's
// replay of the session against the unsaved buffer).
func TestReplayLens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "firestore.rules")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	data := map[string]any{"name": "Alice"}
	fx := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}, Events: []event.Event{
		{Seq: 1, ID: "evt-1", At: t0, Kind: event.KindRequest, Service: "firestore", Identity: event.Identity{Lens: event.LensUser, UID: "alice"},
			Method: "create", Path: "users/alice", Origin: event.OriginClient,
			Request: &event.Request{Verdict: event.Allow, Rule: &event.Rule{Index: 1, MatchPath: "/databases/{database}/documents/users/{userId}"},
				Seen: &event.Seen{Data: data, Before: &event.Resource{}}}},
		{Seq: 2, ID: "evt-2", At: t0, Kind: event.KindCommit, Service: "firestore", Identity: event.Identity{Lens: event.LensUser, UID: "alice"},
			Method: "create", Path: "users/alice", Commit: &event.Commit{RequestTime: t0, After: data}},
	}}
	state, _ := json.Marshal(map[string]any{"documents": map[string]any{"users/alice": data}})
	fx.Services["firestore"] = &capture.ServiceData{Rules: &capture.Rules{Format: capture.FormatFirestore, Source: sample}, State: state}
	b, err := capture.Encode(fx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".pyric"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".pyric", "last-session.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, lsp.Options{Debounce: -1}, dir)
	uri := fileURI(path)
	edited := strings.Replace(sample, "hasOnly(['name'])", "hasOnly(['title'])", 1)
	c.open(uri, "firestore-rules", edited)
	c.waitDiags(uri, 1)
	// Completion after request.resource.data. offers the fields of the
	// session's documents under the block.
	withDot := strings.Replace(sample, "math.abs(1) == 1", "request.resource.data.", 1)
	u2 := fileURI(filepath.Join(dir, "scratch.rules"))
	c.open(u2, "firestore-rules", withDot)
	var l lsp.CompletionList
	c.call("textDocument/completion", pos(u2, at(t, withDot, "data.;", 0, 5)), &l)
	var fields []string
	for _, it := range l.Items {
		if it.Kind == lsp.KindField {
			fields = append(fields, it.Label)
		}
	}
	if strings.Join(fields, ",") != "name" {
		t.Errorf("session fields after request.resource.data.: %v", fields)
	}
	writeLine := strings.Count(edited[:strings.Index(edited, "allow write")], "\n")
	var lenses []lsp.CodeLens
	if !await.Poll(30*time.Second, func() bool {
		lenses = nil
		c.call("textDocument/codeLens", lsp.DocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri}}, &lenses)
		for _, l := range lenses {
			if strings.HasPrefix(l.Command.Title, "would change: create users/alice (uid alice) now-denied") {
				if l.Range.Start.Line != writeLine {
					t.Fatalf("the lens is on line %d, the allow write on %d", l.Range.Start.Line, writeLine)
				}
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no replay lens: %+v", lenses)
	}
}
