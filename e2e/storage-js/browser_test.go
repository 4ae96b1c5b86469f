package storagejs

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox/service"
	srv "github.com/pyric/pyric/server/storage"
	"github.com/pyric/pyric/storage"
)

// browserWant is what every browser.cjs step returns.
var browserWant = map[string]string{
	"uploadBytes Blob":                           `[4,"image/png","browser"]`,
	"getBlob":                                    `[4,"image/png"]`,
	"getBlob maxDownloadSize":                    `2`,
	"getDownloadURL then fetch":                  `[200,4]`,
	"uploadBytesResumable with pause and resume": `{"size":819200,"sawPause":true,"same":true}`,
	"uploadBytesResumable cancel":                `["storage/canceled","storage/object-not-found"]`,
	"updateMetadata":                             `{}`,
	"list":                                       `[["big.bin"],["photo.png"]]`,
	"denied read":                                `"storage/unauthorized"`,
	"denied upload":                              `"storage/unauthorized"`,
	"deleteObject":                               `"storage/object-not-found"`,
}

// TestBrowser runs the browser build of the SDK in headless Chromium from
// a page on another origin: every request is a cross-origin XHR, so CORS
// (preflights, exposed upload headers) is exercised too.
func TestBrowser(t *testing.T) {
	e2etest.NeedNode(t)
	for _, p := range []string{"playwright-core", "esbuild"} {
		if _, err := os.Stat(filepath.Join(e2etest.JSDir(), "node_modules", p)); err != nil {
			e2etest.Missing(t, "e2e/js/node_modules/%s is absent", p)
		}
	}
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := os.Stat(bin); err != nil {
		e2etest.Missing(t, "Chromium is not installed (apt-get install -y chromium)")
	}
	e, err := storage.New(service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetRules("storage.rules", rules); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.NewHandler(e))
	defer ts.Close()
	check(t, run(t, "browser.cjs", "STORAGE="+strings.TrimPrefix(ts.URL, "http://"), "CHROMIUM="+bin), browserWant)
}
