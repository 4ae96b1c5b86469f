package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pyric/pyric/sandbox/service"
)

// toyService is the smallest service on the contract: string keys and
// values, persisted key by key inside each Put.
type toyService struct {
	env  service.Env
	mu   sync.Mutex
	data map[string]string
}

func newToy(env service.Env) (service.Service, error) {
	t := &toyService{env: env, data: map[string]string{}}
	if env.Bucket == nil {
		return t, nil
	}
	err := env.Bucket.View(func(tx service.Tx) error {
		return tx.ForEach([]byte("k/"), func(k, v []byte) error {
			t.data[strings.TrimPrefix(string(k), "k/")] = string(v)
			return nil
		})
	})
	return t, err
}

func (t *toyService) Name() string { return "toy" }

func (t *toyService) Put(k, v string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.env.Bucket != nil {
		if err := t.env.Bucket.Update(func(tx service.Tx) error { return tx.Put([]byte("k/"+k), []byte(v)) }); err != nil {
			return err
		}
	}
	t.data[k] = v
	return nil
}

func (t *toyService) Get(k string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.data[k]
	return v, ok
}

func (t *toyService) Reset() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.data = map[string]string{}
	return nil
}

func (t *toyService) Snapshot() (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return json.Marshal(t.data)
}

func (t *toyService) Restore(state json.RawMessage) error {
	var m map[string]string
	if err := json.Unmarshal(state, &m); err != nil {
		return err
	}
	if m == nil {
		return errors.New("toy state must be an object")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.env.Bucket != nil {
		err := t.env.Bucket.Update(func(tx service.Tx) error {
			if err := tx.DeletePrefix([]byte("k/")); err != nil {
				return err
			}
			for k, v := range m {
				if err := tx.Put([]byte("k/"+k), []byte(v)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	t.data = m
	return nil
}

var toyRegistration = service.Registration{Name: "toy", New: newToy}

func TestToyServiceResetSnapshotRestore(t *testing.T) {
	t.Parallel()
	sb, err := Open(Options{DataDir: t.TempDir(), Services: []service.Registration{toyRegistration}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	toy, ok := Lookup[*toyService](sb)
	if !ok || sb.Service("toy") != toy {
		t.Fatal("the toy service is not registered")
	}
	if err := toy.Put("a", "1"); err != nil {
		t.Fatal(err)
	}
	snap, err := sb.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(snap), `"toy": {`) || !strings.Contains(string(snap), `"a": "1"`) {
		t.Fatalf("snapshot lacks the toy's state:\n%s", snap)
	}
	if err := sb.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, ok := toy.Get("a"); ok {
		t.Fatal("reset kept the toy's data")
	}
	if err := sb.LoadSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if v, _ := toy.Get("a"); v != "1" {
		t.Fatalf("restored a = %q", v)
	}
	// A state the service rejects changes nothing.
	bad := strings.Replace(string(snap), `"a": "1"`, `"a": 1`, 1)
	if err := sb.LoadSnapshot([]byte(bad)); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("bad toy state: err = %v", err)
	}
	if v, _ := toy.Get("a"); v != "1" {
		t.Fatalf("after a rejected snapshot a = %q", v)
	}
	// A snapshot naming a service the sandbox lacks is refused.
	other, _ := Open(Options{})
	if err := other.LoadSnapshot(snap); !errors.Is(err, ErrSnapshot) || !strings.Contains(err.Error(), `"toy"`) {
		t.Fatalf("unknown service: err = %v", err)
	}
	// Registration mistakes are errors, not panics.
	if _, err := Open(Options{Services: []service.Registration{toyRegistration, toyRegistration}}); err == nil {
		t.Error("two services named toy accepted")
	}
	if _, err := Open(Options{Services: []service.Registration{{Name: "other", New: newToy}}}); err == nil {
		t.Error("a service naming itself differently from its registration accepted")
	}
}

// TestToyServiceSurvivesKill9: a child process puts keys through the toy
// service on a durable sandbox, reporting each acknowledged put; it is
// killed with SIGKILL mid-stream, and every acknowledged key is there
// when the data dir is reopened.
func TestToyServiceSurvivesKill9(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv("PYRIC_TOY_CHILD_DIR"); dir != "" {
		t.Skip("runs in the child only")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestToyChild$", "-test.v")
	cmd.Env = append(os.Environ(), "PYRIC_TOY_CHILD_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(20 * time.Second)
	for sc.Scan() && time.Now().Before(deadline) {
		if k, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
			acked = append(acked, k)
			if len(acked) == 200 {
				break
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if len(acked) < 50 {
		t.Fatalf("the child acknowledged only %d puts", len(acked))
	}
	sb, err := Open(Options{DataDir: dir, Services: []service.Registration{toyRegistration}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	toy, _ := Lookup[*toyService](sb)
	var lost []string
	for _, k := range acked {
		if _, ok := toy.Get(k); !ok {
			lost = append(lost, k)
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged puts lost after kill -9: %v", len(lost), len(acked), lost)
	}
}

// TestToyChild is the child of TestToyServiceSurvivesKill9: 4 concurrent
// writers put until killed.
func TestToyChild(t *testing.T) {
	dir := os.Getenv("PYRIC_TOY_CHILD_DIR")
	if dir == "" {
		t.Skip("child process of TestToyServiceSurvivesKill9")
	}
	sb, err := Open(Options{DataDir: dir, Services: []service.Registration{toyRegistration}})
	if err != nil {
		t.Fatal(err)
	}
	toy, _ := Lookup[*toyService](sb)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				k := fmt.Sprintf("w%d-%d", w, i)
				if err := toy.Put(k, "v"); err != nil {
					return
				}
				mu.Lock()
				fmt.Printf("ACK %s\n", k)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
