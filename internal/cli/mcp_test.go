package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdio runs `pyric mcp --rules F` on pipes and drives it with the
// Go SDK's client over the stdio framing.
func TestMCPStdio(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // pyric mcp loads ./firestore.rules by default
	rules := filepath.Join(dir, "firestore.rules")
	os.WriteFile(rules, []byte("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /notes/{id} {\n      allow read, write: if request.auth != null;\n    }\n  }\n}\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"mcp"}, Stdio{In: inR, Out: outW, Err: io.Discard})
		outW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) < 25 {
		t.Fatalf("%v %d tools", err, len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "firestore_simulator_execute", Arguments: map[string]any{
		"method": "create", "path": "notes/n1", "auth": nil, "data": map[string]any{"t": "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		OK   bool           `json:"ok"`
		Data map[string]any `json:"data"`
	}
	json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &env)
	if env.OK || env.Data["allowed"] != false || !strings.Contains(strings.Join(toStrings(env.Data["debugMessages"]), "\n"), "line 5") {
		t.Fatalf("the --rules file is not enforced: %+v", env)
	}
	cs.Close()
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Bad flags and rules.
	os.WriteFile(rules, []byte("service cloud.firestore { match"), 0o644)
	if code := Run(ctx, []string{"mcp", "--rules", rules}, Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}); code != exitError {
		t.Fatalf("bad rules: exit %d", code)
	}
	if code := Run(ctx, []string{"mcp", "extra"}, Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}); code != exitError {
		t.Fatalf("extra arg: exit %d", code)
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
