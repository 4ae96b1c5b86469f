package startupbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/benchkit"
)

// probeCase is what a start serves beyond the services every start has.
type probeCase struct {
	loaded    int  // documents load/d0000000 … stored in the data dir
	functions bool // e2e/functions/js is configured
}

// assignPorts picks a free port for every service the case serves (the
// Studio and the hub included) and returns them by service with the
// `pyric serve` flags that set them.
func assignPorts(t *testing.T, functions bool) (map[string]string, []string) {
	t.Helper()
	ports := map[string]string{}
	var args []string
	names := []string{"studio", "hub"}
	for _, s := range backend.Catalog() {
		switch s.Service {
		case backend.Hosting: // no sites configured: off
			continue
		case backend.Functions, backend.Tasks, backend.Eventarc: // on with a functions codebase
			if !functions {
				continue
			}
		}
		names = append(names, s.Service)
	}
	taken := map[string]bool{}
	for _, name := range names {
		addr := fixedAddr(t, taken)
		ports[name] = addr
		args = append(args, "--"+name+"-port", addr[strings.LastIndexByte(addr, ':')+1:])
	}
	return ports, args
}

// fixedAddr is a loopback address free now whose port lies below the
// kernel's ephemeral range: the probes dial every port before pyric binds
// them, and a port the kernel hands out for outgoing connections (as
// benchkit.FreeAddr's are) could become one of those connections' own
// before pyric binds it ("address already in use", seen once).
func fixedAddr(t *testing.T, taken map[string]bool) string {
	t.Helper()
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				lo = n
			}
		}
	}
	for range 1000 {
		addr := "127.0.0.1:" + strconv.Itoa(10000+rand.IntN(lo-10000))
		if taken[addr] {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		l.Close()
		taken[addr] = true
		return addr
	}
	return benchkit.FreeAddr(t)
}

// probe is a request to one port and the check that its answer is the
// right one (not merely a connection accepted).
type probe struct {
	method, path, body string
	header             map[string]string
	ok                 func(status int, body []byte) error
}

