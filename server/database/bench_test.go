package databaseserver_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	server "github.com/pyric/pyric/server/database"
)

// BenchmarkWebsocketWrites is sequential acknowledged puts over one
// websocket (writes/s = 1e9 / ns/op).
func BenchmarkWebsocketWrites(b *testing.B) {
	srv, _ := start(b, testRules)
	c := dial(b, srv.URL, "demo-default-rtdb")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, res := c.call("p", map[string]any{"p": "/public/bench", "d": i}); res["s"] != "ok" {
			b.Fatal(res)
		}
	}
}

// startDurable is a handler over an engine as pyric serve runs it: a
// store's write-ahead log, an event bus with a subscriber (the request
// log and session capture subscribe), rules for unauthenticated clients.
func startDurable(b *testing.B) (*server.Handler, *httptest.Server) {
	b.Helper()
	st, err := sandbox.OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	bus := event.NewBus(event.Options{})
	sub := bus.Subscribe(1024)
	go func() {
		for range sub.Events() {
		}
	}()
	b.Cleanup(sub.Close)
	db, err := database.New(service.Env{Project: "demo", Events: bus, Bucket: st.Bucket("database"), Log: st.Log("database")},
		database.Options{Rules: `{"rules": {".read": true, ".write": true, "scores": {".indexOn": ["score"]}}}`})
	if err != nil {
		b.Fatal(err)
	}
	h := server.NewHandler(db, server.Options{})
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return h, srv
}

// BenchmarkDurable is the RTDB benchmark's (e2e/rtdbbench) small
// operations against a durable engine with events: REST put, patch and
// get through the handler (no socket: the server's own work), and a
// websocket client's set, update, get, transaction (a compare-and-set)
// and indexed query (one socket, client included).
// Allocations are the load-independent figure to compare.
func BenchmarkDurable(b *testing.B) {
	rest := func(h http.Handler, method, path, body string) {
		req := httptest.NewRequest(method, "/"+path+".json?ns=demo-default-rtdb", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer owner")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
	}
	for _, op := range []string{"rest-put", "rest-patch", "rest-get"} {
		b.Run(op, func(b *testing.B) {
			h, _ := startDurable(b)
			for i := range 1000 {
				rest(h, "PUT", fmt.Sprintf("rest/r%d", i), `{"n":1,"s":"x"}`)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := fmt.Sprintf("rest/r%d", i%1000)
				switch op {
				case "rest-put":
					rest(h, "PUT", p, fmt.Sprintf(`{"n":%d,"s":"x"}`, i))
				case "rest-patch":
					rest(h, "PATCH", p, `{"n":0}`)
				case "rest-get":
					rest(h, "GET", p, "")
				}
			}
		})
	}
	for _, op := range []string{"ws-set", "ws-update", "ws-get", "ws-txn", "ws-query"} {
		b.Run(op, func(b *testing.B) {
			_, srv := startDurable(b)
			c := dial(b, srv.URL, "demo-default-rtdb")
			for i := range 1000 {
				c.ok("p", map[string]any{"p": fmt.Sprintf("/items/i%d", i), "d": map[string]any{"n": i, "name": "item"}})
			}
			for i := range 200 {
				c.ok("p", map[string]any{"p": fmt.Sprintf("/scores/p%d", i), "d": map[string]any{"score": (i * 37) % 200}})
			}
			c.ok("p", map[string]any{"p": "/counter", "d": 0})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := fmt.Sprintf("/items/i%d", i%1000)
				switch op {
				case "ws-set":
					c.ok("p", map[string]any{"p": p, "d": map[string]any{"n": i, "name": "item"}})
				case "ws-update":
					c.ok("m", map[string]any{"p": p, "d": map[string]any{"n": i + 1}})
				case "ws-get":
					c.ok("g", map[string]any{"p": p, "q": map[string]any{}})
				case "ws-txn": // a transaction's compare-and-set on the counter's hash
					c.ok("p", map[string]any{"p": "/counter", "d": i + 1, "h": database.Hash(float64(i))})
				case "ws-query": // the first 10 by an indexed child
					c.ok("g", map[string]any{"p": "/scores", "q": map[string]any{"i": "score", "l": 10, "vf": "l"}})
				}
			}
		})
	}
}

// BenchmarkWebsocketFanout1000 is one write (a small set over a
// websocket) delivered to 1,000 websockets listening on its path, each
// read by a client of this process: the server's dispatch and write path
// (e2e/rtdbbench's "fan-out Go" row) without another process. The
// clients' reads are counted too, the same in every version: allocs/op,
// cpu-ms/op and switches/op (the process's context switches, from /proc)
// are the figures to compare, not ns/op.
func BenchmarkWebsocketFanout1000(b *testing.B) {
	const n = 1000
	_, srv := startDurable(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/.ws?v=5&ns=demo-default-rtdb"
	got := make(chan int, n)
	for range n {
		ws, _, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ws.CloseNow()
		listen := `{"t":"d","d":{"r":1,"a":"q","b":{"p":"/fan","h":""}}}`
		if err := ws.Write(ctx, websocket.MessageText, []byte(listen)); err != nil {
			b.Fatal(err)
		}
		go func() {
			for {
				_, msg, err := ws.Read(ctx)
				if err != nil {
					return
				}
				if bytes.Contains(msg, []byte(`"a":"d"`)) {
					got <- 1
				}
			}
		}()
	}
	for range n { // each listen's first value
		<-got
	}
	w := dial(b, srv.URL, "demo-default-rtdb")
	b.ReportAllocs()
	sw0, c0 := benchkit.ContextSwitches(0), benchkit.SelfCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.ok("p", map[string]any{"p": "/fan", "d": i + 1})
		for range n {
			<-got
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((benchkit.SelfCPU()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(benchkit.ContextSwitches(0)-sw0)/float64(b.N), "switches/op")
}
