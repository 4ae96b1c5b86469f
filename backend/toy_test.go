package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/mcp"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
	"github.com/pyric/pyric/snapshot"
	"github.com/pyric/pyric/studio"
)

// toy is a service that exists only in this test: a durable set of
// named counters implementing the optional capabilities of the data
// tools (typed state, state check, capture, export and import,
// description, Studio pages) and of rules (live rules, replay, re-run:
// toy_rules_test.go, a rules language of its own). It must appear in
// snapshots, exports, captures, the Studio, verify and the MCP server's
// resources with no edit in those tools.
type toy struct {
	mu     sync.Mutex
	env    service.Env
	counts map[string]int64
	// rules are the toy.rules in force (nil: none); counting says whether
	// decisions count coverage.
	rules    *toyRuleset
	counting bool
}

// toyState is the toy's snapshot state.
type toyState struct {
	Counts map[string]int64 `json:"counts"`
}

const toyName = "toy"

var toyRegistration = service.Registration{Name: toyName, New: func(env service.Env) (service.Service, error) {
	t := &toy{env: env, counts: map[string]int64{}}
	if env.Bucket == nil {
		return t, nil
	}
	err := env.Bucket.View(func(tx service.Tx) error {
		return tx.ForEach(nil, func(k, v []byte) error {
			var n int64
			if _, err := fmt.Sscan(string(v), &n); err != nil {
				return &service.DamagedError{Problem: fmt.Sprintf("toy counter %q holds %q", k, v)}
			}
			t.counts[string(k)] = n
			return nil
		})
	})
	return t, err
}}

func (t *toy) Name() string { return toyName }

func (t *toy) Reset() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts = map[string]int64{}
	return nil
}

func (t *toy) Snapshot() (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return json.Marshal(toyState{Counts: t.counts})
}

func (t *toy) decode(state json.RawMessage) (map[string]int64, error) {
	var s toyState
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	for k := range s.Counts {
		if k == "" {
			return nil, errors.New("a counter needs a name")
		}
	}
	if s.Counts == nil {
		s.Counts = map[string]int64{}
	}
	return s.Counts, nil
}

func (t *toy) CheckState(state json.RawMessage) error {
	_, err := t.decode(state)
	return err
}

