package database_test

import (
	"testing"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// Registration is how the backend adds the database to a sandbox.
func registration() service.Registration {
	return service.Registration{Name: "database", New: database.Factory(database.Options{})}
}

// TestSandbox runs the database as a sandbox service: durable across a
// reopen, in snapshots, cleared by reset.
func TestSandbox(t *testing.T) {
	dir := t.TempDir()
	open := func() (*sandbox.Sandbox, *database.Database) {
		sb, err := sandbox.Open(sandbox.Options{Project: "demo", DataDir: dir, Services: []service.Registration{registration()}})
		if err != nil {
			t.Fatal(err)
		}
		d, ok := sandbox.Lookup[*database.Database](sb)
		if !ok {
			t.Fatal("database not registered")
		}
		return sb, d
	}
	sb, d := open()
	nsName := database.DefaultNamespace("demo")
	if _, err := d.Set(admin, nsName, "a/b", "x", database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := sb.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()

	sb, d = open()
	defer sb.Close()
	if r, _ := d.Get(admin, nsName, "a/b", nil, false); r.Value != "x" {
		t.Fatalf("after reopen: %v", r.Value)
	}
	if err := sb.Reset(); err != nil {
		t.Fatal(err)
	}
	if r, _ := d.Get(admin, nsName, "a", nil, false); r.Value != nil {
		t.Fatalf("after reset: %v", r.Value)
	}
	if err := sb.LoadSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if r, _ := d.Get(admin, nsName, "a/b", nil, false); r.Value != "x" {
		t.Fatalf("after snapshot load: %v", r.Value)
	}
}
