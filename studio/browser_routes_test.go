package studio_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// TestBrowserRouteTable: the navigation is the route table — a toy
// service the UI has no view for gets its tab, its keyboard shortcut and
// the generic state page; a path below no route is not found.
func TestBrowserRouteTable(t *testing.T) {
	e := startWith(t, backend.Options{Sandbox: sandbox.Options{Services: []service.Registration{toyRegistration}}}, backend.Firestore, backend.Auth)
	ctx := browser(t)
	u := e.srv.URL
	run(t, ctx, "nav", chromedp.Navigate(u+"/"), waitText(ctx, `nav[aria-label="pages"]`, "Toy queues"),
		waitText(ctx, `nav[aria-label="pages"] a[data-route="/toy"]`, "Toy"), waitText(ctx, `nav[aria-label="pages"]`, "Pub/Sub"))
	run(t, ctx, "open by key", chromedp.KeyEvent("g"), chromedp.KeyEvent("y"), waitText(ctx, `[data-state="toy"]`, `"widgets"`),
		waitText(ctx, "main h1", "Toy"), waitJS(`location.pathname === '/toy'`),
		waitJS(`document.querySelector('nav a[data-route="/toy"]').getAttribute('aria-current') === 'page'`))
	// A route whose view the UI lacks draws the generic state page too.
	// A route below another is its own page: only its tab is current.
	run(t, ctx, "second page", clickJS(`nav a[data-route="/toy/queues"]`), waitText(ctx, "main h1", "Toy"), waitText(ctx, `[data-state="toy"]`, `"b"`),
		waitJS(`[...document.querySelectorAll('nav a[aria-current="page"]')].map(a => a.dataset.route).join() === '/toy/queues'`))
	screenshot(t, ctx, "generic")
	run(t, ctx, "not found", chromedp.Navigate(u+"/nowhere"), waitText(ctx, "main h1", "Not found"))
}

// TestBrowserPubSub: the Pub/Sub page lists a topic and its
// subscription's backlog, publishes a message, and peeks at it without
// leasing it.
func TestBrowserPubSub(t *testing.T) {
	e := start(t, sandbox.Options{})
	ps, _ := sandbox.Lookup[*pubsub.Engine](e.b.Sandbox)
	const topic, sub = "projects/p/topics/orders", "projects/p/subscriptions/worker"
	if _, err := ps.CreateTopic(&pubsub.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.CreateSubscription(&pubsub.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	row := `tr[data-subscription="` + sub + `"]`
	run(t, ctx, "page", chromedp.Navigate(e.srv.URL+"/pubsub"), waitText(ctx, "main h1", "Pub/Sub"), waitText(ctx, row, "worker"),
		waitText(ctx, row+` [data-backlog]`, "0"), chromedp.WaitVisible(`[data-live="true"]`, chromedp.ByQuery))
	run(t, ctx, "publish", typeInto(`textarea[aria-label="message data"]`, "hello from the studio"),
		typeInto(`input[aria-label="attributes"]`, `{"kind":"test"}`), clickButton("Publish"), waitText(ctx, `[data-published]`, "Published message"),
		waitText(ctx, row+` [data-backlog]`, "1"), waitText(ctx, row+` [data-oldest]`, " s"))
	run(t, ctx, "peek", clickJS(row), waitText(ctx, `[data-peek] table[aria-label="messages"]`, "hello from the studio"),
		waitText(ctx, `[data-peek]`, "kind=test"))
	screenshot(t, ctx, "pubsub")
	// Peeking leased nothing: the backlog is whole.
	st, err := ps.Stats(sub)
	if err != nil || st.Backlog != 1 || st.Outstanding != 0 {
		t.Fatalf("after peeking: %+v %v", st, err)
	}
	// An empty message is refused in the engine's words.
	run(t, ctx, "empty", typeInto(`textarea[aria-label="message data"]`, ""), typeInto(`input[aria-label="attributes"]`, ""), clickButton("Publish"),
		waitText(ctx, `main [role="alert"]`, "Some messages are empty"))
}