func (t *toy) Restore(state json.RawMessage) error {
	counts, err := t.decode(state)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.env.Bucket != nil {
		err := t.env.Bucket.Update(func(tx service.Tx) error {
			if err := tx.DeletePrefix(nil); err != nil {
				return err
			}
			for k, v := range counts {
				if err := tx.Put([]byte(k), []byte(fmt.Sprint(v))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	t.counts = counts
	return nil
}

func (t *toy) NewState() any { return &toyState{} }

func (t *toy) Describe() string { return "Toy: named counters." }

// StudioPages gives the toy a page of its own; with no view of its own
// in the UI, the Studio draws its state with the generic one.
func (t *toy) StudioPages() []service.StudioPage {
	return []service.StudioPage{{Path: "/toy", Label: "Toy counters"}}
}

// CaptureState keeps only the counters' names.
func (t *toy) CaptureState() (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := []string{}
	for k := range t.counts {
		names = append(names, k)
	}
	sort.Strings(names)
	return json.Marshal(map[string]any{"names": names})
}

func (t *toy) Export(root string) (service.ExportEntry, error) {
	st, err := t.Snapshot()
	if err != nil {
		return service.ExportEntry{}, err
	}
	dir := filepath.Join(root, "toy_export")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return service.ExportEntry{}, err
	}
	return service.ExportEntry{Path: "toy_export"}, os.WriteFile(filepath.Join(dir, "counts.json"), st, 0o644)
}

func (t *toy) ImportState(dir string) (json.RawMessage, func() error, error) {
	b, err := os.ReadFile(filepath.Join(dir, "counts.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", service.ErrExport, err)
	}
	return b, nil, nil
}

var (
	_ service.TypedState   = (*toy)(nil)
	_ service.Capturer     = (*toy)(nil)
	_ service.Exporter     = (*toy)(nil)
	_ service.Importer     = (*toy)(nil)
	_ service.Describer    = (*toy)(nil)
	_ service.StateChecker = (*toy)(nil)
)

const toySample = `{"counts": {"apples": 3, "pears": 5}}`

func TestToyServiceContract(t *testing.T) {
	servicetest.Run(t, toyRegistration, servicetest.Options{Sample: json.RawMessage(toySample)})
}

// startWithToy starts a backend on dir with the toy registered beside the
// built-in services.
func startWithToy(t *testing.T, dir string) *backend.Backend {
	t.Helper()
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{DataDir: dir, Services: []service.Registration{toyRegistration}},
		Ports: map[string]int{backend.Firestore: backend.Disabled, backend.Auth: backend.Disabled, backend.Database: backend.Disabled,
			backend.Storage: backend.Disabled, backend.AI: backend.Disabled, backend.Messaging: backend.Disabled, backend.PubSub: backend.Disabled}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	return b
}

func toyCounts(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	tt, ok := sandbox.Lookup[*toy](sb)
	if !ok {
		t.Fatal("no toy service")
	}
	st, _ := tt.Snapshot()
	return string(st)
}

// TestToyServiceInEveryTool: a service the tools have never heard of is
// in the snapshot, the export, the capture, the Studio's route table and
// the MCP resources because it implements their capabilities.
func TestToyServiceInEveryTool(t *testing.T) {
	dir := t.TempDir()
	b := startWithToy(t, dir)
	want := `{"counts":{"apples":3,"pears":5}}`

	// Snapshot: saved under services.toy and loaded back.
	if err := b.Sandbox.LoadSnapshot([]byte(`{"version": 3, "services": {"toy": ` + toySample + `}}`)); err != nil {
		t.Fatal(err)
	}
	if got := toyCounts(t, b.Sandbox); got != want {
		t.Fatalf("toy state after loading a snapshot: %s", got)
	}
	snap, err := b.Sandbox.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Services map[string]json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(snap, &parsed); err != nil || !jsonEqual(parsed.Services[toyName], want) {
		t.Fatalf("snapshot's toy state: %s (%v)", parsed.Services[toyName], err)
	}
	// A state the toy refuses is refused before anything changes.
	if err := b.Sandbox.LoadSnapshot([]byte(`{"version": 3, "services": {"toy": {"counts": {"": 1}}}}`)); !errors.Is(err, sandbox.ErrSnapshot) {
		t.Errorf("a bad toy state: %v", err)
	}
	if got := toyCounts(t, b.Sandbox); got != want {
		t.Errorf("a refused snapshot changed the toy: %s", got)
	}

	// Export and import.
	out := t.TempDir()
	if err := snapshot.ExportDir(b.Sandbox, out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "firebase-export-metadata.json"))
	if err != nil || !strings.Contains(string(md), `"toy": {`) {
		t.Fatalf("export metadata: %s (%v)", md, err)
	}
	other := startWithToy(t, t.TempDir())
	if err := snapshot.ImportDir(other.Sandbox, out); err != nil {
		t.Fatal(err)
	}
	if got := toyCounts(t, other.Sandbox); got != want {
		t.Errorf("toy state after import: %s", got)
	}

	// Capture: the toy's capture state, not its snapshot.
	f, err := capture.FromSandbox(b.Sandbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sd := f.Services[toyName]; sd == nil || !jsonEqual(sd.State, `{"names":["apples","pears"]}`) {
		t.Errorf("captured toy: %+v", sd)
	}

	// MCP: a resource with the toy's description and state.
	srv := mcp.NewServer(b.Sandbox, mcp.Options{})
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.Resources {
		if r.URI == mcp.ServiceStateURI(toyName) {
			found = strings.Contains(r.Description, "named counters")
		}
	}
	if !found {
		t.Errorf("no described toy resource among %d", len(list.Resources))
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.ServiceStateURI(toyName)})
	if err != nil || len(rr.Contents) != 1 || !jsonEqual(json.RawMessage(rr.Contents[0].Text), `{"names":["apples","pears"]}`) {
		t.Errorf("toy resource: %+v (%v)", rr, err)
	}

	// Studio: a route in the table the navigation is drawn from, and its
	// state on the generic page's endpoint.
	sts := httptest.NewServer(studio.New(studio.Options{Sandbox: b.Sandbox}))
	defer sts.Close()
	var services struct {
		Routes []studio.Route `json:"routes"`
	}
	getJSON(t, sts.URL+"/api/services", &services)
	if !slices.ContainsFunc(services.Routes, func(r studio.Route) bool {
		return r.Path == "/toy" && r.Service == toyName && r.Label == "Toy counters"
	}) {
		t.Errorf("no toy page in the Studio's routes: %+v", services.Routes)
	}
	var page struct {
		Service string          `json:"service"`
		State   json.RawMessage `json:"state"`
	}
	getJSON(t, sts.URL+"/api/service/"+toyName, &page)
	if page.Service != toyName || !jsonEqual(page.State, want) {
		t.Errorf("the toy's Studio page data: %+v", page)
	}

	// Durable: kept across a restart on the same data directory.
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := startWithToy(t, dir)
	if got := toyCounts(t, again.Sandbox); got != want {
		t.Errorf("toy state after a restart: %s", got)
	}
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// getJSON GETs url and decodes its 200 answer into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
