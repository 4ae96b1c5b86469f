package rtdbbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pyric/pyric/internal/benchkit"
)

// goFanout measures listener fan-out again with n listeners that cost
// almost nothing to run: bare WebSocket connections in this (Go)
// process, speaking the v5 protocol, each listening to one path, and
// one more connection writing to it rounds times. A JS SDK client spends
// about 0.2 ms of CPU per value it gets, so a thousand of them (the
// JS fan-out) take longer per write than the latency asked of the
// server, and the JS figure measures them; these listeners spend a few
// microseconds each, so their p50/p99 (from just before the write is
// sent to each listener's receipt of the value) is the server's
// delivery time. Beside it, the CPU per write of the server and of this
// process (the listeners, the writer and whatever else this test runs
// meanwhile: nothing).
func goFanout(t *testing.T, tg target, n, rounds int, r result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	url := "ws://" + tg.host + "/.ws?v=5&ns=" + ns
	const path = "fan/go"
	dial := func() *websocket.Conn {
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatalf("%s: fan-out: dial: %v", tg.name, err)
		}
		c.SetReadLimit(1 << 20)
		return c
	}
	send := func(c *websocket.Conn, req int, action, body string) {
		msg := fmt.Sprintf(`{"t":"d","d":{"r":%d,"a":%q,"b":%s}}`, req, action, body)
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatalf("%s: fan-out: write: %v", tg.name, err)
		}
	}
	writer := dial()
	defer writer.CloseNow()
	// The path holds 0 before anyone listens (each listen's first value),
	// then the writer's acknowledgements are read and dropped.
	send(writer, 1, "p", fmt.Sprintf(`{"p":"/%s","d":0}`, path))
	for {
		_, msg, err := writer.Read(ctx)
		if err != nil {
			t.Fatalf("%s: fan-out: the first write: %v", tg.name, err)
		}
		var ack struct {
			D struct {
				R int `json:"r"`
				B struct {
					S string `json:"s"`
				} `json:"b"`
			} `json:"d"`
		}
		if json.Unmarshal(msg, &ack) == nil && ack.D.R == 1 {
			if ack.D.B.S != "ok" {
				t.Fatalf("%s: fan-out: the first write: %s", tg.name, msg)
			}
			break
		}
	}
	go func() {
		for {
			if _, _, err := writer.Read(ctx); err != nil {
				return
			}
		}
	}()

	// got[k][i] is the delay of round k+1's value at listener i; sent[k]
	// the time its write was sent; left[k] the listeners still waiting.
	got := make([][]time.Duration, rounds)
	sent := make([]atomic.Int64, rounds)
	left := make([]atomic.Int64, rounds)
	done := make([]chan struct{}, rounds)
	for k := range rounds {
		got[k] = make([]time.Duration, n)
		left[k].Store(int64(n))
		done[k] = make(chan struct{})
	}
	var ready sync.WaitGroup
	var failed atomic.Pointer[error]
	conns := make([]*websocket.Conn, n)
	for i := range n {
		conns[i] = dial()
		ready.Add(1)
		go func(i int, c *websocket.Conn) {
			first := true
			for {
				_, msg, err := c.Read(ctx)
				if err != nil {
					if ctx.Err() == nil {
						failed.CompareAndSwap(nil, &err)
					}
					if first {
						ready.Done()
					}
					return
				}
				at := time.Now()
				v, ok := pushed(msg, path)
				if !ok {
					continue
				}
				if first { // the value the listen found
					first = false
					ready.Done()
					continue
				}
				if k := int(v) - 1; k >= 0 && k < rounds && got[k][i] == 0 {
					got[k][i] = at.Sub(time.Unix(0, sent[k].Load()))
					if left[k].Add(-1) == 0 {
						close(done[k])
					}
				}
			}
		}(i, conns[i])
		send(conns[i], 1, "q", fmt.Sprintf(`{"p":"/%s","h":""}`, path))
	}
	defer func() {
		cancel()
		for _, c := range conns {
			c.CloseNow()
		}
	}()
	ready.Wait()
	if err := failed.Load(); err != nil {
		t.Fatalf("%s: fan-out: a listener failed: %v", tg.name, *err)
	}
	var lat []float64
	// CPU is read from /proc in clock ticks (10 ms): over all rounds,
	// not per round.
	s0, c0 := benchkit.ProcCPU(tg.pid), benchkit.ProcCPU(os.Getpid())
	for k := range rounds {
		sent[k].Store(time.Now().UnixNano())
		send(writer, 2+k, "p", fmt.Sprintf(`{"p":"/%s","d":%d}`, path, k+1))
		select {
		case <-done[k]:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: fan-out: %d of %d listeners got round %d within 60 s", tg.name, n-int(left[k].Load()), n, k+1)
		}
		for _, d := range got[k] {
			lat = append(lat, float64(d)/float64(time.Millisecond))
		}
	}
	serverCPU, clientCPU := benchkit.ProcCPU(tg.pid)-s0, benchkit.ProcCPU(os.Getpid())-c0
	slices.Sort(lat)
	r["fan-out Go p50 ms"] = lat[len(lat)/2]
	r["fan-out Go p99 ms"] = lat[min(len(lat)-1, len(lat)*99/100)]
	r["fan-out Go server CPU ms"] = float64(serverCPU) / float64(time.Millisecond) / float64(rounds)
	r["fan-out Go clients CPU ms"] = float64(clientCPU) / float64(time.Millisecond) / float64(rounds)
}

// pushed reads a v5 data push of a number to path ({"t":"d","d":{"a":"d",
// "b":{"p":path,"d":V}}}), reporting false for any other message.
func pushed(msg []byte, path string) (float64, bool) {
	if !bytes.Contains(msg, []byte(`"a":"d"`)) {
		return 0, false
	}
	var m struct {
		D struct {
			A string `json:"a"`
			B struct {
				P string   `json:"p"`
				D *float64 `json:"d"`
			} `json:"b"`
		} `json:"d"`
	}
	if json.Unmarshal(msg, &m) != nil || m.D.A != "d" || m.D.B.P != path || m.D.B.D == nil {
		return 0, false
	}
	return *m.D.B.D, true
}
