package cli

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/e2etest"
)

// TestBareFlagsServe: `pyric --in-memory ...` (flags, no command) serves.
func TestBareFlagsServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"--json", "--in-memory", "--project", "demo-bare"}, e2etest.FreePortFlags()...), Stdio{Out: pw, Err: io.Discard})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no JSON line: %v", err)
	}
	if !strings.Contains(line, `"project":"demo-bare"`) {
		t.Errorf("line = %s", line)
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
