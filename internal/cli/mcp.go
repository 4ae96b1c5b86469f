package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/mcp"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox"
)

func init() {
	register(command{
		path:    "mcp",
		args:    "[--rules F] [--database-rules F] [--project P] [--data-dir D] [--listen ADDR]",
		summary: "serve the MCP tools for coding agents over stdio (or streamable HTTP at /mcp) on a headless sandbox",
		run:     runMCP,
	})
}

// runMCP is `pyric mcp`: an MCP server on a sandbox of its own, over
// stdio (one client, the agent that started it) or, with --listen, over
// streamable HTTP at /mcp. Logs go to stderr; stdout carries the protocol.
func runMCP(ctx context.Context, args []string, stdio Stdio) int {
	f := newFlagSet("mcp", stdio)
	rulesPath := f.String("rules", "", "firestore.rules to enforce (default: ./firestore.rules when present; without rules client requests are denied until firestore_simulator_create loads some)")
	dbRulesPath := f.String("database-rules", "", "database.rules.json for rtdb_simulate_access (default: ./database.rules.json when present)")
	project := f.String("project", sandbox.DefaultProject, "project id")
	dataDir := f.String("data-dir", "", "keep the sandbox's state in this directory (default: in memory)")
	listenAddr := f.String("listen", "", "serve streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:4000)")
	pos, ok := parseFlags(f, args)
	if !ok {
		return exitError
	}
	if len(pos) != 0 {
		fmt.Fprintln(stdio.Err, "usage: pyric mcp [--rules firestore.rules] [--database-rules database.rules.json] [--project P] [--data-dir D] [--listen ADDR]")
		return exitError
	}
	if *rulesPath == "" && fileExists("firestore.rules") {
		*rulesPath = "firestore.rules"
	}
	if *dbRulesPath == "" && fileExists("database.rules.json") {
		*dbRulesPath = "database.rules.json"
	}
	// A headless sandbox with every service the backend registers (the
	// Realtime Database for rtdb_crawl_structure, Storage, …).
	sb, err := sandbox.Open(sandbox.Options{Project: *project, DataDir: *dataDir, Services: backend.Services(&backend.Options{})})
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric mcp: %v\n", err)
		return exitError
	}
	defer sb.Close()
	if *rulesPath != "" {
		file, err := readSource(*rulesPath)
		if err != nil {
			fmt.Fprintf(stdio.Err, "pyric mcp: --rules: %v\n", err)
			return exitError
		}
		gate, diags := firestore.NewRulesGate(file)
		if gate == nil {
			for _, d := range diags {
				fmt.Fprintln(stdio.Err, source.Render(file, d))
			}
			return exitError
		}
		fs, _ := sandbox.Lookup[*firestore.Engine](sb) // backend.Services registers it
		fs.SetRules(gate)
		fmt.Fprintf(stdio.Err, "pyric mcp: enforcing %s\n", *rulesPath)
	} else {
		fmt.Fprintln(stdio.Err, "pyric mcp: no firestore.rules: every client request is denied until firestore_simulator_create loads rules (admin requests bypass rules)")
	}
	opts := mcp.Options{Name: "pyric", Version: Version, Registrations: backend.Services(&backend.Options{})}
	if *dbRulesPath != "" {
		b, err := os.ReadFile(*dbRulesPath)
		if err != nil {
			fmt.Fprintf(stdio.Err, "pyric mcp: --database-rules: %v\n", err)
			return exitError
		}
		text := string(b)
		opts.RTDB = func() (string, any) { return text, nil }
	}
	srv := mcp.NewServer(sb, opts)
	if *listenAddr != "" {
		return serveMCPHTTP(ctx, srv, *listenAddr, stdio)
	}
	t := &sdk.IOTransport{Reader: io.NopCloser(stdio.In), Writer: nopWriteCloser{stdio.Out}}
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stdio.Err, "pyric mcp: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func serveMCPHTTP(ctx context.Context, srv *mcp.Server, addr string, stdio Stdio) int {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric mcp: --listen: %v\n", err)
		return exitError
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdio.Err, "pyric mcp: serving MCP over streamable HTTP at http://%s/mcp\n", l.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return exitOK
	case err := <-done:
		fmt.Fprintf(stdio.Err, "pyric mcp: %v\n", err)
		return exitFailure
	}
}
