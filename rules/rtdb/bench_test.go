package rtdb

import (
	"fmt"
	"testing"

	"github.com/pyric/pyric/rules/sim"
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

// decideExplain is what the database engine does per app request: decide
// untraced, decide again traced when denied, and build the event's
// explanation (sim.Explain).
func decideExplain(rs *Ruleset, req Request) sim.Explained {
	dec, _ := rs.Evaluate(req)
	if !dec.Allowed {
		req.Trace = true
		dec, _ = rs.Evaluate(req)
	}
	reason := ""
	if len(dec.Notes) > 0 {
		reason = dec.Notes[0]
	}
	return sim.Explain("database", reason, dec.Rules, dec.Deciding, dec.Notes, 0, 0)
}

// BenchmarkDecideExplain decides and explains a JS SDK's set as the
// database engine does: allowed by a constant `.write: true` (the rules
// apps start with), allowed by an ownership rule, and denied by it.
func BenchmarkDecideExplain(b *testing.B) {
	open, diags := Compile(source.NewFile("open.json", `{"rules": {".read": true, ".write": true, "scores": {".indexOn": ["score"]}}}`))
	if open == nil {
		b.Fatal(diags)
	}
	chat, diags := Compile(source.NewFile("bench.json", benchRules))
	if chat == nil {
		b.Fatal(diags)
	}
	data := map[string]any{"users": map[string]any{"user2": map[string]any{"name": "B", "email": "b@example.com"}}}
	profile := map[string]any{"name": "Alice", "email": "alice@example.com"}
	for _, c := range []struct {
		name  string
		rs    *Ruleset
		req   Request
		allow bool
	}{
		{"open-allowed", open, Request{Operation: Write, Path: "/scores/s1", Auth: benchAuth, Data: data, Now: testNow,
			NewData: map[string]any{"score": 1.0, "name": "x"}}, true},
		{"owner-allowed", chat, Request{Operation: Write, Path: "/users/user1", Auth: benchAuth, Data: data, Now: testNow, NewData: profile}, true},
		{"owner-denied", chat, Request{Operation: Write, Path: "/users/user2", Auth: benchAuth, Data: data, Now: testNow, NewData: profile}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			if exp := decideExplain(c.rs, c.req); (exp.Decision.Reason != "") != true || (c.allow != (exp.Rule != nil && exp.Decision.Failing == nil)) {
				b.Fatalf("unexpected decision %+v", exp.Decision)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				decideExplain(c.rs, c.req)
			}
		})
	}
}
