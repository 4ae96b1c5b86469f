package studio_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/chromedp/chromedp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/studio"
	"github.com/pyric/pyric/verify"
)

// TestBrowserRulesSessionTools: the Rules page lists the composite
// indexes the session's queries need and keeps the session as a named
// fixture, over the admin routes `pyric serve` mounts on the Studio port.
func TestBrowserRulesSessionTools(t *testing.T) {
	b, err := backend.Start(backend.Options{Ports: map[string]int{}, Firestore: backend.FirestoreOptions{Rules: testRules}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	ctx := context.Background()
	db := b.Sandbox.Database()
	if err := b.Sandbox.Admin().Firestore().SetDocument(ctx, "posts/p1", map[string]any{"owner": "alice", "title": "t"}); err != nil {
		t.Fatal(err)
	}
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "posts"}},
		Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: "owner"}, Op: pb.StructuredQuery_FieldFilter_EQUAL,
			Value: &pb.Value{ValueType: &pb.Value_StringValue{StringValue: "alice"}}}}},
		OrderBy: []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "title"}, Direction: pb.StructuredQuery_DESCENDING}}}
	b.Sandbox.Firestore().RunQuery(ctx, alice, &pb.RunQueryRequest{Parent: db.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: q}})

	dir := t.TempDir()
	session := func() (*capture.Fixture, error) { return capture.FromBackend(b, b.Sandbox.Events().History()) }
	h := studio.New(studio.Options{Sandbox: b.Sandbox, Rules: b.Firestore().Server.Rules(), Mount: map[string]http.Handler{
		"/__pyric/capture": http.StripPrefix("/__pyric/capture", capture.AdminHandler(session, dir)),
		"/__pyric/indexes": verify.IndexesHandler(session),
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
	f, err := capture.Decode(data)
	if err != nil || len(f.Events) == 0 {
		t.Fatalf("saved fixture: %v, %d events", err, len(f.Events))
	}
	js, _ := json.Marshal(verify.SuggestIndexes(f))
	if len(verify.SuggestIndexes(f)) != 1 {
		t.Fatalf("the saved fixture's indexes: %s", js)
	}
	run(t, bctx, "bad name", chromedp.Evaluate(`(() => { const i = document.querySelector('input[aria-label="fixture name"]'); i.value = ''; i.dispatchEvent(new Event('input', {bubbles: true})); })()`, nil),
		typeInto(`input[aria-label="fixture name"]`, ".hidden"), clickButton("Save fixture"), waitText(bctx, `main [role="alert"]`, "plain file name"))
}
