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
    match /multi/{d} {
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
