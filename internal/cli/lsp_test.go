package cli

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestLSPCommand runs `pyric lsp` on buffers: initialize, shutdown and
// exit get answers and a clean exit.
func TestLSPCommand(t *testing.T) {
	frame := func(body string) string {
		return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	in := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`) +
		frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`) +
		frame(`{"jsonrpc":"2.0","method":"exit"}`)
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"lsp", "--stdio"}, Stdio{In: strings.NewReader(in), Out: &out, Err: &errb})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"name":"pyric lsp"`) || !strings.Contains(out.String(), `"id":2`) {
		t.Fatalf("output: %s", out.String())
	}
	if code := Run(context.Background(), []string{"lsp", "extra"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}); code != exitError {
		t.Fatalf("an argument: exit %d", code)
	}
}
