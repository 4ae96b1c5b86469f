package storagego

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

// TestSandboxContract: the engine registered in a durable sandbox resets,
// snapshots and restores by name, and its state outlives the sandbox.
func TestSandboxContract(t *testing.T) {
	dir := t.TempDir()
	open := func() (*sandbox.Sandbox, *storage.Engine) {
		sb, err := sandbox.Open(sandbox.Options{Project: "demo-pyric", DataDir: dir, Services: []service.Registration{storage.Registration(storage.Options{})}})
		if err != nil {
			t.Fatal(err)
		}
		e, ok := sandbox.Lookup[*storage.Engine](sb)
		if !ok {
			t.Fatal("no storage engine in the sandbox")
		}
		return sb, e
	}
	admin := identity.AdminIdentity()
	readAll := func(e *storage.Engine, name string) (string, error) {
		o, r, err := e.Open(admin, storage.ReadRequest{Bucket: bucket, Name: name})
		if err != nil {
			return "", err
		}
		defer r.Close()
		b, err := io.ReadAll(io.NewSectionReader(r, 0, o.Size))
		return string(b), err
	}
	sb, e := open()
	if _, err := e.Put(admin, storage.PutRequest{Bucket: bucket, Name: "a.txt", Body: strings.NewReader("A")}); err != nil {
		t.Fatal(err)
	}
	snap, err := sb.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(snap), `"storage"`) {
		t.Fatalf("snapshot has no storage state: %.200s", snap)
	}
	if err := sb.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(e, "a.txt"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("after reset: %v", err)
	}
	if err := sb.LoadSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(e, "a.txt"); err != nil || got != "A" {
		t.Fatalf("after restore: %q %v", got, err)
	}
	sb.Close()
	sb, e = open()
	defer sb.Close()
	if got, err := readAll(e, "a.txt"); err != nil || got != "A" {
		t.Fatalf("after reopening: %q %v", got, err)
	}
}
