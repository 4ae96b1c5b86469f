package database_test

import (
	"encoding/json"
	"fmt"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

func Example() {
	db, _ := database.New(service.Env{Project: "demo"}, database.Options{
		Rules: `{"rules": {"scores": {".read": true, ".write": "auth != null", ".indexOn": ["score"]}}}`,
	})
	ns := database.DefaultNamespace("demo")
	alice := identity.NewUser("alice", nil)
	for k, s := range map[string]int{"a": 30, "b": 10, "c": 20} {
		if _, err := db.Set(alice, ns, "scores/"+k, map[string]any{"score": s}, database.WriteOptions{}); err != nil {
			fmt.Println(err)
		}
	}
	_, err := db.Set(identity.Anonymous(), ns, "scores/d", map[string]any{"score": 1}, database.WriteOptions{})
	fmt.Println("anonymous write:", err)

	q := database.Query{Index: "score", Limit: 2}
	r, _ := db.Get(alice, ns, "scores", &q, true)
	b, _ := json.Marshal(database.Plain(r.Value))
	fmt.Println("lowest two:", string(b))
	// Output:
	// anonymous write: Permission denied
	// lowest two: {"b":{"score":10},"c":{"score":20}}
}
