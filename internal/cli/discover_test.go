package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	fsserver "github.com/pyric/pyric/server/firestore"
)

// TestFirestoreDiscover runs `pyric firestore discover` against pyric's
// own Firestore port through the official Go client.
func TestFirestoreDiscover(t *testing.T) {
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ctx := context.Background()
	for p, d := range map[string]map[string]any{
		"users/a":         {"name": "A", "age": 1},
		"users/b":         {"name": "B"},
		"users/a/posts/1": {"title": "t"},
	} {
		if err := testfs.Of(sb).Admin().SetDocument(ctx, p, d); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port, _ := fsserver.NewPort(l, fsserver.New(fsserver.Options{Engine: testfs.Of(sb).Engine, DefaultProject: sandbox.DefaultProject}))
	go port.Serve()
	defer port.Close()

	var out, errb bytes.Buffer
	code := Run(ctx, []string{"firestore", "discover", "--emulator-host", l.Addr().String(), "--format", "json"}, Stdio{Out: &out, Err: &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res struct {
		Schemas  map[string]json.RawMessage `json:"schemas"`
		Complete bool                       `json:"complete"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.Complete || len(res.Schemas) != 2 || res.Schemas["users/{userId}/posts"] == nil {
		t.Fatalf("%v %s", err, out.String())
	}
	out.Reset()
	code = Run(ctx, []string{"firestore", "discover", "--emulator-host", l.Addr().String(), "--format", "text"}, Stdio{Out: &out, Err: &errb})
	if code != 0 || !strings.Contains(out.String(), "age: integer  (in 1/2)") || !strings.Contains(out.String(), "  users/{userId}/posts") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if code := Run(ctx, []string{"firestore", "discover", "--emulator-host", l.Addr().String(), "--max-depth", "-1", "--format", "json"}, Stdio{Out: &out, Err: &errb}); code != exitError {
		t.Fatalf("bad option: exit %d", code)
	}
}
