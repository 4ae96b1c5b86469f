package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/compat"
)

// TestConformance runs `pyric conformance` in each form: the score table,
// one service's rows, JSON, markdown, writing the pages, and bad usage.
func TestConformance(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), append([]string{"conformance"}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
		return code, out.String(), errOut.String()
	}
	all, err := compat.Services()
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := run()
	if code != exitOK || !strings.Contains(out, "SCORE") {
		t.Fatalf("conformance: %d\n%s", code, out)
	}
	for _, s := range all {
		if !strings.Contains(out, s.ID) {
			t.Errorf("the score table lacks %s", s.ID)
		}
	}
	code, out, _ = run("firestore")
	if code != exitOK || !strings.Contains(out, "firestore.listen.metadata-changes") || strings.Contains(out, "database.read") {
		t.Errorf("conformance firestore: %d\n%s", code, out)
	}
	code, out, _ = run("database", "--json")
	var rep compat.JSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Services) != 1 || rep.Services[0].ID != "database" || len(rep.Services[0].Rows) == 0 {
		t.Errorf("conformance database --json: %d\n%.300s", code, out)
	}
	code, out, _ = run("--markdown", "storage")
	if s, _ := compat.Lookup("storage"); code != exitOK || out != compat.Markdown(s) {
		t.Errorf("conformance --markdown storage: %d, not the generator's page", code)
	}
	dir := t.TempDir()
	readme := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(readme, []byte("# x\n"+compat.ReadmeBegin+"\nold\n"+compat.ReadmeEnd+"\n"), 0o644)
	if code, _, errOut := run("--markdown", "--write", dir, "--readme", readme); code != exitOK {
		t.Fatalf("--write: %d %s", code, errOut)
	}
	for name, want := range compat.Pages(all) {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("--write wrote %s unlike the generator", name)
		}
	}
	if got, _ := os.ReadFile(readme); strings.Contains(string(got), "old") || !strings.Contains(string(got), "| **All** |") {
		t.Errorf("--readme left:\n%s", got)
	}
	for _, bad := range [][]string{{"nosuch"}, {"--json", "--markdown"}, {"a", "b"}, {"--write", dir}, {"--readme", readme}} {
		if code, _, errOut := run(bad...); code != exitError || errOut == "" {
			t.Errorf("conformance %v: %d %q, want usage error", bad, code, errOut)
		}
	}
}
