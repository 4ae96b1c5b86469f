package rtdbbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// floorEnv, when set, makes the test binary the floor server listening
// on its value (host:port).
const floorEnv = "PYRIC_RTDB_BENCH_FLOOR"

// floor speaks just enough of the Realtime Database's WebSocket protocol
// (v5) and REST API for the workload: it keeps each written path's last
// value in a flat map, answers a listen with that value, pushes a write
// to the connections listening on exactly its path, and acknowledges
// everything else. No rules, no tree, no queries: the transport's and
// the clients' cost alone.
type floor struct {
	mu     sync.Mutex
	values map[string]json.RawMessage
	listen map[string]map[*conn]bool
	seq    int
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
	f := &floor{values: map[string]json.RawMessage{}, listen: map[string]map[*conn]bool{}}
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
		f.values[path] = b
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
			f.values[path] = m.D.B.D
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
			v := f.values[path]
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
