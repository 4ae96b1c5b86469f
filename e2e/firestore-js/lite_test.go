package firestorejs

import (
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/server/firestore/fstest"
)

// liteRules are the rules lite.cjs runs under.
const liteRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid}/notes/{note} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /users/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /{path=**}/posts/{post} {
      allow read;
    }
    match /counters/{c} {
      allow read, write: if request.auth != null;
    }
  }
}
`

// TestLiteREST runs firebase/firestore/lite, which speaks REST (text/plain
// JSON bodies, JSON-array answers for streaming RPCs), against Pyric.
func TestLiteREST(t *testing.T) {
	needNode(t)
	srv := fstest.Start(t, fstest.Options{Project: "demo-lite", Rules: liteRules})
	steps := runScript(t, 2*time.Minute, "lite.cjs", "FS="+srv.Addr, "PROJECT=demo-lite")
	check(t, steps, liteWant)
	// Pyric only: the denial's failing sub-expression, with its values.
	explained := false
	for _, s := range steps {
		if s.Step == "denied message explains" {
			explained = s.OK && strings.Contains(string(s.Got), `request.auth.uid == uid → 'bob' == 'alice' is false`)
			if !explained {
				t.Errorf("denied message explains: got %s", s.Got)
			}
		}
	}
	if !explained {
		t.Error("no explanation step ran")
	}
	if len(steps) < 20 {
		t.Errorf("%d steps ran, want 20", len(steps))
	}
}

// liteWant is what every step must return, on Pyric and on the official emulator.
var liteWant = map[string]string{
	"updateDoc with transforms":   `{"n":3,"tags":["a","b"],"nested":{"x":1.5},"hasTime":true}`,
	"getDoc missing":              `false`,
	"unicode round trip":          `{"s":"héllo ☃ 𝄞","b":[0,255]}`,
	"addDoc and query":            `[3,1]`,
	"query with limit and cursor": `[2]`,
	"collection group":            `[3,10]`,
	"aggregations":                `{"c":3,"total":6,"avg":2}`,
	"getCount":                    `3`,
	"batch":                       `["b"]`,
	"transaction":                 `2`,
	"contended transactions":      `6`,
	"transaction reading one document and writing another": `7`,
	"deleteDoc":                     `false`,
	"denied read":                   `"permission-denied"`,
	"denied write":                  `"permission-denied"`,
	"denied query":                  `"permission-denied"`,
	"denied message names the rule": `"Request failed with error: \nfalse for 'get' @ L8"`,
	"owner bypasses rules":          `"Alice"`,
	"update missing document":       `"not-found"`,
}
