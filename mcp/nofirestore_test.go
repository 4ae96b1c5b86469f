package mcp

import (
	"testing"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// A sandbox runs only the services it is given: on one without Firestore
// the Firestore tools say the service is not running, and the tools of
// the services it runs work.
func TestFirestoreToolsWithoutFirestore(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{Deterministic: true, Seed: 1, Services: []service.Registration{database.Registration(database.Options{})}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	e := newEnvUsing(t, sb, Options{})
	for name, args := range map[string]any{
		"firestore_get_document":          map[string]any{"path": "a/b"},
		"firestore_create_document":       map[string]any{"path": "a/b", "data": map[string]any{"x": 1}},
		"firestore_query_where":           map[string]any{"collection": "a", "where": []any{}},
		"firestore_discover_paths":        map[string]any{},
		"firestore_find_collection_group": map[string]any{"collectionId": "a"},
	} {
		r := e.call(name, args)
		if r.OK || r.errCode() != "SERVICE_UNAVAILABLE" {
			t.Errorf("%s without Firestore: ok=%v code=%q %s", name, r.OK, r.errCode(), r.Summary)
		}
	}
	if r := e.call("rtdb_crawl_structure", map[string]any{"path": "/"}); !r.OK {
		t.Errorf("rtdb_crawl_structure on the database it runs: %s", r.Summary)
	}
}
