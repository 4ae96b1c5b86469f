package databaseserver_test

import (
	"testing"
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
