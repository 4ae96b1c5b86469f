package studio_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
)

// browser starts headless Chromium for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("PYRIC_CHROMIUM")
	if path == "" {
		for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if p, err := exec.LookPath("chromium"); err == nil {
			path = p
		}
	}
	if path == "" {
		e2etest.Missing(t, "Chromium is not installed (apt-get install chromium, or set PYRIC_CHROMIUM)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1400, 1000))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	if err := chromedp.Run(ctx); err != nil {
		e2etest.Missing(t, "Chromium did not start: %v", err)
	}
	// Any exception the pages throw, and any page that failed to render,
	// fails the test.
	var mu sync.Mutex
	var thrown []string
	chromedp.ListenTarget(ctx, func(ev any) {
		var msg string
		switch x := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = x.ExceptionDetails.Text
			if x.ExceptionDetails.Exception != nil {
				msg += " " + x.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled: // the page's error boundary reports here
			if x.Type != runtime.APITypeError {
				return
			}
			for _, a := range x.Args {
				msg += " " + string(a.Value) + a.Description
			}
		default:
			return
		}
		mu.Lock()
		thrown = append(thrown, msg)
		mu.Unlock()
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range thrown {
			t.Errorf("the page threw: %s", m)
		}
	})
	return ctx
}

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var where, body string
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = chromedp.Run(sctx, chromedp.Location(&where), chromedp.Text("body", &body, chromedp.ByQuery))
		if len(body) > 2000 {
			body = body[:2000]
		}
		t.Fatalf("%s: %v\nat %s, the page shows:\n%s", what, err, where, body)
	}
}

