package rtdbbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/database"
)

// floorEnv, when set, makes the test binary the floor server listening
// on its value (host:port).
const floorEnv = "PYRIC_RTDB_BENCH_FLOOR"

// floor speaks just enough of the Realtime Database's WebSocket protocol
// (v5) and REST API for the workload: it keeps each written path's last
// value in a flat map, answers a listen with that value, pushes a write
// to the connections listening on exactly its path, and acknowledges
// everything else. No rules, no tree, no indexes: the transport's and the
// clients' cost alone. Where the clients need an answer's content, it
// does the least that gives it, so that both servers answer the same
// messages with the same sizes: a put carrying a hash (a transaction's
// compare-and-set) is refused as stale unless the value's hash matches,
// as a transaction's first optimistic put against an unread value must
// be (the SDK then retries with the value its listen got); and a query
// of a location holding no value of its own answers with its first
// children by key, as many as the query's limit (a server with an index
// finds them by lookup, so it is the size that matters, not the order).
type floor struct {
	mu       sync.Mutex
	values   map[string]json.RawMessage
	children map[string]map[string]bool // parent path → child keys written
	listen   map[string]map[*conn]bool
	seq      int
}

// put stores v at path; callers hold f.mu.
func (f *floor) put(path string, v json.RawMessage) {
	f.values[path] = v
	if i := strings.LastIndexByte(path, '/'); i >= 0 && path != "/" {
		parent := path[:i]
		if parent == "" {
			parent = "/"
		}
		if f.children[parent] == nil {
			f.children[parent] = map[string]bool{}
		}
		f.children[parent][path[i+1:]] = true
	}
}

// hash is the Realtime Database's hash of the JSON value v (what a
// transaction's put compares); "" for null.
func hash(v json.RawMessage) string {
	if v == nil {
		return ""
	}
	raw, err := database.DecodeJSON(v)
	if err != nil {
		return "?"
	}
	n, err := database.Normalize(raw, nil, 0)
	if err != nil {
		return "?"
	}
	return database.Hash(n)
}

// queried is the answer to a query of path limited to limit children
// (0: no limit): its value, else its first children by key; callers hold
// f.mu.
func (f *floor) queried(path string, limit int) json.RawMessage {
	if v := f.values[path]; v != nil {
		return v
	}
	keys := make([]string, 0, len(f.children[path]))
	for k := range f.children[path] {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	prefix := strings.TrimSuffix(path, "/") + "/"
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k)
		out = append(out, ':')
		out = append(out, f.values[prefix+k]...)
	}
	return append(out, '}')
}

type conn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (c *conn) send(v any) {
	b, _ := json.Marshal(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.ws.Write(ctx, websocket.MessageText, b)
}

func serveFloor(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f := &floor{values: map[string]json.RawMessage{}, children: map[string]map[string]bool{}, listen: map[string]map[*conn]bool{}}
	http.Serve(l, f)
	os.Exit(0)
}

func norm(p string) string { return "/" + strings.Trim(p, "/") }

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/.ws" {
		f.socket(w, r)
		return
	}
	path := norm(strings.TrimSuffix(r.URL.Path, ".json"))
	switch r.Method {
	case http.MethodGet:
		f.mu.Lock()
		v := f.values[path]
		f.mu.Unlock()
		if v == nil {
			v = json.RawMessage("null")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(v)
	case http.MethodPut, http.MethodPatch, http.MethodPost:
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.put(path, b)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	default:
		w.Write([]byte("null"))
	}
}

func (f *floor) socket(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	ws.SetReadLimit(16 << 20)
	c := &conn{ws: ws}
	f.mu.Lock()
	f.seq++
	session := strconv.Itoa(f.seq)
	f.mu.Unlock()
	c.send(map[string]any{"t": "c", "d": map[string]any{"t": "h", "d": map[string]any{
		"ts": time.Now().UnixMilli(), "v": "5", "h": r.Host, "s": session}}})
	defer func() {
		f.mu.Lock()
		for _, set := range f.listen {
			delete(set, c)
		}
		f.mu.Unlock()
		ws.CloseNow()
	}()
	for {
		_, msg, err := ws.Read(context.Background())
		if err != nil {
			return
		}
		var m struct {
			T string `json:"t"`
			D struct {
				T string `json:"t"` // control
				R int    `json:"r"`
				A string `json:"a"`
				B struct {
					P string          `json:"p"`
					D json.RawMessage `json:"d"`
					H *string         `json:"h"`
					Q struct {
						L int `json:"l"`
					} `json:"q"`
				} `json:"b"`
			} `json:"d"`
		}
		if json.Unmarshal(msg, &m) != nil {
			continue // a frame count or keepalive
		}
		if m.T == "c" {
			if m.D.T == "p" {
				c.send(map[string]any{"t": "c", "d": map[string]any{"t": "o", "d": nil}})
			}
			continue
		}
		ok := func(d any) {
			c.send(map[string]any{"t": "d", "d": map[string]any{"r": m.D.R, "b": map[string]any{"s": "ok", "d": d}}})
		}
		path := norm(m.D.B.P)
		switch m.D.A {
		case "p", "m":
			f.mu.Lock()
			if m.D.A == "p" && m.D.B.H != nil && hash(f.values[path]) != *m.D.B.H {
				f.mu.Unlock()
				c.send(map[string]any{"t": "d", "d": map[string]any{"r": m.D.R, "b": map[string]any{
					"s": "datastale", "d": "The transaction needs to be run again with current data"}}})
				continue
			}
			f.put(path, m.D.B.D)
			var to []*conn
			for l := range f.listen[path] {
				to = append(to, l)
			}
			f.mu.Unlock()
			for _, l := range to {
				l.send(map[string]any{"t": "d", "d": map[string]any{"a": "d", "b": map[string]any{"p": strings.TrimPrefix(path, "/"), "d": m.D.B.D}}})
			}
			ok("")
		case "q":
			f.mu.Lock()
			if f.listen[path] == nil {
				f.listen[path] = map[*conn]bool{}
			}
			f.listen[path][c] = true
			v := f.values[path]
			f.mu.Unlock()
			if v == nil {
				v = json.RawMessage("null")
			}
			c.send(map[string]any{"t": "d", "d": map[string]any{"a": "d", "b": map[string]any{"p": strings.TrimPrefix(path, "/"), "d": v}}})
			ok(map[string]any{})
		case "g":
			f.mu.Lock()
			v := f.queried(path, m.D.B.Q.L)
			f.mu.Unlock()
			if v == nil {
				v = json.RawMessage("null")
			}
			ok(v)
		case "n":
			f.mu.Lock()
			delete(f.listen[path], c)
			f.mu.Unlock()
			ok(map[string]any{})
		default: // stats, auth, onDisconnect…
			ok("")
		}
	}
}