// probes are the requests each service must answer correctly for the
// start to count as serving.
func probes(c probeCase) map[string]probe {
	owner := map[string]string{"Authorization": "Bearer owner"}
	jsonHas := func(want int, keys ...string) func(int, []byte) error {
		return func(status int, body []byte) error {
			if status != want {
				return fmt.Errorf("status %d, want %d: %.200s", status, want, body)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				return fmt.Errorf("not a JSON object: %.200s", body)
			}
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					return fmt.Errorf("no %q in %.200s", k, body)
				}
			}
			return nil
		}
	}
	doc := "load/absent"
	fsWant := jsonHas(http.StatusNotFound, "error")
	if c.loaded > 0 {
		doc = fmt.Sprintf("load/d%07d", c.loaded-1) // the last one written
		fsWant = func(status int, body []byte) error {
			var d struct {
				Name   string `json:"name"`
				Fields struct {
					N struct {
						IntegerValue string `json:"integerValue"`
					} `json:"n"`
				} `json:"fields"`
			}
			if status != http.StatusOK || json.Unmarshal(body, &d) != nil || d.Fields.N.IntegerValue != strconv.Itoa(c.loaded-1) {
				return fmt.Errorf("status %d: %.200s", status, body)
			}
			return nil
		}
	}
	ps := map[string]probe{
		backend.Firestore: {method: "GET", path: "/v1/projects/" + project + "/databases/(default)/documents/" + doc, header: owner, ok: fsWant},
		backend.Auth: {method: "POST", path: "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake-api-key", body: `{"returnSecureToken":true}`,
			ok: jsonHas(http.StatusOK, "idToken", "localId")},
		backend.Database: {method: "GET", path: "/probe.json?ns=" + project + "-default-rtdb", header: owner,
			ok: func(status int, body []byte) error {
				if status != http.StatusOK || strings.TrimSpace(string(body)) != "null" {
					return fmt.Errorf("status %d: %.200s", status, body)
				}
				return nil
			}},
		backend.Storage:   {method: "GET", path: "/storage/v1/b/" + project + ".appspot.com/o", header: owner, ok: jsonHas(http.StatusOK, "kind")},
		backend.PubSub:    {method: "GET", path: "/v1/projects/" + project + "/topics", ok: jsonHas(http.StatusOK)},
		backend.Messaging: {method: "GET", path: "/emulator/v1/projects/" + project + "/topics", ok: jsonHas(http.StatusOK, "topics")},
		backend.AI: {method: "POST", path: "/v1beta/models/gemini-2.5-flash:countTokens?key=fake-api-key",
			body: `{"contents":[{"role":"user","parts":[{"text":"how many tokens"}]}]}`, ok: jsonHas(http.StatusOK, "totalTokens")},
		"studio": {method: "GET", path: "/", ok: func(status int, body []byte) error {
			if status != http.StatusOK || !strings.Contains(string(body), "<html") {
				return fmt.Errorf("status %d: %.200s", status, body)
			}
			return nil
		}},
		"hub": {method: "GET", path: "/emulators", ok: jsonHas(http.StatusOK, backend.Firestore, backend.Auth)},
	}
	if c.functions {
		// The port serves its own routes while the codebase loads: the
		// emulator's listing answers, saying whether it still loads.
		ps[backend.Functions] = probe{method: "GET", path: "/backends", ok: jsonHas(http.StatusOK, "backends", "loading")}
		// The first call waits for the codebase's load (the cold start):
		// measured apart, as "first function answered".
		ps[firstCall] = probe{method: "POST", path: "/" + project + "/us-central1/add", body: `{"data":{"a":1,"b":2}}`,
			header: map[string]string{"Content-Type": "application/json"},
			ok: func(status int, body []byte) error {
				if status != http.StatusOK || strings.TrimSpace(string(body)) != `{"result":{"sum":3,"uid":null}}` {
					return fmt.Errorf("status %d: %.200s", status, body)
				}
				return nil
			}}
		// The codebase has no task function: the queue lists no task.
		ps[backend.Tasks] = probe{method: "GET", path: "/projects/" + project + "/locations/us-central1/queues/none/tasks", ok: jsonHas(http.StatusOK)}
		// An event of a type no function listens to is taken and dropped.
		ps[backend.Eventarc] = probe{method: "POST", path: "/projects/" + project + "/locations/us-central1/channels/firebase:publishEvents",
			body:   `{"events":[{"@type":"type.googleapis.com/io.cloudevents.v1.CloudEvent","id":"probe","source":"startupbench","specVersion":"1.0","type":"startupbench.probe"}]}`,
			header: map[string]string{"Content-Type": "application/json"}, ok: jsonHas(http.StatusOK)}
	}
	return ps
}

// firstCall is the probe of a callable on the functions port, which
// answers once the codebase loaded.
const firstCall = "first call"

// probeAll probes every port in ports from now on, each until it
// answers correctly (every 2 ms), and returns a wait for the moment the
// last one did and which one that was; the wait fails with each port's
// last problem if ctx ends first. With functions it also probes the
// first call on the functions port, whose answer's moment the wait
// returns apart (not among the ports').
func probeAll(ctx context.Context, ports map[string]string, c probeCase) func() (time.Time, string, time.Time, error) {
	ps := probes(c)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var mu sync.Mutex
	var last, call time.Time
	var lastName string
	var errs []error
	if c.functions {
		ports = maps.Clone(ports)
		ports[firstCall] = ports[backend.Functions]
	}
	var wg sync.WaitGroup
	for name, addr := range ports {
		p, ok := ps[name]
		if !ok {
			mu.Lock()
			errs = append(errs, fmt.Errorf("no probe for the %s port", name))
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			var problem error
			for ctx.Err() == nil {
				if problem = p.do(ctx, client, addr); problem == nil {
					mu.Lock()
					if now := time.Now(); name == firstCall {
						call = now
					} else if now.After(last) {
						last, lastName = now, name
					}
					mu.Unlock()
					return
				}
				time.Sleep(2 * time.Millisecond) // the probe interval is the measurement's resolution
			}
			mu.Lock()
			errs = append(errs, fmt.Errorf("%s (%s) never answered correctly: %v", name, addr, problem))
			mu.Unlock()
		})
	}
	return func() (time.Time, string, time.Time, error) {
		wg.Wait()
		return last, lastName, call, errors.Join(errs...)
	}
}

func (p probe) do(ctx context.Context, client *http.Client, addr string) error {
	var body io.Reader
	if p.body != "" {
		body = strings.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, "http://"+addr+p.path, body)
	if err != nil {
		return err
	}
	if p.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range p.header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return p.ok(resp.StatusCode, b)
}