// waitText waits until the element matching sel contains want.
func waitText(ctx context.Context, sel, want string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		var last string
		for {
			var text string
			err := chromedp.Run(ctx, chromedp.Text(sel, &text, chromedp.ByQuery, chromedp.AtLeast(0)))
			if err == nil && strings.Contains(text, want) {
				return nil
			}
			last = text
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s never contained %q (last %q)", sel, want, last)
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("PYRIC_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	run(t, ctx, "screenshot "+name, chromedp.Evaluate(`window.scrollTo(0, 0)`, nil), chromedp.Sleep(300*time.Millisecond), chromedp.FullScreenshot(&buf, 100))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// screenshotDark is screenshot in the dark theme (name-dark), back to
// the theme the page had afterwards.
func screenshotDark(t *testing.T, ctx context.Context, name string) {
	if os.Getenv("PYRIC_SCREENSHOTS") == "" {
		return
	}
	var was string
	run(t, ctx, "dark theme", chromedp.Evaluate(`(() => { const w = document.documentElement.dataset.theme || ''; document.documentElement.dataset.theme = 'dark'; return w; })()`, &was))
	screenshot(t, ctx, name+"-dark")
	run(t, ctx, "theme back", chromedp.Evaluate(fmt.Sprintf(`(() => { const w = %q; if (w) document.documentElement.dataset.theme = w; else delete document.documentElement.dataset.theme; return true; })()`, was), nil))
}

// TestBrowserFlows drives the Studio in a real browser: browse, edit a
// document, deny-and-inspect, re-run against edited rules, live update
// over SSE. With PYRIC_SCREENSHOTS=dir it writes a screenshot of each page.
func TestBrowserFlows(t *testing.T) {
	e := start(t, sandbox.Options{})
	ctx := browser(t) // closed before the server (cleanups run last first)
	u := e.srv.URL
	e.do(t, "PUT", "/api/firestore/document?path=posts/a", map[string]any{"data": map[string]any{"title": "hello", "n": 3,
		"at": map[string]any{"__type": "timestamp", "seconds": 1700000000, "nanos": 0}, "by": map[string]any{"__type": "reference", "path": "users/alice"}}}, nil)
	e.do(t, "PUT", "/api/firestore/document?path=posts/a/comments/c1", map[string]any{"data": map[string]any{"text": "first"}}, nil)
	e.do(t, "POST", "/api/auth/users", map[string]any{"uid": "alice", "email": "alice@example.com", "password": "secret1", "customClaims": map[string]any{"role": "editor"}}, nil)

	// Home: every service with its address and env var; rules status.
	run(t, ctx, "home", chromedp.Navigate(u+"/"), waitText(ctx, `[data-service="firestore"]`, "FIRESTORE_EMULATOR_HOST="), waitText(ctx, `[data-rules-state="live"]`, "Live"))
	screenshot(t, ctx, "home")

	// Browse: collection → document → typed fields → subcollection.
	run(t, ctx, "browse",
		chromedp.Navigate(u+"/firestore"),
		chromedp.Click(`//ul[@aria-label="collections"]//button[text()="posts"]`, chromedp.BySearch),
		chromedp.Click(`//ul[@aria-label="documents"]//button[text()="a"]`, chromedp.BySearch),
		waitText(ctx, `[data-field="title"]`, `"hello"`),
		waitText(ctx, `[data-field="at"]`, "2023-11-14T22:13:20.000Z"),
		waitText(ctx, `[data-field="by"]`, "→ users/alice"),
		waitText(ctx, "main", "comments"))
	screenshot(t, ctx, "firestore")

	// Edit the document in place.
	run(t, ctx, "edit",
		chromedp.Click(`//button[text()="Edit"]`, chromedp.BySearch),
		chromedp.WaitVisible(`textarea[aria-label="document JSON"]`, chromedp.ByQuery),
		chromedp.SetValue(`textarea[aria-label="document JSON"]`, `{"title": "edited in the browser", "n": 4}`, chromedp.ByQuery),
		chromedp.SendKeys(`textarea[aria-label="document JSON"]`, " ", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Save"]`, chromedp.BySearch),
		waitText(ctx, `[data-field="title"]`, "edited in the browser"))
	var got struct{ Data map[string]any }
	e.do(t, "GET", "/api/firestore/document?path=posts/a", nil, &got)
	if got.Data["title"] != "edited in the browser" {
		t.Fatalf("edit not stored: %v", got.Data)
	}

	// Auth page lists the user with its claims.
	run(t, ctx, "auth", chromedp.Navigate(u+"/auth"), waitText(ctx, `[data-uid="alice"]`, "alice@example.com"),
		chromedp.Click(`[data-uid="alice"]`, chromedp.ByQuery), waitText(ctx, `[data-editing="alice"]`, "Custom claims"))
	screenshot(t, ctx, "auth")

	// Deny, then inspect from Traffic: a live row appears over SSE.
	run(t, ctx, "traffic", chromedp.Navigate(u+"/traffic"), chromedp.WaitVisible(`[data-live="true"]`, chromedp.ByQuery))
	c := e.do(t, "PUT", "/api/firestore/document?path=posts/long&as=alice", map[string]any{"data": map[string]any{"title": strings.Repeat("t", 27)}}, nil)
	if c != 403 {
		t.Fatalf("app-lens write: %d", c)
	}
	// The Studio's own request is hidden by default; show it.
	run(t, ctx, "show studio", chromedp.Click(`//label[contains(., "show the Studio")]/input`, chromedp.BySearch),
		waitText(ctx, `table[aria-label="events"]`, "posts/long"))
	// A request made while the page is open arrives live.
	e.do(t, "PUT", "/api/firestore/document?path=posts/live&as=bob", map[string]any{"data": map[string]any{"title": strings.Repeat("x", 30)}}, nil)
	run(t, ctx, "live row", waitText(ctx, `table[aria-label="events"]`, "posts/live"))
	// Per-rule counts name the service: Storage and Database rules have
	// lines and columns of their own.
	run(t, ctx, "verdicts per rule", waitText(ctx, `table[aria-label="verdicts per rule"]`, "firestore L6:"))
	screenshot(t, ctx, "traffic")

	var clicked string
	run(t, ctx, "inspect",
		// (a script click: the sticky header may cover a row scrolled into view)
		chromedp.Evaluate(`(() => { const r = [...document.querySelectorAll('tr[data-event]')].find(r => r.textContent.includes('posts/long')); r.click(); return r.dataset.event + ' ' + location.pathname; })()`, &clicked),
		waitText(ctx, `[data-reason]`, "false for 'create' @ L6"),
		waitText(ctx, `[data-failing]`, "request.resource.data.title.size() < 20 → 27 < 20 is false"),
		waitText(ctx, `.src .ln.mark`, "allow create"))
	screenshot(t, ctx, "inspector")

	// Re-run against edited rules: change "< 20" to "< 40" in the editor.
	var selected bool
	run(t, ctx, "rerun: find the editor", waitText(ctx, `.cm-content`, "size() < 20"))
	run(t, ctx, "rerun: select 20", chromedp.Evaluate(`(() => {
			const root = document.querySelector('.cm-content');
			const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
			for (let n; (n = walker.nextNode());) {
				const i = n.data.indexOf('< 20');
				if (i >= 0) { root.focus(); const r = document.createRange(); r.setStart(n, i + 2); r.setEnd(n, i + 4);
					const s = getSelection(); s.removeAllRanges(); s.addRange(r); return true; }
			}
			return false; })()`, &selected))
	if !selected {
		t.Fatal("did not find '< 20' in the editor")
	}
	run(t, ctx, "rerun: type 40", chromedp.Evaluate(`document.execCommand('insertText', false, '40')`, nil), waitText(ctx, `.cm-content`, "size() < 40"))
	run(t, ctx, "rerun: click", chromedp.Evaluate(`[...document.querySelectorAll('button')].find(b => b.textContent === 'Re-run against edited rules').click()`, nil))
	run(t, ctx, "rerun: verdict", waitText(ctx, `[data-rerun]`, "allow"))
	screenshot(t, ctx, "inspector-rerun")
	// State untouched.
	if c := e.do(t, "GET", "/api/firestore/document?path=posts/long", nil, nil); c != 404 {
		t.Fatalf("re-run wrote the document: %d", c)
	}

	// Rules page: source with coverage and lint findings.
	run(t, ctx, "rules", chromedp.Navigate(u+"/rules"), waitText(ctx, ".src", "allow create"), waitText(ctx, "main", "Lint findings"), waitText(ctx, ".src", "✗"))
	screenshot(t, ctx, "rules")

	// Dark theme: the toggle switches from the system's theme to dark.
	var theme string
	run(t, ctx, "dark", chromedp.Navigate(u+"/"), waitText(ctx, `[data-service="firestore"]`, "FIRESTORE"),
		chromedp.Click(`button[aria-label="Switch theme"]`, chromedp.ByQuery),
		chromedp.ActionFunc(func(ctx context.Context) error {
			// Effects run after the next frame: poll until the theme is applied.
			var err error
			await.Poll(5*time.Second, func() bool {
				err = chromedp.Evaluate(`document.documentElement.dataset.theme || ''`, &theme).Do(ctx)
				return err != nil || theme == "dark"
			})
			return err
		}))
	if theme != "dark" {
		t.Fatalf("theme %q", theme)
	}
	screenshot(t, ctx, "home-dark")
}
