package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotSeedFreshExportCLI: `pyric snapshot save|load` on a running
// server (its admin endpoint) and offline on its data directory, `serve
// --seed` applied only when the data directory is new, `--fresh`
// starting empty, `pyric export --url` in the Emulator Suite layout, and
// --no-capture writing no fixture.
func TestSnapshotSeedFreshExportCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, ".pyric")
	seed := filepath.Join(dir, "seed.json")
	os.WriteFile(seed, []byte(`{"posts/seeded": {"title": "from the seed"}}`), 0o644)
	ctx := context.Background()
	cli := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Run(ctx, args, Stdio{Out: &out, Err: &errb}); code != 0 {
			t.Fatalf("pyric %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	titles := func(s *served) map[string]any {
		t.Helper()
		c := goClient(t, s.Firestore, "demo-snap", "owner")
		docs, err := c.Collection("posts").Documents(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, d := range docs {
			out[d.Ref.ID] = d.Data()["title"]
		}
		return out
	}

	s := startServe(t, "--project", "demo-snap", "--data-dir", data, "--seed", seed, "--no-capture")
	if got := titles(s); len(got) != 1 || got["seeded"] != "from the seed" {
		t.Fatalf("--seed on a new data dir: %v", got)
	}
	if _, err := goClient(t, s.Firestore, "demo-snap", "owner").Doc("posts/live").Set(ctx, map[string]any{"title": "live"}); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "snap.json")
	cli("snapshot", "save", snap, "--url", s.Studio+"/__pyric/snapshot")
	if b, _ := os.ReadFile(snap); !strings.Contains(string(b), "from the seed") || !strings.Contains(string(b), `"live"`) {
		t.Fatalf("snapshot from the running server:\n%s", b)
	}
	exp := filepath.Join(dir, "export")
	cli("export", exp, "--url", s.Studio+"/__pyric/export")
	for _, p := range []string{"firebase-export-metadata.json", "firestore_export", "auth_export"} {
		if _, err := os.Stat(filepath.Join(exp, p)); err != nil {
			t.Errorf("export lacks %s: %v", p, err)
		}
	}
	if _, err := goClient(t, s.Firestore, "demo-snap", "owner").Doc("posts/later").Set(ctx, map[string]any{"title": "later"}); err != nil {
		t.Fatal(err)
	}
	cli("snapshot", "load", snap, "--url", s.Studio+"/__pyric/snapshot")
	if got := titles(s); len(got) != 2 || got["later"] != nil {
		t.Fatalf("after loading the snapshot on the running server: %v", got)
	}
	s.stop()
	if _, err := os.Stat(filepath.Join(data, "last-session.json")); !os.IsNotExist(err) {
		t.Errorf("--no-capture wrote a fixture: %v", err)
	}

	// Offline on the stopped server's data directory.
	off := cli("snapshot", "save", "-", "--data-dir", data)
	if !strings.Contains(off, `"live"`) {
		t.Fatalf("offline snapshot:\n%s", off)
	}
	one := filepath.Join(dir, "one.json")
	os.WriteFile(one, []byte(strings.Replace(off, `"live"`, `"offline"`, 1)), 0o644)
	cli("snapshot", "load", one, "--data-dir", data)

	// The seed is not applied again to an existing data dir; --fresh
	// starts empty.
	s2 := startServe(t, "--project", "demo-snap", "--data-dir", data, "--seed", seed)
	if got := titles(s2); got["live"] != "offline" || len(got) != 2 {
		t.Fatalf("restart on the loaded data dir with --seed: %v", got)
	}
	s2.stop()
	s3 := startServe(t, "--project", "demo-snap", "--data-dir", data, "--fresh")
	if got := titles(s3); len(got) != 0 {
		t.Fatalf("--fresh: %v", got)
	}
}
