package database_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// killWriters is how many goroutines of the child write at once.
const killWriters = 4

// TestKill9 kills a process whose writers write concurrently through the
// store's write-ahead log (the Log, as a sandbox gives it) with SIGKILL,
// and checks that every write it acknowledged is there after a restart:
// each writer's own leaves, and a subtree each one replaces wholesale at
// every write (a set over a node: the log's prefix deletion), which must
// hold the last acknowledged value or a later one, never a mix. The kill
// comes after checkpoints ran.
// conformance: database.durability.kill9
func TestKill9(t *testing.T) {
	if os.Getenv("PYRIC_DB_KILL_CHILD") != "" {
		kill9Child()
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9$")
	cmd.Env = append(os.Environ(), "PYRIC_DB_KILL_CHILD=1", "PYRIC_DB_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := make([]int, killWriters)
	for g := range acked {
		acked[g] = -1
	}
	total := 0
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	// Past two checkpoint intervals, so that the kill finds a log that
	// checkpoints applied in part (the store keeps appending to it).
	start := time.Now()
	for total < 400 || time.Since(start) < 2*sandbox.SyncInterval {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child ended after %d acks", total)
			}
			var g, i int
			if _, err := fmt.Sscanf(l, "ack %d %d", &g, &i); err == nil {
				acked[g] = max(acked[g], i)
				total++
			} else if strings.HasPrefix(l, "error") {
				t.Fatal(l)
			}
		case <-timeout:
			cmd.Process.Kill()
			t.Fatalf("child acknowledged only %d writes in 60s", total)
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	st, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := database.New(withStore(envForFuzz(), st), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for g, last := range acked {
		v, _ := get(t, d, admin, fmt.Sprintf("log/g%d", g)).(map[string]any)
		for i := 0; i <= last; i++ {
			if v[fmt.Sprintf("w%05d", i)] != float64(i) {
				t.Fatalf("writer %d's acknowledged write %d lost after kill -9 (have %d entries)", g, i, len(v))
			}
		}
		sub, _ := get(t, d, admin, fmt.Sprintf("sub/g%d", g)).(map[string]any)
		n, _ := sub["n"].(float64)
		if len(sub) != 2 || int(n) < last || sub[fmt.Sprintf("k%d", int(n))] != true {
			t.Fatalf("writer %d's replaced subtree after kill -9 is %v, want the one of write %d or a later one, whole", g, sub, last)
		}
	}
	t.Logf("%d acknowledged writes of %d writers survived kill -9", total, killWriters)
}

// withStore is env durable in st, as a sandbox makes it.
func withStore(env service.Env, st *sandbox.Store) service.Env {
	env.Bucket, env.Log = st.Bucket("database"), st.Log("database")
	return env
}

func kill9Child() {
	st, err := sandbox.OpenStore(os.Getenv("PYRIC_DB_DIR"))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	d, err := database.New(withStore(envForFuzz(), st), database.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var mu sync.Mutex // one line at a time on stdout
	var wg sync.WaitGroup
	for g := range killWriters {
		wg.Go(func() {
			for i := 0; i < 100000; i++ {
				if _, err := d.Set(admin, ns, fmt.Sprintf("log/g%d/w%05d", g, i), float64(i), database.WriteOptions{}); err != nil {
					fmt.Println("error", err)
					os.Exit(1)
				}
				sub := map[string]any{"n": float64(i), fmt.Sprintf("k%d", i): true}
				if _, err := d.Set(admin, ns, fmt.Sprintf("sub/g%d", g), sub, database.WriteOptions{}); err != nil {
					fmt.Println("error", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Printf("ack %d %d\n", g, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	os.Exit(0)
}
