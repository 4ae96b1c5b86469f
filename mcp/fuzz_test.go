package mcp

import (
	"context"
	"encoding/json"
	"sort"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// FuzzToolArguments feeds arbitrary argument bytes to every tool's
// decoder and handler: each call answers an envelope, and a failure is a
// coded error, never a panic (which safely would report as INTERNAL).
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"path":"a/b"}`, `{"path":"a//b","as":{"uid":""}}`, `{"rules":"x","documents":{"a/b":{"x":1}}}`,
		`{"reads":{"a":"x/y"},"writes":[{"method":"set","path":"x/y","data":{"v":{"$expr":"$a.v + 1"}}}],"auth":null}`,
		`{"operations":[{"op":"set","path":"p/q","data":{"n":1}}]}`, `{"collection":"c","where":[{"field":"a","op":"in","value":[1]}]}`,
		`{"continuation":"disc_x"}`, `{"maxBatchBytes":1024}`, `[1,2]`, `{"source":"rules_version='2';","testCases":[{}]}`,
		`{"path":"/a","maxDepth":3,"maxChildren":2,"maxNodes":5}`, `{"namespace":"x","as":{"anonymous":true}}`, `{"fixture":"/nonexistent","rules":"x"}`, `{"rules":"x","caseDerivation":true}`} {
		f.Add(0, []byte(s))
	}
	sb, err := sandbox.Open(sandbox.Options{Deterministic: true, Services: []service.Registration{database.Registration(database.Options{})}})
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	srv := NewServer(sb, Options{})
	names := make([]string, 0, len(srv.handlers))
	for n := range srv.handlers {
		names = append(names, n)
	}
	sort.Strings(names)
	f.Fuzz(func(t *testing.T, which int, args []byte) {
		if which < 0 {
			which = -which
		}
		name := names[which%len(names)]
		res, err := srv.handlers[name](context.Background(), &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: name, Arguments: args}})
		if err != nil {
			t.Fatalf("%s(%s): protocol error %v", name, args, err)
		}
		var env struct {
			OK   bool `json:"ok"`
			Data struct {
				Error *ToolError `json:"error"`
			} `json:"data"`
		}
		if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &env); err != nil {
			t.Fatalf("%s: not an envelope: %v", name, err)
		}
		if env.Data.Error != nil && env.Data.Error.Code == "INTERNAL" {
			t.Fatalf("%s(%s): %s", name, args, env.Data.Error.Message)
		}
	})
}

// BenchmarkToolCall measures one tool call over the SDK's in-memory
// transport (JSON-RPC framing, schema validation, the engine, the event).
func BenchmarkToolCall(b *testing.B) {
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	srv := NewServer(sb, Options{})
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "firestore_create_document", Arguments: map[string]any{"path": "b/1", "data": map[string]any{"n": 1}}}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "firestore_get_document", Arguments: map[string]any{"path": "b/1", "as": map[string]any{"uid": "u"}}})
		if err != nil || res == nil {
			b.Fatal(err)
		}
	}
}
