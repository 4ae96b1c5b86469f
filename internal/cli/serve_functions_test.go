package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseServeFunctions(t *testing.T) {
	t.Parallel()
	noEnv := func(string) string { return "" }
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"functions":[{"source":"fns","codebase":"a"}],"emulators":{"functions":{"port":5055}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	o, ok := parseServe([]string{"--inspect-functions"}, Stdio{Err: &errb}, noEnv, dir)
	if !ok {
		t.Fatal(errb.String())
	}
	if len(o.functions) != 1 || o.functions[0].Name != "a" || o.functions[0].Source != filepath.Join(dir, "fns") {
		t.Errorf("codebases %+v", o.functions)
	}
	if o.ports["functions"] != 5055 || o.inspectPort != 9229 {
		t.Errorf("port %d inspect %d", o.ports["functions"], o.inspectPort)
	}
	if o, _ := parseServe([]string{"--inspect-functions", "9300", "--functions-source", "other"}, Stdio{Err: &errb}, noEnv, dir); o.inspectPort != 9300 ||
		len(o.functions) != 1 || o.functions[0].Source != filepath.Join(dir, "other") {
		t.Errorf("inspect %d codebases %+v", o.inspectPort, o.functions)
	}
	// Without a functions section no codebase runs.
	if o, _ := parseServe(nil, Stdio{Err: &errb}, noEnv, t.TempDir()); len(o.functions) != 0 {
		t.Errorf("codebases without firebase.json: %+v", o.functions)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "firebase.json"), []byte(`{"functions":{"codebase":"x"}}`), 0o600)
	errb.Reset()
	if _, ok := parseServe(nil, Stdio{Err: &errb}, noEnv, bad); ok || !strings.Contains(errb.String(), `"source" is required`) {
		t.Errorf("a codebase without source: ok=%v %s", ok, errb.String())
	}
}
