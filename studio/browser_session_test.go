package studio_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	fsserver "github.com/pyric/pyric/server/firestore"
	"github.com/pyric/pyric/studio"
)

// TestBrowserRulesSessionTools: the Rules page lists the composite
// indexes the session's queries need, keeps the session as a named
// fixture, and re-runs the session against edited rules on a branch
// (divergences and differences from live; discard, then promote), over
// the admin routes `pyric serve` mounts on the Studio port.
func TestBrowserRulesSessionTools(t *testing.T) {
	b, err := backend.Start(backend.Options{Ports: map[string]int{}, Firestore: backend.FirestoreOptions{Rules: testRules}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	ctx := context.Background()
	db := testfs.Of(b.Sandbox).Default()
	if err := testfs.Of(b.Sandbox).Admin().SetDocument(ctx, "posts/p1", map[string]any{"owner": "alice", "title": "t"}); err != nil {
		t.Fatal(err)
	}
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "posts"}},
		Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: "owner"}, Op: pb.StructuredQuery_FieldFilter_EQUAL,
			Value: &pb.Value{ValueType: &pb.Value_StringValue{StringValue: "alice"}}}}},
		OrderBy: []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "title"}, Direction: pb.StructuredQuery_DESCENDING}}}
	// alice creates posts/long (a 9-character title): allowed by testRules
	// (< 20), denied by rules edited to < 5.
	if _, err := testfs.Of(b.Sandbox).Engine.Commit(ctx, alice, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: db.DocName("posts/long"), Fields: map[string]*pb.Value{"title": {ValueType: &pb.Value_StringValue{StringValue: "123456789"}}}}}}}}); err != nil {
		t.Fatal(err)
	}
	testfs.Of(b.Sandbox).Engine.RunQuery(ctx, alice, &pb.RunQueryRequest{Parent: db.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: q}})

	dir := t.TempDir()
	session := func() (*capture.Fixture, error) { return capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History()) }
	h := studio.New(studio.Options{Sandbox: b.Sandbox, Mount: map[string]http.Handler{
		"/__pyric/capture": http.StripPrefix("/__pyric/capture", capture.AdminHandler(session, dir)),
		"/__pyric/indexes": fsserver.IndexesHandler(func() ([]event.Event, error) { f, err := session(); return f.Events, err }),
		"/__pyric/branch": http.StripPrefix("/__pyric/branch", fsserver.BranchHandler(b.Sandbox, fsserver.BranchOptions{
			LiveRules: b.Firestore().Server.Rules().Base, Session: capture.Encoded(session), Decode: capture.EventDecoder(backend.Services(&backend.Options{}))})),
	}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	bctx := browser(t)
	run(t, bctx, "rules page", chromedp.Navigate(srv.URL+"/rules"),
		waitText(bctx, `table[aria-label="suggested indexes"]`, "posts"),
		waitText(bctx, `table[aria-label="suggested indexes"]`, "title DESCENDING"))
	run(t, bctx, "save fixture", typeInto(`input[aria-label="fixture name"]`, "alice-query"), clickButton("Save fixture"),
		waitText(bctx, `[data-saved]`, "alice-query.json"))
	screenshot(t, bctx, "rules-session-tools")
	data, err := os.ReadFile(filepath.Join(dir, "alice-query.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := capture.DecodeWith(data, backend.Services(&backend.Options{}))
	if err != nil || len(f.Events) == 0 {
		t.Fatalf("saved fixture: %v, %d events", err, len(f.Events))
	}
	js, _ := json.Marshal(firestore.SuggestIndexes(f.Events))
	if len(firestore.SuggestIndexes(f.Events)) != 1 {
		t.Fatalf("the saved fixture's indexes: %s", js)
	}

	// Re-run the session with "< 20" edited to "< 5": alice's create is
	// now denied, and the branch lacks posts/long.
	edited, _ := json.Marshal(strings.Replace(testRules, "size() < 20", "size() < 5", 1))
	run(t, bctx, "branch: edit", waitText(bctx, `[data-editor="session rules"]`, "size() < 20"),
		chromedp.Evaluate(`document.querySelector('[data-editor="session rules"] .cm-content').focus()`, nil), chromedp.Sleep(100*time.Millisecond),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(input.ModifierCtrl)), chromedp.Sleep(100*time.Millisecond),
		chromedp.Evaluate(`document.execCommand('insertText', false, `+string(edited)+`)`, nil), waitText(bctx, `[data-editor="session rules"]`, "size() < 5"),
		clickButton("Re-run session"), waitText(bctx, `[data-divergence="now-denied"]`, "posts/long"), waitText(bctx, `[data-change="posts/long"]`, "123456789"))
	screenshot(t, bctx, "rules-session-branch")
	run(t, bctx, "branch: discard", clickButton("Discard"), waitText(bctx, `[data-branch-done="discarded"]`, "live unchanged"))
	if d, _ := testfs.Of(b.Sandbox).Admin().GetDocument(ctx, "posts/long"); d == nil {
		t.Fatal("discarding a branch changed live")
	}
	run(t, bctx, "branch: promote", clickButton("Re-run session"), waitText(bctx, `[data-divergence="now-denied"]`, "posts/long"),
		clickButton("Promote to live"), waitText(bctx, `[data-branch-done="promoted"]`, "1 documents written"))
	if d, _ := testfs.Of(b.Sandbox).Admin().GetDocument(ctx, "posts/long"); d != nil {
		t.Fatal("promoting the branch left posts/long in live")
	}
	run(t, bctx, "bad name", chromedp.Evaluate(`(() => { const i = document.querySelector('input[aria-label="fixture name"]'); i.value = ''; i.dispatchEvent(new Event('input', {bubbles: true})); })()`, nil),
		typeInto(`input[aria-label="fixture name"]`, ".hidden"), clickButton("Save fixture"), waitText(bctx, `main [role="alert"]`, "plain file name"))
}
