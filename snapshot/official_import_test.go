package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
)

type ownerToken struct{}

func (ownerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer owner"}, nil
}
func (ownerToken) RequireTransportSecurity() bool { return false }

// goClient is the official Go client on addr as the emulator's owner.
func goClient(t *testing.T, addr, project string) *firestore.Client {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(ownerToken{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c, err := firestore.NewClient(context.Background(), project, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// comparable replaces the values that carry their client (document
// references) or protobuf state (geo points) with plain ones.
func comparable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = comparable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = comparable(e)
		}
		return out
	case *firestore.DocumentRef:
		return "reference " + x.Path
	case *latlng.LatLng:
		return fmt.Sprintf("geo %v,%v", x.Latitude, x.Longitude)
	}
	return v
}

// TestOfficialEmulatorLoadsPyricExport exports pyric's Firestore in the
// Emulator Suite layout, starts the official emulator on it the way
// `firebase emulators:start --import` does (--seed_from_export with the
// metadata file firebase-export-metadata.json names), and reads every
// document back through the official Go client from both servers: the
// same documents, value for value.
func TestOfficialEmulatorLoadsPyricExport(t *testing.T) {
	if emulator.Jar() == "" {
		emulator.StartWith(t) // skips, or fails under PYRIC_E2E_REQUIRED=1
	}
	ctx := context.Background()
	const project = "pyric-oracle"
	sb, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{}), Project: project})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	docs := map[string]map[string]any{
		"users/alice": {"s": "hi é", "i": int64(-42), "big": json.Number("9007199254740993"), "d": 1.5,
			"di": map[string]any{"__type": "float", "value": 3}, "b": true, "n": nil,
			"t": map[string]any{"__type": "timestamp", "seconds": 1767323045, "nanos": 123456000},
			"a": []any{int64(1), "x", map[string]any{"q": true}}, "ea": []any{},
			"m": map[string]any{"k": "v", "deep": map[string]any{"z": int64(0)}}, "em": map[string]any{},
			"g": map[string]any{"__type": "latlng", "lat": 1.5, "lng": -2.5}, "y": map[string]any{"__type": "bytes", "base64": "AQID"},
			"r": map[string]any{"__type": "reference", "path": "users/bob/posts/p2"}},
		"users/alice/posts/p1": {"x": int64(1)},
		"users/123":            {},
		"c/d e":                {"a.b": "dotted key"},
		"big/doc":              {"blob": strings.Repeat("x", 100000)},
	}
	for p, f := range docs {
		if err := testfs.Of(sb).Admin().SetDocument(ctx, p, f); err != nil {
			t.Fatal(p, err)
		}
	}
	dir := t.TempDir()
	if err := ExportDir(sb, dir); err != nil {
		t.Fatal(err)
	}
	var md ExportMetadata
	data, err := readBounded(filepath.Join(dir, "firebase-export-metadata.json"))
	if err != nil || json.Unmarshal(data, &md) != nil || md.Services["firestore"] == nil {
		t.Fatalf("firebase-export-metadata.json: %v %s", err, data)
	}
	official := emulator.StartWith(t, "--seed_from_export="+filepath.Join(dir, md.Services["firestore"].MetadataFile))

	b, err := backend.Start(backend.Options{Use: sb})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(ctx)
	read := func(addr string) map[string]map[string]any {
		c := goClient(t, addr, project)
		var refs []*firestore.DocumentRef
		for p := range docs {
			refs = append(refs, c.Doc(p))
		}
		snaps, err := c.GetAll(ctx, refs)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		out := map[string]map[string]any{}
		for _, s := range snaps {
			if !s.Exists() {
				t.Errorf("%s: %s does not exist", addr, s.Ref.Path)
				continue
			}
			out[strings.SplitN(s.Ref.Path, "/documents/", 2)[1]] = comparable(s.Data()).(map[string]any)
		}
		// And nothing else: the collections hold exactly these.
		n := 0
		for _, col := range []string{"users", "c", "big"} {
			all, err := c.Collection(col).Documents(ctx).GetAll()
			if err != nil {
				t.Fatal(err)
			}
			n += len(all)
		}
		if n != 4 {
			t.Errorf("%s: %d top-level documents, want 4", addr, n)
		}
		return out
	}
	want := read(b.Addr(backend.Firestore))
	got := read(official.Host)
	if len(want) != len(docs) {
		t.Fatalf("pyric serves %d documents, want %d", len(want), len(docs))
	}
	for p, w := range want {
		if !reflect.DeepEqual(got[p], w) {
			t.Errorf("%s:\nofficial emulator %v\npyric             %v", p, got[p], w)
		}
	}
}
