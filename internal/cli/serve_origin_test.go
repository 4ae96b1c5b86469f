package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParseServeAllowOrigin: --allow-origin (repeatable) and firebase.json's
// emulators.allowOrigins make the ports' policy; the flag wins; a
// malformed origin stops the start naming it.
func TestParseServeAllowOrigin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(`{"emulators": {"allowOrigins": ["http://192.168.1.20:5173"], "auth": {"host": "devbox.lan"}}}`), 0o644)
	env := func(string) string { return "" }
	cases := []struct {
		name    string
		args    []string
		origins []string
		err     string
	}{
		{"from firebase.json", nil, []string{"http://192.168.1.20:5173"}, ""},
		{"the flag wins, canonical", []string{"--allow-origin", "HTTPS://Tunnel.Example/", "--allow-origin", "*"}, []string{"https://tunnel.example", "*"}, ""},
		{"malformed", []string{"--allow-origin", "tunnel.example"}, nil, `origin "tunnel.example"`},
	}
	for _, c := range cases {
		var errb bytes.Buffer
		o, ok := parseServe(c.args, Stdio{Err: &errb}, env, dir)
		if c.err != "" {
			if ok || !strings.Contains(errb.String(), c.err) {
				t.Errorf("%s: ok=%v %q", c.name, ok, errb.String())
			}
			continue
		}
		if !ok {
			t.Fatalf("%s: %s", c.name, errb.String())
		}
		if !reflect.DeepEqual(o.policy.Origins, c.origins) {
			t.Errorf("%s: origins %v, want %v", c.name, o.policy.Origins, c.origins)
		}
		if !o.policy.AllowsHost("devbox.lan:9099", nil) {
			t.Errorf("%s: firebase.json's emulator host is not allowed: %+v", c.name, o.policy)
		}
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "firebase.json"), []byte(`{"emulators": {"allowOrigins": ["ftp://x"]}}`), 0o644)
	var errb bytes.Buffer
	if _, ok := parseServe(nil, Stdio{Err: &errb}, env, bad); ok || !strings.Contains(errb.String(), "emulators.allowOrigins") {
		t.Errorf("a bad origin in firebase.json: ok=%v %q", ok, errb.String())
	}
}
