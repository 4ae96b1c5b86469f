package studio_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/compat"
)

// TestConformanceAPI: /api/conformance serves the registry with a score
// per service, one service with ?service=, and 404 for an unknown one.
func TestConformanceAPI(t *testing.T) {
	e := startWith(t, backend.Options{}, backend.Firestore)
	var all compat.JSON
	if code := e.do(t, "GET", "/api/conformance", nil, &all); code != http.StatusOK {
		t.Fatalf("GET /api/conformance: %d", code)
	}
	services, _ := compat.Services()
	if len(all.Services) != len(services) || all.Total.Total == 0 {
		t.Fatalf("%d services, total %+v", len(all.Services), all.Total)
	}
	for _, s := range all.Services {
		if s.Score.Total != len(s.Rows) || s.Percent <= 0 || s.Percent > 100 {
			t.Errorf("%s: score %+v (%v%%) for %d rows", s.ID, s.Score, s.Percent, len(s.Rows))
		}
	}
	var one compat.JSON
	if code := e.do(t, "GET", "/api/conformance?service=lsp", nil, &one); code != http.StatusOK || len(one.Services) != 1 || one.Services[0].ID != "lsp" {
		t.Fatalf("?service=lsp: %d %+v", code, one.Services)
	}
	var bad struct{ Error string }
	if code := e.do(t, "GET", "/api/conformance?service=nope", nil, &bad); code != http.StatusNotFound || bad.Error == "" {
		t.Fatalf("?service=nope: %d %+v", code, bad)
	}
}

// TestBrowserConformance opens the Conformance page: the scores table
// lists every service, the search box keeps the rows that match, a
// status button keeps one status, and a service's name keeps its rows.
func TestBrowserConformance(t *testing.T) {
	e := startWith(t, backend.Options{}, backend.Firestore)
	ctx := browser(t)
	run(t, ctx, "open", chromedp.Navigate(e.srv.URL+"/conformance"), waitText(ctx, "main h1", "Conformance"),
		waitJS(`document.querySelectorAll('tr[data-score]').length === 14`),
		waitJS(`document.querySelector('tr[data-row="firestore.get.document"]')`))
	run(t, ctx, "search", typeInto(`input[aria-label="search conformance rows"]`, "includeMetadataChanges"),
		waitJS(`document.querySelector('tr[data-row="firestore.listen.metadata-changes"]') && !document.querySelector('tr[data-row="firestore.get.document"]')`))
	run(t, ctx, "status", typeInto(`input[aria-label="search conformance rows"]`, ""), clickButton("not implemented"),
		waitJS(`document.querySelector('tr[data-row="firestore.client.bundles"]') && !document.querySelector('tr[data-row="firestore.get.document"]')`))
	run(t, ctx, "service", clickButton("all"), clickJS(`tr[data-score="lsp"] a`),
		waitJS(`document.querySelector('[data-service="lsp"]') && !document.querySelector('[data-service="firestore"]')`))
	screenshot(t, ctx, "conformance")
}
