package databasejs

import (
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

// TestNodeUnindexedQueries: queries the rules do not index, through the
// JS SDK over the WebSocket, answered as production answers them.
// conformance: database.query.index
func TestNodeUnindexedQueries(t *testing.T) {
	e2etest.NeedNode(t)
	addr, _ := serve(t, "demo-rtdb", rules)
	steps := runScript(t, 2*time.Minute, "node_index.cjs", "DB="+addr, "NS=demo-rtdb-default-rtdb")
	e2etest.CheckSteps(t, steps, e2etest.Want{Listed: true, Steps: map[string]string{
		"seed":                             `null`,
		"get orderByChild limit unindexed": `"Index not defined, add \".indexOn\": \"score\", for path \"/public/raw\", to the rules"`,
		"get orderByValue limit unindexed": `"Index not defined, add \".indexOn\": \".value\", for path \"/public/vals\", to the rules"`,
		"get orderByChild range unindexed": `"Index not defined, add \".indexOn\": \"score\", for path \"/public/raw\", to the rules"`,
		"get orderByChild without limit":   `["a","b","c"]`,
		"get orderByKey limit":             `{"a":{"score":3},"b":{"score":1}}`,
		"get indexed orderByChild limit":   `["b","c"]`,
		"listener on unindexed query":      `{"first":["b","c"],"last":["a","b"],"warned":true}`,
	}})
}
