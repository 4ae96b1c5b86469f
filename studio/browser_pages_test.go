package studio_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
)

// waitJS waits until the JavaScript expression is true.
func waitJS(expr string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		for {
			var ok bool
			if err := chromedp.Evaluate(`!!(`+expr+`)`, &ok).Do(ctx); err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("never true: %s", expr)
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// clickJS clicks the element matching the CSS selector from a script (a
// sticky header or a hidden hover action does not get in the way).
func clickJS(sel string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) throw new Error('no element %s'); e.click(); return true; })()`, sel, strings.ReplaceAll(sel, "'", "")), nil)
}

// clickButton clicks the first button whose text is text.
func clickButton(text string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const b = [...document.querySelectorAll('button')].find(b => b.textContent.trim() === %q); if (!b) throw new Error('no button %s'); b.click(); return true; })()`, text, text), nil)
}

// typeInto replaces an input's text and fires the input event Preact
// listens to, then types the keys of enter ("\r" submits), as a person
// does.
func typeInto(sel, text string) chromedp.Action {
	enter := strings.HasSuffix(text, "\r")
	text = strings.TrimSuffix(text, "\r")
	a := chromedp.Tasks{waitJS(fmt.Sprintf(`document.querySelector(%q)`, sel)), chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.focus();
		Object.getOwnPropertyDescriptor(Object.getPrototypeOf(e), 'value').set.call(e, %q);
		e.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`, sel, text), nil)}
	a = append(a, settle())
	if enter {
		a = append(a, chromedp.SendKeys(sel, "\r", chromedp.ByQuery), settle())
	}
	return a
}

// settle waits until the page has rendered what the last event changed
// (two animation frames), so the next click sees the new state.
func settle() chromedp.Action {
	return chromedp.Evaluate(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })
}

// selectValue picks an option of a select and fires its change event in
// one step (a render in between would put the old value back).
func selectValue(sel, value string) chromedp.Action {
	return chromedp.Tasks{waitJS(fmt.Sprintf(`document.querySelector(%q)`, sel)), chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q;
		e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, sel, value), nil), settle()}
}

// TestBrowserDatabase: expand the tree, edit a leaf inline, add a child,
// delete a node, see a write made elsewhere arrive live, move with the
// keyboard, and see a denial in the app lens.
func TestBrowserDatabase(t *testing.T) {
	e := startAll(t)
	ctx := browser(t)
	u := e.srv.URL
	e.raw(t, "PUT", "/api/database/value?path=users", "application/json", []byte(`{"alice": {"name": "Alice", "age": 30}, "bob": {"name": "Bob"}}`))
	e.raw(t, "PUT", "/api/database/value?path=public/motd", "application/json", []byte(`"hello"`))

	// g then d opens the page from anywhere.
	run(t, ctx, "open", chromedp.Navigate(u+"/"), waitText(ctx, `[data-service="database"]`, "database"),
		chromedp.KeyEvent("g"), chromedp.KeyEvent("d"), waitText(ctx, "main h1", "Realtime Database"), chromedp.WaitVisible(`[data-live="true"]`, chromedp.ByQuery),
		waitText(ctx, `[role="tree"]`, "users"), waitText(ctx, `[role="tree"]`, "{2}"))
	run(t, ctx, "expand", clickJS(`button[aria-label="expand users"]`), waitText(ctx, `[data-path="/users"]`, "alice"),
		clickJS(`button[aria-label="expand alice"]`), waitText(ctx, `[data-path="/users/alice/name"]`, `"Alice"`),
		waitText(ctx, `[data-path="/users/alice/age"]`, "30"))

	// Inline edit of a leaf: click the value, type, Enter.
	run(t, ctx, "edit leaf", clickJS(`[data-path="/users/alice/name"] [data-value]`),
		chromedp.WaitVisible(`input[aria-label="value of /users/alice/name"]`, chromedp.ByQuery),
		typeInto(`input[aria-label="value of /users/alice/name"]`, "Alicia\r"),
		waitText(ctx, `[data-path="/users/alice/name"]`, `"Alicia"`))
	var tr treeAnswer
	e.do(t, "GET", "/api/database/tree?path=users/alice/name", nil, &tr)
	if tr.Value != "Alicia" {
		t.Fatalf("edit not stored: %+v", tr)
	}

	// Add a child with a JSON value.
	run(t, ctx, "add child", clickJS(`button[aria-label="add child to /users"]`),
		typeInto(`input[aria-label="new child key"]`, "carol"),
		typeInto(`input[aria-label="new child value"]`, `{"name": "Carol"}`),
		clickButton("Add"), waitText(ctx, `[data-path="/users"]`, "carol"))
	e.do(t, "GET", "/api/database/tree?path=users/carol/name", nil, &tr)
	if tr.Value != "Carol" {
		t.Fatalf("add not stored: %+v", tr)
	}

	// Delete asks once more, then the node is gone.
	run(t, ctx, "delete", clickJS(`button[aria-label="delete /users/bob"]`), waitText(ctx, `[data-path="/users/bob"]`, "delete?"),
		clickJS(`button[aria-label="delete /users/bob"]`), waitJS(`!document.querySelector('[data-path="/users/bob"]')`))
	e.do(t, "GET", "/api/database/tree?path=users/bob", nil, &tr)
	if tr.Exists {
		t.Fatalf("bob not deleted: %+v", tr)
	}

	// A write by someone else arrives live, and the value flashes; only
	// the open nodes it can change read again (not /public).
	// studioReads lists the paths the page read since seq.
	studioReads := func(seq uint64) []string {
		var paths []string
		for _, ev := range e.b.Sandbox.Events().Since(seq, 1000) {
			if ev.Kind == event.KindRequest && ev.Service == "database" && ev.Actor.Kind == event.ActorStudio {
				paths = append(paths, ev.Path)
			}
		}
		return paths
	}
	opened := e.b.Sandbox.Events().Seq()
	run(t, ctx, "open public", clickJS(`button[aria-label="expand public"]`), waitText(ctx, `[data-path="/public/motd"]`, `"hello"`))
	// The read that opened /public is logged before the write below.
	await.Until(t, 5*time.Second, func() bool { return slices.Contains(studioReads(opened), "/public") }, "the page's read of /public in the event log")
	d, _ := sandbox.Lookup[*database.Database](e.b.Sandbox)
	before := e.b.Sandbox.Events().Seq()
	if _, err := d.Set(identity.AdminIdentity(), database.DefaultNamespace(d.Project()), "users/alice/age", 31, database.WriteOptions{Method: "set"}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "live", waitText(ctx, `[data-path="/users/alice/age"]`, "31"))
	var reread []string
	await.Poll(5*time.Second, func() bool { reread = studioReads(before); return slices.Contains(reread, "/users/alice") })
	if !slices.Contains(reread, "/users/alice") || slices.Contains(reread, "/public") {
		t.Fatalf("after a write at /users/alice/age the page read %v", reread)
	}
	run(t, ctx, "close public", clickJS(`button[aria-label="collapse public"]`))
	screenshot(t, ctx, "database")
	screenshotDark(t, ctx, "database")

	// Keyboard: ArrowLeft on a focused node closes it; ArrowRight opens it.
	run(t, ctx, "keyboard", chromedp.Focus(`[data-path="/users/alice"] > [data-tree-row]`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.ArrowLeft), waitJS(`document.querySelector('[data-path="/users/alice"]').getAttribute('aria-expanded') === 'false'`),
		chromedp.KeyEvent(kb.ArrowRight), waitJS(`document.querySelector('[data-path="/users/alice"]').getAttribute('aria-expanded') === 'true'`),
		chromedp.KeyEvent(kb.ArrowDown), waitJS(`document.activeElement.closest('[data-path]').dataset.path === '/users/alice/age'`))

	// A node with many children shows them 50 at a time.
	many := map[string]any{}
	for i := 0; i < 120; i++ {
		many[fmt.Sprintf("k%03d", i)] = i
	}
	e.do(t, "PUT", "/api/database/value?path=many", many, nil)
	var shown int
	count := chromedp.Evaluate(`document.querySelectorAll('[data-path^="/many/"]').length`, &shown)
	run(t, ctx, "many", waitText(ctx, `[role="tree"]`, "many"), clickJS(`button[aria-label="expand many"]`), waitText(ctx, `[data-path="/many"]`, "50 of 120 shown"), count)
	if shown != 50 {
		t.Fatalf("%d children shown, want 50", shown)
	}
	run(t, ctx, "many more", clickButton("Show 50 more"), waitText(ctx, `[data-path="/many"]`, "100 of 120 shown"), clickButton("Show 50 more"),
		waitText(ctx, `[data-path="/many/k119"]`, "119"), count)
	if shown != 120 {
		t.Fatalf("%d children shown, want 120", shown)
	}

	// App lens: a write the rules refuse shows the denial and its reason.
	run(t, ctx, "app lens", selectValue(`select[aria-label="lens"]`, "user"),
		typeInto(`input[aria-label="uid"]`, "alice"),
		// The rules let nobody read the root: the denial says so in place.
		waitText(ctx, `[role="tree"]`, "Permission denied: no .read rule applies to /"),
		typeInto(`input[aria-label="database path"]`, "/public\r"))
	run(t, ctx, "denied write", waitText(ctx, `[data-path="/public/motd"]`, `"hello"`),
		clickJS(`[data-path="/public/motd"] [data-value]`), typeInto(`input[aria-label="value of /public/motd"]`, "42\r"),
		waitText(ctx, `main [role="alert"]`, "Permission denied: no .write rule on /public/motd"))
	screenshot(t, ctx, "database-denied")
	// The denial links the rules inspector, on its request.
	run(t, ctx, "inspect the denial", clickJS(`main [role="alert"] a[data-inspect]`), waitText(ctx, "main h1", "Request"),
		waitText(ctx, "main", "/public/motd"), waitText(ctx, "main h1", "deny"))
}

// testPNG is a 160×100 gradient.
func testPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 160, 100))
	for y := 0; y < 100; y++ {
		for x := 0; x < 160; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 255 / 160), uint8(y * 255 / 100), 160, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBrowserStorage: folders, preview of text and an image, metadata
// edit, upload through the file picker, download link, delete.
func TestBrowserStorage(t *testing.T) {
	e := startAll(t)
	ctx := browser(t)
	u := e.srv.URL
	var bk struct{ Default string }
	e.do(t, "GET", "/api/storage/buckets", nil, &bk)
	obj := "/api/storage/object?bucket=" + bk.Default + "&name="
	e.raw(t, "POST", obj+"public/hello.txt", "text/plain", []byte("hello, storage"))
	e.raw(t, "POST", obj+"public/img/dot.png", "image/png", testPNG(t))

	run(t, ctx, "open", chromedp.Navigate(u+"/storage"), waitText(ctx, `table[aria-label="objects"]`, "public"),
		clickJS(`[data-folder="public/"]`), waitText(ctx, `table[aria-label="objects"]`, "hello.txt"),
		waitText(ctx, `table[aria-label="objects"]`, "img"), waitText(ctx, `[data-object="public/hello.txt"]`, "14 B"),
		waitText(ctx, `[data-object="public/hello.txt"]`, "text/plain"))
	run(t, ctx, "preview text", clickJS(`[data-object="public/hello.txt"]`), waitText(ctx, `[data-preview]`, "hello, storage"))

	// Metadata: add a custom key and change the cache control.
	run(t, ctx, "metadata", clickButton("Add a key"), typeInto(`input[aria-label="custom key 0"]`, "owner"), typeInto(`input[aria-label="custom value 0"]`, "alice"),
		typeInto(`input[aria-label="cache control"]`, "no-cache"), clickButton("Save metadata"), waitText(ctx, `[data-inspecting]`, "Saved"))
	var o struct {
		CacheControl string
		Metadata     map[string]string
	}
	e.do(t, "GET", obj+"public/hello.txt", nil, &o)
	if o.Metadata["owner"] != "alice" || o.CacheControl != "no-cache" {
		t.Fatalf("metadata not stored: %+v", o)
	}
	var href string
	run(t, ctx, "download link", chromedp.AttributeValue(`[data-inspecting] a[download]`, "href", &href, nil, chromedp.ByQuery))
	if c, b, _ := e.raw(t, "GET", href, "", nil); c != 200 || string(b) != "hello, storage" {
		t.Fatalf("download %s: %d %q", href, c, b)
	}

	// Upload through the file picker.
	f := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(f, []byte("# uploaded from the browser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "upload", chromedp.SetUploadFiles(`input[aria-label="upload files"]`, []string{f}, chromedp.ByQuery),
		waitText(ctx, `table[aria-label="objects"]`, "notes.md"), waitText(ctx, `[data-inspecting="public/notes.md"]`, "28 B"))
	if c, _, _ := e.raw(t, "GET", obj+"public/notes.md", "", nil); c != 200 {
		t.Fatalf("upload not stored: %d", c)
	}

	// An upload by someone else appears live.
	gcs, _ := sandbox.Lookup[*storage.Engine](e.b.Sandbox)
	if _, err := gcs.Put(identity.AdminIdentity(), storage.PutRequest{Bucket: bk.Default, Name: "public/live.txt", MediaType: "text/plain", Body: strings.NewReader("live")}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "live upload", waitText(ctx, `[data-object="public/live.txt"]`, "4 B"))

	// An image previews as an image.
	run(t, ctx, "preview image", clickJS(`[data-folder="public/img/"]`), waitText(ctx, `table[aria-label="objects"]`, "dot.png"),
		clickJS(`[data-object="public/img/dot.png"]`), waitJS(`(() => { const i = document.querySelector('.preview img'); return i && i.complete && i.naturalWidth === 160; })()`))
	screenshot(t, ctx, "storage")
	screenshotDark(t, ctx, "storage")

	// Delete asks once more.
	run(t, ctx, "delete", clickButton("Delete"), clickButton("Really delete?"), waitJS(`!document.querySelector('[data-object="public/img/dot.png"]')`))
	if c, _, _ := e.raw(t, "GET", obj+"public/img/dot.png", "", nil); c != 404 {
		t.Fatalf("not deleted: %d", c)
	}

	// App lens: an upload the rules refuse says why, with the inspector a
	// click away.
	big := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(big, make([]byte, 200), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "app lens", selectValue(`select[aria-label="lens"]`, "user"),
		typeInto(`input[aria-label="uid"]`, "alice"), clickButton("public"),
		// The rules match public/{name}, not the folder: listing it is denied, in place.
		waitText(ctx, `main [role="alert"]`, "no allow rule grants 'list'"),
		chromedp.SetUploadFiles(`input[aria-label="upload files"]`, []string{big}, chromedp.ByQuery),
		waitText(ctx, `main [role="alert"]`, "request.resource.size < 100 → 200 < 100 is false"),
		chromedp.WaitVisible(`main [role="alert"] a[data-inspect]`, chromedp.ByQuery))
	screenshot(t, ctx, "storage-denied")
	if c, _, _ := e.raw(t, "GET", obj+"public/big.bin", "", nil); c != 404 {
		t.Fatalf("the denied upload was stored: %d", c)
	}
}

// TestBrowserMessaging: mint a token, subscribe it to a topic, send a
// message and read it in the token's inbox; an invalid send shows
// production's error code.
func TestBrowserMessaging(t *testing.T) {
	e := startAll(t)
	ctx := browser(t)
	u := e.srv.URL
	run(t, ctx, "home lists it", chromedp.Navigate(u+"/"), waitText(ctx, `[data-service="messaging"]`, "messaging"), waitText(ctx, `nav[aria-label="pages"]`, "Messaging"),
		waitText(ctx, `nav[aria-label="pages"]`, "AI Logic"))
	screenshot(t, ctx, "home-all-services")
	run(t, ctx, "open", clickJS(`[data-service="messaging"] a`), waitText(ctx, "main h1", "Cloud Messaging"), chromedp.WaitVisible(`[data-live="true"]`, chromedp.ByQuery),
		clickButton("Mint a token"), waitJS(`document.querySelector('table[aria-label="tokens"] tr[data-token]')`))
	var token string
	run(t, ctx, "token", chromedp.Evaluate(`document.querySelector('tr[data-token]').dataset.token`, &token))
	run(t, ctx, "subscribe", typeInto(`input[aria-label="topic name"]`, "news"), clickButton("Subscribe"), waitText(ctx, `[data-topic="news"]`, "1"))
	run(t, ctx, "send", clickJS(`tr[data-token]`), typeInto(`input[aria-label="title"]`, "Breaking"), clickButton("Send"),
		waitText(ctx, `[data-sent]`, "projects/"), waitText(ctx, `table[aria-label="messages"]`, "Breaking"),
		waitText(ctx, `[data-inbox="`+token+`"]`, "Breaking"))
	// A message sent elsewhere (the FCM endpoint) arrives live.
	resp, err := http.Post("http://"+e.b.Addr(backend.Messaging)+"/v1/projects/"+e.b.Project+"/messages:send", "application/json",
		strings.NewReader(`{"message": {"topic": "news", "notification": {"title": "From the server"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("FCM send: %d", resp.StatusCode)
	}
	run(t, ctx, "live", waitText(ctx, `table[aria-label="messages"]`, "From the server"), waitText(ctx, `[data-inbox]`, "From the server"))
	screenshot(t, ctx, "messaging")
	screenshotDark(t, ctx, "messaging")
	// An invalid condition: production's INVALID_ARGUMENT, in place.
	run(t, ctx, "invalid", selectValue(`select[aria-label="target kind"]`, "condition"),
		typeInto(`input[aria-label="target"]`, "'news' in topics &&"), clickButton("Send"), waitText(ctx, `[data-send-error]`, "INVALID_ARGUMENT"))
	// Deleting the token: a later send to it is UNREGISTERED.
	run(t, ctx, "delete token", clickJS(`button[aria-label="delete token"]`), waitText(ctx, `tr[data-token]`, "deleted"),
		selectValue(`select[aria-label="target kind"]`, "token"),
		typeInto(`input[aria-label="target"]`, token), clickButton("Send"), waitText(ctx, `[data-send-error]`, "UNREGISTERED"))
}

// TestBrowserAI: load a script in the editor, see a call made through
// the AI endpoint arrive live with its prompt, answer and tokens; an
// invalid script is refused with the reason.
func TestBrowserAI(t *testing.T) {
	e := startAll(t)
	ctx := browser(t)
	u := e.srv.URL
	setEditor := func(text string) chromedp.Action {
		return chromedp.Evaluate(fmt.Sprintf(`(() => { const c = document.querySelector('[data-editor="ai script"] .cm-content'); c.focus();
			document.execCommand('selectAll'); document.execCommand('insertText', false, %q); return true; })()`, text), nil)
	}
	run(t, ctx, "open", chromedp.Navigate(u+"/ai"), waitText(ctx, "main h1", "AI Logic"), chromedp.WaitVisible(`[data-live="true"]`, chromedp.ByQuery),
		waitText(ctx, `[data-editor="ai script"]`, "weather"))
	run(t, ctx, "load script", setEditor(`[{"match": {"contains": "weather"}, "text": "Sunny in the browser test", "repeat": true}]`),
		waitText(ctx, `[data-editor="ai script"]`, "browser test"), clickButton("Load (replace)"), waitText(ctx, `[data-script-msg]`, "1 entry"))
	resp, err := http.Post("http://"+e.b.Addr(backend.AI)+"/v1beta/models/gemini-2.0-flash:generateContent?key=k", "application/json",
		strings.NewReader(`{"contents": [{"role": "user", "parts": [{"text": "what is the weather in Paris"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	run(t, ctx, "call arrives", waitText(ctx, `table[aria-label="ai calls"]`, "what is the weather in Paris"),
		waitText(ctx, `table[aria-label="ai calls"]`, "Sunny in the browser test"),
		clickJS(`tr[data-call]`), waitText(ctx, `[data-answer]`, "Sunny in the browser test"), waitText(ctx, `[data-call-detail]`, "tokens: prompt"))
	screenshot(t, ctx, "ai")
	screenshotDark(t, ctx, "ai")
	run(t, ctx, "invalid script", setEditor(`[{"match": {"regex": "("}, "text": "x"}]`), clickButton("Load (replace)"), waitText(ctx, `[data-script-error]`, "regex"))
	var st struct {
		Script []map[string]any
		Calls  []any
	}
	e.do(t, "GET", "/api/ai", nil, &st)
	if len(st.Script) != 1 {
		t.Fatalf("the invalid script replaced the good one: %+v", st.Script)
	}
	// Clearing asks once more, then calls and script are gone.
	run(t, ctx, "clear", clickButton("Clear calls and script"), clickButton("Really clear the calls and the script?"),
		waitText(ctx, "main", "No calls yet"), waitText(ctx, "main", "0 entries waiting"))
	e.do(t, "GET", "/api/ai", nil, &st)
	if len(st.Script) != 0 || len(st.Calls) != 0 {
		t.Fatalf("not cleared: %+v", st)
	}
}

// TestBrowserVirtualLists: a 100k-document collection, 450 users and
// thousands of events render only the rows in view; scrolling to the end loads
// the next page, and the keyboard moves through rows that were not in
// the DOM a moment before.
func TestBrowserVirtualLists(t *testing.T) {
	e := start(t, sandbox.Options{})
	fs := testfs.Of(e.b.Sandbox).Admin()
	for i := 0; i < 100000; i++ {
		if err := fs.SetDocument(context.Background(), fmt.Sprintf("big/d%06d", i), map[string]any{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 450; i++ {
		if c := e.do(t, "POST", "/api/auth/users", map[string]any{"uid": fmt.Sprintf("user%03d", i)}, nil); c != 200 && c != 201 {
			t.Fatalf("create user: %d", c)
		}
	}
	emit(e.b.Sandbox, 1000, "firestore")
	ctx := browser(t)
	u := e.srv.URL
	rows := func(sel string, n *int) chromedp.Action {
		return chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), n)
	}
	var n int

	// Documents: 300 loaded, a few dozen in the DOM.
	run(t, ctx, "documents", chromedp.Navigate(u+"/firestore"),
		chromedp.Click(`//ul[@aria-label="collections"]//button[text()="big"]`, chromedp.BySearch),
		waitText(ctx, `[data-doc-count]`, "300+ documents"), waitText(ctx, `ul[aria-label="documents"]`, "d000000"), rows(`ul[aria-label="documents"] [data-vi]`, &n))
	if n == 0 || n > 100 {
		t.Fatalf("%d document rows in the DOM for 300 loaded", n)
	}
	// Scrolling to the end loads the next page.
	run(t, ctx, "scroll documents", chromedp.Evaluate(`(() => { const s = document.querySelector('ul[aria-label="documents"]').parentElement; s.scrollTop = s.scrollHeight; return true; })()`, nil),
		waitText(ctx, `[data-doc-count]`, "600+ documents"), waitText(ctx, `ul[aria-label="documents"]`, "d000299"), rows(`ul[aria-label="documents"] [data-vi]`, &n))
	if n > 100 {
		t.Fatalf("%d document rows in the DOM after scrolling", n)
	}
	// Keyboard: Home goes back to the first row, ArrowDown to the next.
	var focused string
	run(t, ctx, "keys", chromedp.Evaluate(`document.querySelector('ul[aria-label="documents"] [data-vi]').focus()`, nil),
		chromedp.KeyEvent(kb.Home), waitJS(`document.activeElement && document.activeElement.dataset.vi === '0'`),
		chromedp.KeyEvent(kb.ArrowDown), waitJS(`document.activeElement && document.activeElement.dataset.vi === '1'`),
		chromedp.KeyEvent(kb.Enter), waitText(ctx, `[data-field="n"]`, "1"),
		chromedp.Evaluate(`document.activeElement.textContent`, &focused))
	if focused != "d000001" {
		t.Fatalf("focused %q", focused)
	}
	screenshot(t, ctx, "firestore-100k")

	// Users: 200 per page, the rest as the end comes into view.
	run(t, ctx, "users", chromedp.Navigate(u+"/auth"), waitText(ctx, `table[aria-label="users"]`, "user000"), rows(`table[aria-label="users"] tr[data-vi]`, &n))
	if n == 0 || n > 100 {
		t.Fatalf("%d user rows in the DOM", n)
	}
	run(t, ctx, "user keys", chromedp.Focus(`table[aria-label="users"] tr[data-vi="0"]`, chromedp.ByQuery), chromedp.KeyEvent(kb.End),
		waitJS(`document.activeElement && +document.activeElement.dataset.vi >= 199`), waitText(ctx, "main", "400+ users"),
		chromedp.KeyEvent(kb.End), waitJS(`document.activeElement && document.activeElement.dataset.vi === '399'`), waitText(ctx, "main", "450 users"),
		chromedp.KeyEvent(kb.End), waitJS(`document.activeElement && document.activeElement.dataset.vi === '449'`),
		waitText(ctx, `table[aria-label="users"]`, "user449"))

	// Traffic: the whole kept history of requests (the bus keeps the last
	// 10000 events of every kind), newest first, in a window of rows; End
	// reaches the oldest.
	var kept []event.Event
	for _, ev := range e.b.Sandbox.Events().Since(0, 1<<20) {
		if ev.Kind == event.KindRequest && ev.Actor.Kind != event.ActorStudio {
			kept = append(kept, ev)
		}
	}
	if len(kept) < 2000 {
		t.Fatalf("only %d request events kept", len(kept))
	}
	last := fmt.Sprint(len(kept) - 1)
	run(t, ctx, "traffic", chromedp.Navigate(u+"/traffic"), waitText(ctx, `[data-event-count]`, fmt.Sprintf("%d events", len(kept))),
		waitText(ctx, `tr[data-vi="0"]`, "c/d999"), rows(`table[aria-label="events"] tr[data-vi]`, &n))
	if n == 0 || n > 100 {
		t.Fatalf("%d event rows in the DOM for %d", n, len(kept))
	}
	run(t, ctx, "traffic keys", chromedp.Focus(`table[aria-label="events"] tr[data-vi="0"]`, chromedp.ByQuery), chromedp.KeyEvent(kb.End),
		waitJS(`document.activeElement && document.activeElement.dataset.vi === '`+last+`'`), waitText(ctx, `tr[data-vi="`+last+`"]`, kept[0].Path),
		rows(`table[aria-label="events"] tr[data-vi]`, &n))
	if n > 100 {
		t.Fatalf("%d event rows in the DOM at the end", n)
	}
	screenshot(t, ctx, "traffic-history")
}

// TestBrowserFirestoreDenialInspect: a write denied in the app lens says
// why in place and opens the rules inspector on its request.
func TestBrowserFirestoreDenialInspect(t *testing.T) {
	e := start(t, sandbox.Options{})
	ctx := browser(t)
	run(t, ctx, "app lens", chromedp.Navigate(e.srv.URL+"/firestore"), chromedp.WaitVisible(`select[aria-label="lens"]`, chromedp.ByQuery),
		selectValue(`select[aria-label="lens"]`, "user"),
		typeInto(`input[aria-label="uid"]`, "alice"), typeInto(`input[aria-label="new document path"]`, "posts/z"), clickButton("New"),
		typeInto(`textarea[aria-label="document JSON"]`, `{"title": "`+strings.Repeat("t", 27)+`"}`), clickButton("Save"),
		waitText(ctx, `main [role="alert"]`, "request.resource.data.title.size() < 20 → 27 < 20 is false"))
	run(t, ctx, "inspect", clickJS(`main [role="alert"] a[data-inspect]`), waitText(ctx, `[data-reason]`, "false for 'create' @ L6"),
		waitText(ctx, `[data-failing]`, "27 < 20 is false"), waitText(ctx, "main h1", "deny"))
	// The inspector shows exactly the lines package explain rendered for
	// the event, and renders none of its own.
	var where string
	var shown []string
	run(t, ctx, "why", chromedp.Location(&where), chromedp.Evaluate(`[...document.querySelectorAll('[data-failing]')].map(x => x.textContent)`, &shown))
	id := where[strings.LastIndex(where, "/")+1:]
	var got struct{ Explanation []string }
	if c := e.do(t, "GET", "/api/events/"+id, nil, &got); c != 200 || len(got.Explanation) == 0 || !slices.Equal(shown, got.Explanation) {
		t.Fatalf("the inspector shows %q, the event's explanation is %q (%d)", shown, got.Explanation, c)
	}
}
