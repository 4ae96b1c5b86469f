package rtdb

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/internal/golden"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

// TestDecisionGolden pins everything a decision and its event explanation
// say — every rule's verdict, message and sub-expression trace, the notes,
// bindings and data reads, and sim.Explain of it — for every conformance
// case, untraced (an allowed request) and traced (a denied one), and for
// the benchmark's requests. The golden file was written by the evaluator
// before its allocation cuts: they must not change a byte of it.
func TestDecisionGolden(t *testing.T) {
	type entry struct {
		Name      string
		Trace     bool
		Decision  Decision
		Explained sim.Explained
	}
	var got []entry
	add := func(name string, rs *Ruleset, req Request) {
		for _, trace := range []bool{false, true} {
			req.Trace = trace
			d, err := rs.Evaluate(req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			reason := ""
			if len(d.Notes) > 0 {
				reason = d.Notes[0]
			}
			got = append(got, entry{name, trace, d, sim.Explain("database", reason, d.Rules, d.Deciding, d.Notes, 0, 0)})
		}
	}
	raw, err := conformance.Load("rtdb")
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []conformanceScenario
	if err := json.Unmarshal([]byte(mustJSON(t, raw)), &scenarios); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 7, 12, 3, 35, 3, 0, time.UTC)
	for _, sc := range scenarios {
		rs, diags := Compile(source.NewFile(sc.ID+".json", `{"rules": {`+mustJSON(t, sc.ID)+`: `+sc.Rules+`}}`))
		if rs == nil {
			t.Fatalf("%s: %v", sc.ID, diags)
		}
		for _, c := range sc.Cases {
			opPath := strings.ReplaceAll(c.OpPath, "<UID>", conformanceUID)
			mount := map[string]any{}
			for p, v := range c.Seed {
				setAt(mount, strings.ReplaceAll(p, "<UID>", conformanceUID), substUID(v))
			}
			if c.MockData != nil {
				setAt(mount, opPath, substUID(c.MockData))
			}
			var auth *Auth
			if c.AuthPresent {
				auth = &Auth{UID: conformanceUID, Provider: "anonymous", Token: map[string]any{"sub": conformanceUID}}
			}
			add(sc.ID+" / "+c.Description, rs, Request{Operation: Operation(c.Operation), Path: "/" + sc.ID + opPath,
				Auth: auth, Data: map[string]any{sc.ID: mount}, NewData: substUID(c.NewData), Now: now})
		}
	}
	chat, diags := Compile(source.NewFile("bench.json", benchRules))
	if chat == nil {
		t.Fatal(diags)
	}
	data := map[string]any{"members": map[string]any{"lobby": map[string]any{"user1": true}},
		"users": map[string]any{"user2": map[string]any{"name": "B", "email": "b@example.com"}}}
	profile := map[string]any{"name": "Alice", "email": "alice@example.com"}
	msg := map[string]any{"from": "user1", "text": "hello", "ts": 1.0}
	for name, req := range map[string]Request{
		"profile allowed":      {Operation: Write, Path: "/users/user1", NewData: profile},
		"profile denied":       {Operation: Write, Path: "/users/user2", NewData: profile},
		"profile invalid":      {Operation: Write, Path: "/users/user1", NewData: map[string]any{"name": "A", "email": "x", "age": 3.0}},
		"profile signed out":   {Operation: Write, Path: "/users/user1", NewData: profile, Auth: &Auth{}},
		"message allowed":      {Operation: Write, Path: "/rooms/lobby/messages/m1", NewData: msg},
		"message update":       {Operation: Write, Path: "/", Updates: map[string]any{"rooms/lobby/messages/m2": msg, "users/user1": profile}},
		"message update mixed": {Operation: Write, Path: "/", Updates: map[string]any{"rooms/lobby/messages/m2": msg, "users/user2": profile}},
		"room read":            {Operation: Read, Path: "/rooms/lobby/messages"},
		"room read query":      {Operation: Read, Path: "/rooms/lobby/messages", Query: &Query{OrderByChild: "ts", LimitToLast: 10}},
		"root read":            {Operation: Read, Path: "/"},
	} {
		if req.Auth == nil {
			req.Auth = benchAuth
		} else if req.Auth.UID == "" {
			req.Auth = nil
		}
		req.Data, req.Now = data, now
		add("chat / "+name, chat, req)
	}
	// The map above has no order: sort the chat entries by name.
	chatFrom := len(got) - 20
	sortEntries := got[chatFrom:]
	for i := range sortEntries {
		for j := i + 1; j < len(sortEntries); j++ {
			if sortEntries[j].Name+boolKey(sortEntries[j].Trace) < sortEntries[i].Name+boolKey(sortEntries[i].Trace) {
				sortEntries[i], sortEntries[j] = sortEntries[j], sortEntries[i]
			}
		}
	}
	// One line per entry, so a difference names its case.
	var lines golden.Lines
	for _, e := range got {
		lines.Add(t, e)
	}
	lines.Check(t, "testdata/decisions.golden.json", *update)
}

func boolKey(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
