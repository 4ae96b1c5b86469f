package mcp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
)

func TestHTTPGuard(t *testing.T) {
	t.Parallel()
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	hs := httptest.NewServer(NewServer(sb, Options{}).Handler())
	defer hs.Close()
	post := func(body string, hdr ...string) (int, string, time.Duration) {
		req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
				continue
			}
			req.Header.Set(hdr[i], hdr[i+1])
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), time.Since(start)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

	var calls []string
	for i := range 10000 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"firestore_list_collections","arguments":{}}}`, i+2))
	}
	st, body, took := post("[" + initialize + "," + strings.Join(calls, ",") + "]")
	if st != 400 || !strings.Contains(body, "at most 50 calls, this one holds 10001") || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("10,001-call batch: %d %s", st, body)
	}
	t.Logf("10,001-call batch refused in %v", took)

	if st, body, _ := post(strings.Repeat(" ", MaxRequestBytes+1)); st != 413 {
		t.Errorf("oversized body: %d %s", st, body)
	}
	if st, body, _ := post(initialize, "Origin", "https://evil.example"); st != 403 || !strings.Contains(body, "--allow-origin") {
		t.Errorf("foreign origin: %d %s", st, body)
	}
	if st, body, _ := post(initialize, "Host", "rebind.evil.example"); st != 403 || !strings.Contains(body, "DNS rebinding") {
		t.Errorf("rebinding: %d %s", st, body)
	}
	if st, body, _ := post(initialize, "Origin", "http://localhost:6274"); st != 200 || !strings.Contains(body, "serverInfo") {
		t.Errorf("loopback origin (an inspector on localhost): %d %s", st, body)
	}
	small := "[" + initialize + "]"
	if st, body, _ := post(small); st != 200 || !strings.Contains(body, "serverInfo") {
		t.Errorf("a one-call batch: %d %s", st, body)
	}
}
