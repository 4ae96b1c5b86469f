package verify_test

import (
	"fmt"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/verify"
)

// A Realtime Database session in which bob wrote his profile, replayed
// against rules that no longer let bob write: his write is now denied,
// and the final state drifts where it is missing.
func ExampleRun() {
	f, err := capture.DecodeWith([]byte(`{"schema": "pyric.verify.fixture.v1", "events": [
	  {"seq": 1, "kind": "request", "service": "database", "method": "set", "path": "/users/bob",
	   "identity": {"lens": "user", "uid": "bob"}, "verdict": "allow", "seen": {"data": {"name": "Bob"}}},
	  {"seq": 2, "kind": "commit", "service": "database", "method": "set", "path": "/users/bob",
	   "identity": {"lens": "user", "uid": "bob"}, "before": null, "after": {"name": "Bob"}}],
	 "services": {"database": {
	   "rules": {"format": "rtdb.rules.json", "json": {"rules": {"users": {"$uid": {".write": "auth.uid === $uid"}}}}},
	   "state": {"namespaces": {"demo-default-rtdb": {"data": {"users": {"bob": {"name": "Bob"}}}}}}}}}`), backend.Services(&backend.Options{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	candidate := source.NewFile("database.rules.json", `{"rules": {"users": {"$uid": {".write": "auth.uid === $uid && auth.uid !== 'bob'"}}}}`)
	res, err := verify.Run(f, verify.Options{
		Registrations: backend.Services(&backend.Options{}), // the services pyric serves
		Candidates:    map[string]*source.File{"database": candidate},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ok:", res.OK)
	for _, d := range res.Services["database"].Divergences {
		fmt.Println(d.Kind, d.Method, d.Path, d.Before, "->", d.After)
	}
	// Output:
	// ok: false
	// now-denied set /users/bob allow -> deny
	// state-drift  /users/bob/name Bob -> <nil>
}
