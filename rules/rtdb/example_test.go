package rtdb_test

import (
	"fmt"

	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
)

func Example() {
	file := source.NewFile("database.rules.json", `{
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null",
        ".write": "auth !== null && auth.uid === $uid",
        "age": { ".validate": "newData.isNumber() && newData.val() >= 0" }
      }
    }
  }
}`)
	rs, diags := rtdb.Compile(file)
	if rs == nil {
		fmt.Println(diags)
		return
	}
	alice := &rtdb.Auth{UID: "alice", Provider: "password"}
	for _, req := range []rtdb.Request{
		{Operation: rtdb.Write, Path: "/users/alice", Auth: alice, NewData: map[string]any{"age": 30.0}},
		{Operation: rtdb.Write, Path: "/users/alice", Auth: alice, NewData: map[string]any{"age": -1.0}},
		{Operation: rtdb.Write, Path: "/users/bob", Auth: alice, NewData: map[string]any{"age": 30.0}},
		{Operation: rtdb.Read, Path: "/users/bob", Auth: nil},
	} {
		d, err := rs.Evaluate(req)
		if err != nil {
			fmt.Println(err)
			continue
		}
		r := d.Rules[d.Deciding]
		fmt.Printf("%s %s: allowed=%v, decided by %s at %s line %d: %s\n",
			req.Operation, req.Path, d.Allowed, r.Operations[0], r.MatchPath, r.Line, r.Verdict)
	}
	// Output:
	// write /users/alice: allowed=true, decided by .write at /users/$uid line 6: ALLOW
	// write /users/alice: allowed=false, decided by .validate at /users/$uid/age line 7: DENY
	// write /users/bob: allowed=false, decided by .write at /users/$uid line 6: DENY
	// read /users/bob: allowed=false, decided by .read at /users/$uid line 5: DENY
}
