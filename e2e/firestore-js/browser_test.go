package firestorejs

import (
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// browserRules are the rules browser.cjs runs under.
const browserRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /rooms/{room}/msgs/{m} {
      allow read, write: if request.auth != null;
    }
    match /counters/{c} {
      allow read, write: if request.auth != null;
    }
  }
}
`

// browserWant is what every browser.cjs step must return; the official
// emulator gives the same answers (checked with the same script).
var browserWant = map[string]string{
	"write own profile":                         `null`,
	"read own profile":                          `{"name":"Alice","n":1}`,
	"update with serverTimestamp and increment": `{"n":3,"hasTime":true}`,
	"onSnapshot query and document":             `""`,
	"live add":                                  `"1,2"`,
	"live modify and delete":                    `"2"`,
	"document listener":                         `["Alice","Alice B"]`,
	"batch":                                     `2`,
	"transaction":                               `{"returned":2,"stored":2}`,
	"contended transactions":                    `5`,
	"count aggregation":                         `2`,
	"denied write":                              `"permission-denied"`,
	"denied read":                               `"permission-denied"`,
	"denied listen":                             `"permission-denied"`,
	"still readable after denials":              `"Alice B"`,
}

// TestBrowserWebChannel runs the browser build of the SDK in headless
// Chromium: Listen and Write go over WebChannel with a streaming back
// channel, transactions over XHR REST.
func TestBrowserWebChannel(t *testing.T) {
	bin := e2etest.Chromium(t)
	srv := fstest.Start(t, fstest.Options{Project: "demo-browser", Rules: browserRules})
	steps := runScript(t, 3*time.Minute, "browser.cjs", "FS="+srv.Addr, "PROJECT=demo-browser", "CHROMIUM="+bin)
	check(t, steps, browserWant)
	explained(t, steps, `request.auth.uid == uid → 'bob' == 'alice' is false`)
}

// TestBrowserLongPolling is the same with experimentalForceLongPolling:
// every back-channel request answers one batch.
func TestBrowserLongPolling(t *testing.T) {
	bin := e2etest.Chromium(t)
	srv := fstest.Start(t, fstest.Options{Project: "demo-browser", Rules: browserRules})
	steps := runScript(t, 3*time.Minute, "browser.cjs", "FS="+srv.Addr, "PROJECT=demo-browser", "CHROMIUM="+bin, "LONG_POLLING=1")
	check(t, steps, browserWant)
	explained(t, steps, `request.auth.uid == uid → 'bob' == 'alice' is false`)
}
