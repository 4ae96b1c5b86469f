// Package safetybench measures the cost bounds of #34 on a `pyric serve`
// process (durable, the default) in the same run: how its resident
// memory compares with the data it holds while oversized and expensive
// requests arrive concurrently — 200 MiB Realtime Database PUTs that the
// rules deny, Firestore creates carrying a 100,000-element list that a
// rule checks with hasAll, 30 MB Messaging sends, 100 MiB Storage
// uploads — and how a light read (a user's own small Firestore document)
// fares meanwhile against the same read on the quiet server. It prints
// the figures and the two targets: RSS ≤ 2× the live data + 256 MB, and
// the light read's p99 ≤ 5× its quiet p99.
//
//	PYRIC_BENCH=1 go test -v -run Bench ./e2e/safetybench
//
// Without PYRIC_BENCH=1 it runs a small smoke workload. It measures; it
// asserts nothing about timing or memory.
//
// With PYRIC_BENCH_TRACE=FILE and PYRIC_DEBUG_PPROF=127.0.0.1:PORT (the
// server inherits it), it writes a runtime trace of the server's first
// PYRIC_BENCH_TRACE_SECONDS (10) of load to FILE, where each request is a
// region with its path logged, and the light reads under load to
// FILE.reads ("start-unix-ns duration-ns" a line), to place them in the
// trace and tell what the slow ones waited on.
package safetybench

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

const project = "demo-safety"

const firestoreRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /own/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /tagged/{id} {
      allow create: if request.auth != null && request.resource.data.tags.hasAll(['t1', 't2']);
    }
  }
}`

const databaseRules = `{"rules": {".read": false, ".write": false, "open": {".read": true, ".write": true}}}`

// token is an unsigned ID token for uid, as the Auth emulator issues
// them (the emulators accept them).
func token(uid string) string {
	now := time.Now().Unix()
	claims, _ := json.Marshal(map[string]any{"iss": "https://securetoken.google.com/" + project, "aud": project,
		"auth_time": now, "user_id": uid, "sub": uid, "iat": now, "exp": now + 3600,
		"firebase": map[string]any{"identities": map[string]any{}, "sign_in_provider": "custom"}})
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(claims) + "."
}

func do(c *http.Client, method, url, bearer string, body io.Reader, size int64) (int, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return 0, err
	}
	if size > 0 {
		req.ContentLength = size
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// rss reads a process's resident set size in bytes.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func pct(xs []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// zeros is a reader of n bytes of a JSON string body ("000…"), made on
// the fly so the client holds none of it.
type zeros struct{ n, off int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.off >= z.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	if rest := z.n - z.off; rest < k {
		k = rest
	}
	for i := range k {
		switch pos := z.off + i; pos {
		case 0, z.n - 1:
			p[i] = '"'
		default:
			p[i] = '0'
		}
	}
	z.off += k
	return int(k), nil
}

func TestBench(t *testing.T) {
	full := os.Getenv("PYRIC_BENCH") == "1"
	if !full && testing.Short() {
		t.Skip("benchmark harness")
	}
	docs, reads, rounds := 500, 200, 1
	bigRTDB, bigUpload := int64(16<<20), int64(8<<20)
	if full {
		docs, reads, rounds = 20000, 2000, 4
		bigRTDB, bigUpload = 200<<20, 100<<20
	}
	dir, data := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "firestore.rules"), []byte(firestoreRules), 0o644)
	os.WriteFile(filepath.Join(dir, "database.rules.json"), []byte(databaseRules), 0o644)
	srv := e2etest.StartServe(t, dir, "--data-dir", data, "--project", project,
		"--rules", "firestore.rules", "--database-rules", "database.rules.json")
	pid := srv.Pid()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Minute}
	fs := "http://" + srv.Firestore + "/v1/projects/" + project + "/databases/(default)/documents"

	// Live data: small documents, written as their owners.
	for i := range docs {
		uid := fmt.Sprintf("u%d", i)
		body := fmt.Sprintf(`{"fields":{"name":{"stringValue":"user %d"},"bio":{"stringValue":%q}}}`, i, strings.Repeat("b", 200))
		if st, err := do(c, "PATCH", fs+"/own/"+uid, token(uid), strings.NewReader(body), 0); err != nil || st != 200 {
			t.Fatalf("load %s: %d %v", uid, st, err)
		}
	}
	time.Sleep(1500 * time.Millisecond) // let the store's interval sync and checkpoint run
	live := dirSize(data)

	var starts []time.Time // of every light read, for PYRIC_BENCH_TRACE
	light := func(n int, stop *atomic.Bool) []time.Duration {
		var lat []time.Duration
		tok := token("u1")
		for i := 0; i < n && (stop == nil || !stop.Load()); i++ {
			start := time.Now()
			if st, err := do(c, "GET", fs+"/own/u1", tok, nil, 0); err != nil || st != 200 {
				t.Errorf("light read: %d %v", st, err)
				return lat
			}
			lat = append(lat, time.Since(start))
			starts = append(starts, start)
		}
		return lat
	}
	quiet := light(reads, nil)
	quietRSS := rss(pid)

	// The expensive requests, concurrently, while the light reads run.
	var peak atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if r := rss(pid); r > peak.Load() {
				peak.Store(r)
			}
			time.Sleep(20 * time.Millisecond) // the RSS sampling interval
		}
	})
	var heavy sync.WaitGroup
	statuses := map[string]map[int]int{}
	var smu sync.Mutex
	note := func(kind string, st int) {
		smu.Lock()
		defer smu.Unlock()
		if statuses[kind] == nil {
			statuses[kind] = map[int]int{}
		}
		statuses[kind][st]++
	}
	db := "http://" + srv.Database
	for range 4 {
		heavy.Go(func() {
			for range rounds {
				st, _ := do(c, "PUT", db+"/big.json?ns="+project+"-default-rtdb", "", &zeros{n: bigRTDB}, bigRTDB)
				note("RTDB denied PUT", st)
			}
		})
	}
	list := make([]string, 100_000)
	for i := range list {
		list[i] = fmt.Sprintf(`{"stringValue":"t%d"}`, i)
	}
	tagged := []byte(`{"fields":{"tags":{"arrayValue":{"values":[` + strings.Join(list, ",") + `]}}}}`)
	for k := range 2 {
		heavy.Go(func() {
			for i := range 3 * rounds {
				st, _ := do(c, "POST", fmt.Sprintf("%s/tagged?documentId=d%d-%d", fs, k, i), token("u0"), bytes.NewReader(tagged), 0)
				note("Firestore hasAll create", st)
			}
		})
	}
	heavy.Go(func() {
		msg := "http://" + srv.Messaging + "/v1/projects/" + project + "/messages:send"
		for range rounds {
			body := &zeros{n: 30 << 20}
			st, _ := do(c, "POST", msg, "owner", body, body.n)
			note("Messaging 30 MB send", st)
		}
	})
	heavy.Go(func() {
		up := "http://" + srv.Storage + "/upload/storage/v1/b/" + project + ".appspot.com/o?uploadType=media&name=big.bin"
		for range rounds {
			st, _ := do(c, "POST", up, "owner", &zeros{n: bigUpload}, bigUpload)
			note("Storage upload", st)
		}
	})
	if out := os.Getenv("PYRIC_BENCH_TRACE"); out != "" {
		wg.Go(func() { traceLoad(t, out) })
	}
	var loaded []time.Duration
	done := make(chan struct{})
	go func() { heavy.Wait(); close(done) }()
	for {
		loaded = append(loaded, light(20, nil)...)
		select {
		case <-done:
		default:
			continue
		}
		break
	}
	stop.Store(true)
	wg.Wait()
	if out := os.Getenv("PYRIC_BENCH_TRACE"); out != "" {
		// The light reads under load, by wall-clock start, to place
		// them in the trace: "start-unix-ns duration-ns" a line.
		var b bytes.Buffer
		for i, d := range loaded {
			fmt.Fprintf(&b, "%d %d\n", starts[len(quiet)+i].UnixNano(), d.Nanoseconds())
		}
		os.WriteFile(out+".reads", b.Bytes(), 0o644)
	}

	const mb = 1 << 20
	bound := 2*live + 256*mb
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "live data (data dir)       %8.1f MB\n", float64(live)/mb)
	fmt.Fprintf(&buf, "RSS quiet                  %8.1f MB\n", float64(quietRSS)/mb)
	fmt.Fprintf(&buf, "RSS peak under load        %8.1f MB   target ≤ %.1f MB (2× live + 256 MB): %.2f of it\n", float64(peak.Load())/mb, float64(bound)/mb, float64(peak.Load())/float64(bound))
	fmt.Fprintf(&buf, "light read quiet           p50 %6.2f ms  p99 %6.2f ms\n", ms(pct(quiet, 0.5)), ms(pct(quiet, 0.99)))
	fmt.Fprintf(&buf, "light read under load      p50 %6.2f ms  p99 %6.2f ms  (%d reads)\n", ms(pct(loaded, 0.5)), ms(pct(loaded, 0.99)), len(loaded))
	fmt.Fprintf(&buf, "p99 under load ÷ quiet     %8.2f×  target ≤ 5×\n", float64(pct(loaded, 0.99))/float64(pct(quiet, 0.99)))
	for k, v := range statuses {
		fmt.Fprintf(&buf, "%-26s answers %v\n", k, v)
	}
	t.Logf("cost bounds of one pyric serve\n%s", buf.String())
}

// traceLoad writes a runtime trace of the server's first seconds of load
// to out, taken from the profiles PYRIC_DEBUG_PPROF serves (the server
// inherits the variable): each request is a region there, so the trace
// tells what the slow light reads waited on.
func traceLoad(t *testing.T, out string) {
	addr := os.Getenv("PYRIC_DEBUG_PPROF")
	if addr == "" {
		t.Errorf("PYRIC_BENCH_TRACE needs PYRIC_DEBUG_PPROF, the server's profiles address")
		return
	}
	secs := os.Getenv("PYRIC_BENCH_TRACE_SECONDS")
	if secs == "" {
		secs = "10"
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/trace?seconds=" + secs)
	if err != nil {
		t.Errorf("trace: %v", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Errorf("trace: %v", err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		t.Errorf("trace: %v", err)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
