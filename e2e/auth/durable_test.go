package authe2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

const childEnv = "PYRIC_AUTH_DURABLE_CHILD"

// TestKill9KeepsAcknowledgedSignUps serves Auth over HTTP from a child
// process on a durable log (a sandbox store's write-ahead log), has 8
// clients sign up concurrently, kills the child with SIGKILL mid-traffic,
// restarts it on the same data dir and checks that every sign-up answered
// 200 is there.
func TestKill9KeepsAcknowledgedSignUps(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		serveChild(path)
		return
	}
	db := filepath.Join(t.TempDir(), "data")
	base, kill := startChild(t, db)

	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	enough := make(chan struct{})
	var once sync.Once
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				body := fmt.Sprintf(`{"email":"w%d-%d@example.com","password":"secret123","returnSecureToken":true}`, w, i)
				resp, err := client.Post(base+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "application/json", strings.NewReader(body))
				if err != nil {
					return // the server was killed
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					continue
				}
				var r struct {
					LocalID string `json:"localId"`
				}
				if json.Unmarshal(b, &r) != nil || r.LocalID == "" {
					continue // a response cut by the kill
				}
				mu.Lock()
				acked = append(acked, r.LocalID)
				if len(acked) >= 300 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Log("fewer than 300 sign-ups in 60 s; killing anyway")
	}
	kill()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("no sign-up was acknowledged")
	}

	base2, kill2 := startChild(t, db)
	defer kill2()
	found := map[string]bool{}
	for i := 0; i < len(acked); i += 100 {
		ids, _ := json.Marshal(acked[i:min(i+100, len(acked))])
		req, _ := http.NewRequest("POST", base2+"/identitytoolkit.googleapis.com/v1/projects/demo-durable/accounts:lookup",
			bytes.NewReader([]byte(`{"localId":`+string(ids)+`}`)))
		req.Header.Set("Authorization", "Bearer owner")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Users []struct {
				LocalID string `json:"localId"`
			} `json:"users"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		for _, u := range r.Users {
			found[u.LocalID] = true
		}
	}
	missing := 0
	for _, id := range acked {
		if !found[id] {
			missing++
		}
	}
	t.Logf("%d sign-ups acknowledged before SIGKILL, %d missing after restart", len(acked), missing)
	if missing > 0 {
		t.Fatalf("%d acknowledged sign-ups lost", missing)
	}
}

// startChild re-executes this test binary as an Auth server on db and
// returns its base URL and a function that SIGKILLs it.
func startChild(t *testing.T, db string) (string, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9KeepsAcknowledgedSignUps$")
	cmd.Env = append(os.Environ(), childEnv+"="+db)
	stdin, err := cmd.StdinPipe() // the child exits when this closes
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = cmd.Process.Kill() // SIGKILL
			_ = cmd.Wait()
			stdin.Close()
		})
	}
	t.Cleanup(kill)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a, kill
	case <-time.After(30 * time.Second):
		t.Fatal("child server did not start")
	}
	return "", nil
}

// serveChild is the child process: Auth on a durable log until killed
// (or until its parent goes away).
func serveChild(db string) {
	b, err := authtest.OpenLog(db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	eng, err := auth.Open(auth.Options{Log: b})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	fmt.Printf("LISTENING %s\n", l.Addr())
	_ = http.Serve(l, authserver.New(eng, authserver.Options{DefaultProject: "demo-durable"}))
	os.Exit(0)
}
