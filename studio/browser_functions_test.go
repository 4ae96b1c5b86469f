package studio_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserFunctions: the Functions page lists real functions with
// their trigger and URL; invoking a callable and an HTTPS function
// shows the answer and the new invocation with its logs; a write fires
// a trigger, whose invocation links to the write, and the Traffic
// inspector walks write → invocation.
func TestBrowserFunctions(t *testing.T) {
	e := startFunctions(t)
	ctx := browser(t)
	u := e.srv.URL
	run(t, ctx, "nav", chromedp.Navigate(u+"/"), waitText(ctx, `nav[aria-label="pages"]`, "Functions"))
	run(t, ctx, "list", chromedp.Navigate(u+"/functions"), waitText(ctx, "main h1", "Cloud Functions"),
		chromedp.WaitVisible(`[data-live="true"]`, chromedp.ByQuery),
		waitText(ctx, `tr[data-function="hello"]`, "/demo-fn-studio/us-central1/hello"),
		waitText(ctx, `tr[data-function="onNote"]`, "google.cloud.firestore.document.v1.created"),
		waitText(ctx, `tr[data-function="onNote"]`, "document=notes/{id}"))
	screenshot(t, ctx, "functions")
	run(t, ctx, "callable", clickJS(`tr[data-function="add"]`), waitText(ctx, `[data-invoke="add"] h2`, "add"),
		typeInto(`[data-invoke="add"] textarea`, `{"a": 20, "b": 22}`), clickButton("Invoke"),
		waitText(ctx, `[data-invoke="add"] [data-status]`, "200"), waitText(ctx, `[data-invoke="add"] [data-body]`, `"sum": 42`),
		waitText(ctx, `[data-invocations="add"] [data-outcome]`, "ok"))
	run(t, ctx, "https", clickJS(`tr[data-function="hello"]`), waitText(ctx, `[data-invoke="hello"] h2`, "hello"),
		selectValue(`[data-invoke="hello"] select[aria-label="method"]`, "PUT"), typeInto(`[data-invoke="hello"] input[aria-label="path"]`, "/x/y"),
		typeInto(`[data-invoke="hello"] textarea`, `{"k": "v"}`), clickButton("Invoke"),
		waitText(ctx, `[data-invoke="hello"] [data-body]`, `"method": "PUT"`), waitText(ctx, `[data-invoke="hello"] [data-body]`, `"path": "/x/y"`),
		waitText(ctx, `[data-invocations="hello"] [data-logs]`, "hello called"))
	// A write elsewhere fires onNote: it appears live, caused by the write.
	if st := e.do(t, "PUT", "/api/firestore/document?path=notes/b1", map[string]any{"data": map[string]any{"x": 1}}, nil); st != 200 {
		t.Fatalf("write: %d", st)
	}
	run(t, ctx, "trigger", clickJS(`tr[data-function="onNote"]`), waitText(ctx, `[data-invocations="onNote"] [data-outcome]`, "ok"),
		waitJS(`document.querySelector('[data-invocations="onNote"] [data-cause]')`))
	screenshot(t, ctx, "functions-invocations")
	var cause string
	run(t, ctx, "cause id", chromedp.Evaluate(`document.querySelector('[data-invocations="onNote"] [data-cause]').textContent`, &cause))
	// The inspector of the write lists the run it caused; that run's
	// inspector links back.
	run(t, ctx, "chain", clickJS(`[data-invocations="onNote"] [data-cause]`), waitText(ctx, "main h1", cause),
		waitText(ctx, `[data-caused]`, "onNote"), clickJS(`[data-caused] a`),
		waitText(ctx, "main h1", "Invocation"), waitText(ctx, `[data-invocation-event]`, "google.cloud.firestore.document.v1.created"),
		waitText(ctx, `[data-invocation-event] [data-cause]`, cause))
	// write → run → writes: the run's inspector lists the write its
	// function made through the Admin SDK, whose inspector opens.
	if st := e.do(t, "PUT", "/api/firestore/document?path=drafts/b2", map[string]any{"data": map[string]any{"text": "x"}}, nil); st != 200 {
		t.Fatalf("write: %d", st)
	}
	tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.b.Functions().TriggersIdle(tctx); err != nil {
		t.Fatal(err)
	}
	var draft, published struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if e.do(t, "GET", "/api/events?studio=true&kind=commit&path=drafts/b2", nil, &draft); len(draft.Events) != 1 {
		t.Fatalf("the draft's commit: %+v", draft)
	}
	if e.do(t, "GET", "/api/events?kind=commit&path=published/b2", nil, &published); len(published.Events) != 1 {
		t.Fatalf("publishDraft's write: %+v", published)
	}
	run(t, ctx, "writes", chromedp.Navigate(u+"/traffic/"+draft.Events[0].ID), waitText(ctx, `[data-caused]`, "publishDraft"), clickJS(`[data-caused] a`),
		waitText(ctx, "main h1", "Invocation"), waitText(ctx, `[data-invocation-event] [data-writes]`, published.Events[0].ID),
		clickJS(`[data-writes] a`), waitText(ctx, "main h1", published.Events[0].ID))
	// Re-deliver the recorded payload from the page.
	run(t, ctx, "redeliver", chromedp.Navigate(u+"/functions"), waitText(ctx, `tr[data-function="onNote"]`, "onNote"), clickJS(`tr[data-function="onNote"]`),
		clickButton("Load the last payload"), waitJS(`document.querySelector('[data-invoke="onNote"] textarea').value.includes('google.cloud.firestore.document.v1.created')`),
		clickButton("Invoke"), waitText(ctx, `[data-invoke="onNote"] [data-result]`, "Outcome: ok"),
		waitText(ctx, `tr[data-function="onNote"]`, "2"))
	// Traffic shows invocations with their outcome and cause.
	run(t, ctx, "traffic", chromedp.Navigate(u+"/traffic"), waitText(ctx, "main h1", "Traffic"),
		selectValue(`select[aria-label="filter kind"]`, "invocation"), waitText(ctx, `table[aria-label="events"]`, "onNote"),
		waitText(ctx, `table[aria-label="events"]`, "← "+cause))
}
