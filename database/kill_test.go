package database_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox"
)

// TestKill9 kills a process writing through a bbolt bucket with SIGKILL
// and checks that every write it acknowledged is there after a restart.
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
	acked := -1
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for acked < 100 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child ended after %d acks", acked)
			}
			if n, err := strconv.Atoi(strings.TrimPrefix(l, "ack ")); err == nil && strings.HasPrefix(l, "ack ") {
				acked = n
			}
		case <-timeout:
			cmd.Process.Kill()
			t.Fatalf("child acknowledged only %d writes in 30s", acked)
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
	d, _ := newDB(t, "", st.Bucket("database"))
	v, _ := get(t, d, admin, "log").(map[string]any)
	for i := 0; i <= acked; i++ {
		if v[fmt.Sprintf("w%04d", i)] != float64(i) {
			t.Fatalf("acknowledged write %d lost after kill -9 (have %d entries)", i, len(v))
		}
	}
	t.Logf("%d acknowledged writes survived kill -9 (%d present)", acked+1, len(v))
}

func kill9Child() {
	st, err := sandbox.OpenStore(os.Getenv("PYRIC_DB_DIR"))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	d, err := database.New(withBucket(envForFuzz(), st.Bucket("database")), database.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := 0; i < 100000; i++ {
		if _, err := d.Set(admin, ns, fmt.Sprintf("log/w%04d", i), float64(i), database.WriteOptions{}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("ack %d\n", i)
	}
	os.Exit(0)
}
