package firestorejs

import (
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/server/firestore/fstest"
)

const nodeRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /tasks/{t} {
      allow read, write: if request.auth != null;
    }
    match /counters/{c} {
      allow read, write: if request.auth != null;
    }
    match /offline/{d} {
      allow read, write: if request.auth != null;
    }
  }
}
`

// TestNodeSDK runs the Node build of the SDK, which speaks gRPC: every
// write goes over the Write stream, reads and listeners over one Listen
// stream carrying several targets, transactions over BatchGetDocuments and
// Commit with preconditions.
func TestNodeSDK(t *testing.T) {
	needNode(t)
	srv := fstest.Start(t, fstest.Options{Project: "demo-node", Rules: nodeRules})
	steps := runScript(t, 2*time.Minute, "node_sdk.cjs", "FS="+srv.Addr, "PROJECT=demo-node")
	check(t, steps, nodeWant)
	explained(t, steps, `request.auth.uid == uid → 'bob' == 'alice' is false`)
}

// explained checks the "denied message explains" step: after the
// emulator's wording, the message the app receives names the failing
// sub-expression with its values (Pyric only: the official emulator stops
// at its wording).
func explained(t *testing.T, steps []step, want string) {
	t.Helper()
	for _, s := range steps {
		if s.Step == "denied message explains" {
			if !s.OK || !strings.Contains(string(s.Got), "false for 'update' @ L") && !strings.Contains(string(s.Got), "false for 'create' @ L") || !strings.Contains(string(s.Got), want) {
				t.Errorf("denied message explains: got %s, want the emulator's wording then %q", s.Got, want)
			}
			return
		}
	}
	t.Error("no explanation step ran")
}

// nodeWant is what every step must return, on Pyric and on the official emulator.
var nodeWant = map[string]string{
	"setDoc over the Write stream":                  `null`,
	"getDoc over Listen":                            `{"name":"Alice","n":1}`,
	"getDocFromServer missing":                      `false`,
	"three listeners on one stream":                 `["",0,null]`,
	"live updates reach the right targets":          `{"open":"t2","closed":0,"doc":null}`,
	"unsubscribe one target, others keep listening": `1`,
	"getDocs":                         `["t2","t3"]`,
	"aggregation over gRPC":           `{"c":2,"s":5}`,
	"batch":                           `3`,
	"transaction":                     `10`,
	"contended transactions retry":    `15`,
	"transaction creating a document": `false`,
	"transaction reading one document and writing another": `7`,
	"offline writes sync on enableNetwork":                 `{"local":[true,true],"serverBefore":false,"serverAfter":{"v":"from offline"},"seenOffline":[null],"seen":[null,"changed while away"]}`,
	"denied write":                                         `"permission-denied"`,
	"denied read":                                          `"permission-denied"`,
	"denied listen":                                        `"permission-denied"`,
	"denied transaction":                                   `"permission-denied"`,
	"writes still flow after denials":                      `"Bob"`,
}
