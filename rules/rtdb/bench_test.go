package rtdb

import (
	"fmt"
	"testing"

	"github.com/pyric/pyric/rules/source"
)

// benchRules is a realistic chat ruleset: profiles, rooms with membership
// looked up through root, and validated messages.
const benchRules = `{
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null",
        ".write": "auth !== null && auth.uid === $uid",
        ".validate": "newData.hasChildren(['name', 'email'])",
        "name": { ".validate": "newData.isString() && newData.val().length > 0 && newData.val().length <= 50" },
        "email": { ".validate": "newData.val().matches(/^[^@]+@[^@]+\\.[a-z]{2,}$/i)" },
        "$other": { ".validate": false }
      }
    },
    "members": { "$room": { "$uid": { ".write": "auth.uid === $uid", ".validate": "newData.isBoolean()" } } },
    "rooms": {
      "$room": {
        ".read": "root.child('members').child($room).child(auth.uid).exists()",
        "messages": {
          ".indexOn": ["ts"],
          "$msg": {
            ".write": "root.child('members/' + $room + '/' + auth.uid).val() === true && !data.exists()",
            ".validate": "newData.hasChildren(['from', 'text', 'ts']) && newData.child('from').val() === auth.uid",
            "from": { ".validate": "newData.isString()" },
            "text": { ".validate": "newData.isString() && newData.val().length <= 1000" },
            "ts": { ".validate": "newData.val() <= now" },
            "$other": { ".validate": false }
          }
        }
      }
    }
  }
}`

func benchData() map[string]any {
	members := map[string]any{}
	users := map[string]any{}
	for i := 0; i < 1000; i++ {
		uid := fmt.Sprintf("user%d", i)
		users[uid] = map[string]any{"name": "User", "email": uid + "@example.com"}
		members[uid] = true
	}
	msgs := map[string]any{}
	for i := 0; i < 1000; i++ {
		msgs[fmt.Sprintf("m%d", i)] = map[string]any{"from": "user1", "text": "hi", "ts": 1.0}
	}
	return map[string]any{
		"users":   users,
		"members": map[string]any{"lobby": members},
		"rooms":   map[string]any{"lobby": map[string]any{"messages": msgs}},
	}
}

func benchDecisions(b *testing.B, req Request) {
	rs, diags := Compile(source.NewFile("bench.json", benchRules))
	if rs == nil {
		b.Fatal(diags)
	}
	if d, err := rs.Evaluate(req); err != nil || !d.Allowed {
		b.Fatalf("benchmark request denied: %v %+v", err, d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rs.Evaluate(req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

var benchAuth = &Auth{UID: "user1", Provider: "password"}

func BenchmarkReadRoom(b *testing.B) {
	benchDecisions(b, Request{Operation: Read, Path: "/rooms/lobby/messages", Auth: benchAuth, Data: benchData(), Now: testNow})
}

func BenchmarkWriteMessage(b *testing.B) {
	benchDecisions(b, Request{Operation: Write, Path: "/rooms/lobby/messages/new1", Auth: benchAuth, Data: benchData(), Now: testNow,
		NewData: map[string]any{"from": "user1", "text": "hello there", "ts": 1.0}})
}

func BenchmarkWriteProfile(b *testing.B) {
	benchDecisions(b, Request{Operation: Write, Path: "/users/user1", Auth: benchAuth, Data: benchData(), Now: testNow,
		NewData: map[string]any{"name": "Alice", "email": "alice@example.com"}})
}

func BenchmarkWriteMessageTraced(b *testing.B) {
	benchDecisions(b, Request{Operation: Write, Path: "/rooms/lobby/messages/new1", Auth: benchAuth, Data: benchData(), Now: testNow,
		NewData: map[string]any{"from": "user1", "text": "hello there", "ts": 1.0}, Trace: true})
}

func BenchmarkCompile(b *testing.B) {
	f := source.NewFile("bench.json", benchRules)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if rs, _ := Compile(f); rs == nil {
			b.Fatal("does not compile")
		}
	}
}
