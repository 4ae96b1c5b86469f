package ai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// The engine as a sandbox service on the real store: a consumed script
// entry and the call log survive closing and reopening the sandbox;
// sandbox reset and snapshot/restore reach the engine by name.
func TestSandboxService(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() (*sandbox.Sandbox, *ai.Engine) {
		t.Helper()
		sb, err := sandbox.Open(sandbox.Options{DataDir: dir, Project: "demo-ai", Services: []service.Registration{ai.Registration(ai.Options{})}})
		if err != nil {
			t.Fatal(err)
		}
		eng, ok := sandbox.Lookup[*ai.Engine](sb)
		if !ok || sb.Service("ai") != eng {
			t.Fatal("ai engine not registered")
		}
		return sb, eng
	}
	sb, eng := open()
	entries, _ := ai.DecodeScript([]byte(`[{"text":"one"},{"text":"two"}]`))
	if err := eng.SetScript("demo-ai", entries); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"contents":[{"parts":[{"text":"hi"}]}]}`)
	c := ai.Call{Project: "demo-ai", Backend: ai.BackendGoogleAI, Model: "gemini-2.5-flash", APIKey: "k", Body: body}
	if _, err := eng.GenerateContent(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	var sawEvent bool
	for _, e := range sb.Events().History() {
		if e.Mutation == nil {
			continue
		}
		if c, ok := e.Mutation.Current.(ai.CallEvent); e.Service == "ai" && e.Method == "generateContent" && ok && c.Answer == "one" {
			sawEvent = true
		}
	}
	if !sawEvent {
		t.Error("no generateContent event on the sandbox bus")
	}
	snap, err := sb.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]json.RawMessage `json:"services"`
	}
	if json.Unmarshal(snap, &doc); doc.Services["ai"] == nil {
		t.Fatalf("snapshot lacks the ai service: %s", snap)
	}
	sb.Close()

	sb, eng = open()
	if s := eng.Script("demo-ai"); len(s) != 1 || *s[0].Text != "two" {
		t.Fatalf("reopened script %+v", s)
	}
	if calls := eng.Calls("demo-ai"); len(calls) != 1 || calls[0].Answer != "one" {
		t.Fatalf("reopened calls %+v", calls)
	}
	if err := sb.Reset(); err != nil {
		t.Fatal(err)
	}
	if len(eng.Calls("demo-ai")) != 0 || len(eng.Script("demo-ai")) != 0 {
		t.Error("reset kept ai state")
	}
	if err := sb.LoadSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if len(eng.Calls("demo-ai")) != 1 || len(eng.Script("demo-ai")) != 1 {
		t.Error("snapshot restore lost ai state")
	}
	sb.Close()
	sb, eng = open()
	defer sb.Close()
	if len(eng.Calls("demo-ai")) != 1 {
		t.Error("restored state not durable")
	}
}
