package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/mcp"
	"github.com/pyric/pyric/reqlog"
	"github.com/pyric/pyric/server"
	fsserver "github.com/pyric/pyric/server/firestore"
	"github.com/pyric/pyric/snapshot"
)

// frontends are what `pyric serve` and `pyric exec` run beside the
// backend: the Studio on its port with /mcp and the admin routes mounted,
// the Emulator Suite hub, the denial log on stderr and the session
// capture.
type frontends struct {
	studioAddr, hubAddr string
	capturePath         string

	servers []*http.Server
	rec     *capture.Recorder
	stopLog func()
}

// Admin routes on the Studio port.
const (
	captureRoute  = "/__pyric/capture"
	snapshotRoute = "/__pyric/snapshot"
	exportRoute   = "/__pyric/export"
	branchRoute   = "/__pyric/branch"
	indexesRoute  = "/__pyric/indexes"
	hostingRoute  = "/__pyric/hosting"
)

// startFrontends starts the frontends of b. Their ports are opened before
// anything serves, so the hub's list is complete when it first answers.
func startFrontends(ctx context.Context, b *backend.Backend, o *serveOptions, stdio Stdio) (*frontends, error) {
	f := &frontends{}
	if o.importDir != "" {
		if err := snapshot.ImportDir(b.Sandbox, o.importDir); err != nil {
			return nil, fmt.Errorf("--import %s: %v", o.importDir, err)
		}
	}
	if o.seed != "" && o.dataDir == "" {
		data, err := os.ReadFile(o.seed)
		if err != nil {
			return nil, fmt.Errorf("--seed: %v", err)
		}
		if err := snapshot.Seed(ctx, b.Sandbox, data); err != nil {
			return nil, fmt.Errorf("--seed %s: %v", o.seed, err)
		}
	}
	if o.capture != "" {
		rec, err := capture.Start(ctx, b.Sandbox, o.capture, capture.Options{CapturedBy: "pyric " + Version, Warn: warnTo(stdio.Err), Previous: o.previousSession})
		if err != nil {
			return nil, fmt.Errorf("capture: %v", err)
		}
		f.rec, f.capturePath = rec, o.capture
	}
	f.stopLog = reqlog.Start(b.Sandbox.Events(), stdio.Err, reqlog.Options{JSON: o.logJSON, Quiet: o.quiet})

	open := func(name string, port int) (net.Listener, error) {
		if port < 0 {
			return nil, nil
		}
		l, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(port)))
		if err != nil {
			return nil, fmt.Errorf("%s cannot listen on port %d: %v (pick another with --%s-port, or 0 for a free one)", name, port, err, name)
		}
		return l, nil
	}
	hubL, err := open("hub", o.hubPort)
	if err != nil {
		f.close(context.Background())
		return nil, err
	}
	uiL, err := open("studio", o.studioPort)
	if err != nil {
		if hubL != nil {
			hubL.Close()
		}
		f.close(context.Background())
		return nil, err
	}
	extra := map[string]string{}
	if hubL != nil {
		f.hubAddr = hubL.Addr().String()
		extra["hub"] = f.hubAddr
	}
	if uiL != nil {
		f.studioAddr = uiL.Addr().String()
		extra["ui"] = f.studioAddr
	}
	session := func() (*capture.Fixture, error) {
		if f.rec != nil {
			return f.rec.Fixture()
		}
		return capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History())
	}
	mount := map[string]http.Handler{
		"/mcp": mcp.LazyHandler(b.Sandbox, mcp.Options{Name: "pyric", Version: Version, Policy: o.policy, Registrations: backend.Services(&backend.Options{}), Capture: func() (*capture.Fixture, error) {
			return capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History())
		}, FunctionsURL: func() string {
			if a := b.Addr(backend.Functions); a != "" {
				return "http://" + a
			}
			return ""
		}}),
		snapshotRoute: snapshot.Handler(b.Sandbox),
		exportRoute:   snapshot.ExportHandler(b.Sandbox),
		branchRoute: http.StripPrefix(branchRoute, fsserver.BranchHandler(b.Sandbox, fsserver.BranchOptions{LiveRules: func() (string, string, bool) {
			if rl := b.Rules(backend.Firestore); rl != nil {
				return rl.RulesFile()
			}
			return "", "", false
		}, Session: capture.Encoded(session), Decode: capture.EventDecoder(backend.Services(&backend.Options{}))})),
	}
	mount[captureRoute] = http.StripPrefix(captureRoute, capture.AdminHandler(session, fixturesDir(o.dataDir)))
	mount[indexesRoute] = fsserver.IndexesHandler(func() ([]event.Event, error) {
		f, err := session()
		if err != nil {
			return nil, err
		}
		return f.Events, nil
	})
	if he := b.Hosting(); he != nil {
		mount[hostingRoute] = hostingHandler(he)
	}
	var policy atomic.Pointer[server.Policy]
	policy.Store(o.policy)
	f.serve(hubL, server.Guard(newHub(b, o.project, func() map[string]string { return extra }), &policy))
	f.serve(uiL, server.Guard(newStudio(b, o.rulesPaths, mount, o.policy), &policy))
	return f, nil
}

func (f *frontends) serve(l net.Listener, h http.Handler) {
	if l == nil {
		return
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	f.servers = append(f.servers, s)
	go func() { _ = s.Serve(l) }()
}

// printBanner adds the frontends to serve's banner.
func (f *frontends) printBanner(w io.Writer) {
	if f.studioAddr != "" {
		fmt.Fprintf(w, "  %-10s %-22s %-35s http://%s (MCP: http://%s/mcp)\n", "Studio", f.studioAddr, "Studio + event API", f.studioAddr, f.studioAddr)
	}
	if f.hubAddr != "" {
		fmt.Fprintf(w, "  %-10s %-22s %-35s FIREBASE_EMULATOR_HUB=%s\n", "Hub", f.hubAddr, "Emulator Suite hub", f.hubAddr)
	}
	if f.capturePath != "" {
		fmt.Fprintf(w, "  %-10s %s (pyric verify --rules CANDIDATE replays it)\n", "Capture", f.capturePath)
	}
}

// jsonKeys adds the frontends to --json's line.
func (f *frontends) jsonKeys(line map[string]string) {
	if f.studioAddr != "" {
		line["studio"] = "http://" + f.studioAddr
	}
	if f.hubAddr != "" {
		line["hub"] = f.hubAddr
	}
}

// close stops the frontends: the capture writes the final state first, so
// call it before the backend shuts down.
func (f *frontends) close(ctx context.Context) error {
	var err error
	if f.rec != nil {
		err = f.rec.Close()
	}
	for _, s := range f.servers {
		_ = s.Shutdown(ctx)
	}
	if f.stopLog != nil {
		f.stopLog()
	}
	return err
}

// fixturesDir is where the Studio keeps named fixtures, as `pyric capture
// save` does: fixtures/ beside the default .pyric data directory, else
// in the working directory.
func fixturesDir(dataDir string) string {
	if dataDir != "" && filepath.Base(dataDir) == ".pyric" {
		return filepath.Join(filepath.Dir(dataDir), "fixtures")
	}
	if wd, err := os.Getwd(); err == nil {
		return filepath.Join(wd, "fixtures")
	}
	return "fixtures"
}

// defaultCapture is where serve captures the session: the data
// directory's last-session.json (in memory: nowhere unless named).
func defaultCapture(dataDir string) string {
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, "last-session.json")
}
