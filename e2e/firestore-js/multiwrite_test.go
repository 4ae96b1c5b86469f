package firestorejs

import (
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// multiRules let any signed-in user write the multi collection.
const multiRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{coll}/{d} {
      allow read, write: if request.auth != null;
    }
  }
}
`

// multiWant is what a listener with includeMetadataChanges sees once the
// server has confirmed each batch (a later get agrees, checked by the
// script), on Pyric and on the official emulator alike.
var multiWant = map[string]string{
	"delete, set, update with serverTimestamp":              `{"error":null,"data":{"a":1,"b":2,"when":"<ts>"},"pending":false}`,
	"set, then set-with-merge carrying transforms":          `{"error":null,"data":{"m":{"q":1},"n":3,"tags":["x","y"],"when":"<ts>"},"pending":false}`,
	"set-with-merge mergeFields naming a transformed field": `{"error":null,"data":{"n":10,"other":3},"pending":false}`,
	"two transforms on one field in one commit":             `{"error":null,"data":{"arr":[2],"n":6.5},"pending":false}`,
	"increment then serverTimestamp on one field":           `{"error":null,"data":{"n":"<ts>"},"pending":false}`,
	"update, delete, update fails":                          `{"error":"invalid-argument","data":{"a":1},"pending":false}`,
	"update, delete, set, update":                           `{"error":null,"data":{"a":3,"b":4,"c":"<ts>"},"pending":false}`,
	"update deleting a field a transform then sets":         `{"error":null,"data":{"n":1},"pending":false}`,
}

// TestMultiWriteCommits commits batches that write one document several
// times (delete then set then update with a server timestamp, set-with-merge
// with transforms, two transforms on one field, a delete between updates)
// through the Node SDK while a listener watches the document.
// conformance: firestore.write.multi, firestore.listen.metadata-changes, firestore.transform.chained
func TestMultiWriteCommits(t *testing.T) {
	needNode(t)
	srv := fstest.Start(t, fstest.Options{Project: "demo-multi", Rules: multiRules})
	steps := runScript(t, 3*time.Minute, "multiwrite.cjs", "FS="+srv.Addr, "PROJECT=demo-multi")
	e2etest.CheckSteps(t, steps, e2etest.Want{Steps: multiWant, Listed: true})
}

// TestOracleMultiWriteCommits runs the same batches on the official
// emulator with the same expectations.
func TestOracleMultiWriteCommits(t *testing.T) {
	needNode(t)
	project := uniqueProject("demo-multi")
	addr := oracle(t, project, multiRules)
	steps := runScript(t, 3*time.Minute, "multiwrite.cjs", "FS="+addr, "PROJECT="+project)
	e2etest.CheckSteps(t, steps, e2etest.Want{Steps: multiWant, Listed: true})
}

// TestMultiInequalityQueries runs queries with inequalities on several
// fields and on the document id (limit, limitToLast, cursors from
// snapshots) through the Node SDK on Pyric and on the official emulator:
// every step must return the same documents in the same order.
func TestMultiInequalityQueries(t *testing.T) {
	needNode(t)
	project := uniqueProject("demo-ineq")
	addr := oracle(t, project, multiRules)
	srv := fstest.Start(t, fstest.Options{Project: "demo-ineq", Rules: multiRules})
	theirs := runScript(t, 2*time.Minute, "multiineq.cjs", "FS="+addr, "PROJECT="+project)
	want := map[string]string{}
	for _, s := range theirs {
		if !s.OK {
			t.Fatalf("official emulator: step %q failed: %s", s.Step, s.Error)
		}
		want[s.Step] = string(s.Got)
	}
	if len(want) < 10 {
		t.Fatalf("the official emulator ran %d steps, want 10", len(want))
	}
	ours := runScript(t, 2*time.Minute, "multiineq.cjs", "FS="+srv.Addr, "PROJECT=demo-ineq")
	e2etest.CheckSteps(t, ours, e2etest.Want{Steps: want, Listed: true})
}
