package storagejs

import (
	"testing"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox/service"
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
	bin := e2etest.Chromium(t)
	addr := serve(t, service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, storage.Options{}, rules)
	check(t, run(t, "browser.cjs", "STORAGE="+addr, "CHROMIUM="+bin), browserWant)
}
