package snapshot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
)

func v(kind string, x any) map[string]any { return map[string]any{kind: x} }

// TestReadOfficialExport writes documents of every value type to the
// official Firestore emulator, exports them through its export endpoint,
// and reads the export: the same documents, value for value.
func TestReadOfficialExport(t *testing.T) {
	e := emulator.Start(t)
	ctx := context.Background()
	e.Clear(ctx)
	docs := map[string]map[string]any{
		"users/alice": {
			"s": v("stringValue", "hi é"), "i": v("integerValue", "-42"), "big": v("integerValue", "9007199254740993"),
			"d": v("doubleValue", 1.5), "di": v("doubleValue", 3.0), "b": v("booleanValue", true), "f": v("booleanValue", false),
			"n": v("nullValue", nil), "t": v("timestampValue", "2026-01-02T03:04:05.123456Z"),
			"a":  v("arrayValue", map[string]any{"values": []any{v("integerValue", "1"), v("stringValue", "x"), v("mapValue", map[string]any{"fields": map[string]any{"q": v("booleanValue", true)}})}}),
			"ea": v("arrayValue", map[string]any{}),
			"m":  v("mapValue", map[string]any{"fields": map[string]any{"k": v("stringValue", "v"), "deep": v("mapValue", map[string]any{"fields": map[string]any{"z": v("integerValue", "0")}})}}),
			"em": v("mapValue", map[string]any{}),
			"g":  v("geoPointValue", map[string]any{"latitude": 1.5, "longitude": -2.5}),
			"y":  v("bytesValue", "AQID"),
			"r":  v("referenceValue", "projects/"+e.Project+"/databases/(default)/documents/users/bob/posts/p2"),
		},
		"users/alice/posts/p1": {"x": v("integerValue", "1")},
		"users/123":            {},
		"c/d e":                {"a.b": v("stringValue", "dotted key")},
	}
	for p, f := range docs {
		r, err := e.Do(ctx, "PATCH", e.DocumentsURL()+"/"+p, map[string]any{"fields": f}, "owner")
		if err != nil || r.Status != 200 {
			t.Fatalf("write %s: %v %d %s", p, err, r.Status, r.Body)
		}
	}
	dir := t.TempDir()
	r, err := e.Do(ctx, "POST", "/emulator/v1/projects/"+e.Project+":export", map[string]any{"database": "projects/" + e.Project + "/databases/(default)", "export_directory": dir}, "")
	if err != nil || r.Status != 200 {
		t.Fatalf("export: %v %d %s", err, r.Status, r.Body)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("export dir: %v", entries)
	}
	db := firestore.DatabaseName{Project: e.Project, Database: "(default)"}
	got, err := firestore.ReadExport(filepath.Join(dir, entries[0].Name()), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(docs) {
		t.Errorf("read %d documents, want %d: %v", len(got), len(docs), keys(got))
	}
	for p := range docs {
		r, err := e.Do(ctx, "GET", e.DocumentsURL()+"/"+p, nil, "owner")
		if err != nil || r.Status != 200 {
			t.Fatalf("get %s: %v %d", p, err, r.Status)
		}
		var want pb.Document
		if err := protojson.Unmarshal(r.Body, &want); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&pb.MapValue{Fields: want.Fields}, &pb.MapValue{Fields: got[p]}) {
			t.Errorf("%s:\n got %v\nwant %v", p, firestore.EncodeFields(got[p], db), firestore.EncodeFields(want.Fields, db))
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestExportImportRoundTrip exports a sandbox in the Emulator Suite layout,
// imports it into a fresh one (same documents, exactly), imports the
// official emulator's own export into pyric, and loads pyric's export
// into the official emulator.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{}), Project: "pyric-oracle"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fs := testfs.Of(src).Admin()
	docs := map[string]map[string]any{
		"users/alice": {"s": "hi", "i": int64(-42), "big": json.Number("9007199254740993"), "d": 1.5, "di": map[string]any{"__type": "float", "value": 3},
			"b": true, "n": nil, "t": map[string]any{"__type": "timestamp", "seconds": 1767323045, "nanos": 123456000},
			"a": []any{int64(1), "x", map[string]any{"q": true}}, "ea": []any{}, "m": map[string]any{"k": "v", "deep": map[string]any{"z": int64(0)}},
			"em": map[string]any{}, "g": map[string]any{"__type": "latlng", "lat": 1.5, "lng": -2.5}, "y": map[string]any{"__type": "bytes", "base64": "AQID"},
			"r": map[string]any{"__type": "reference", "path": "users/bob/posts/p2"}},
		"users/alice/posts/p1": {"x": int64(1)},
		"c/d e":                {"a.b": "dotted"},
	}
	for p, f := range docs {
		if err := fs.SetDocument(ctx, p, f); err != nil {
			t.Fatal(p, err)
		}
	}
	// A large document spans LevelDB blocks.
	if err := fs.SetDocument(ctx, "big/doc", map[string]any{"blob": strings.Repeat("x", 100000)}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ExportDir(src, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"firebase-export-metadata.json", "firestore_export/all_namespaces/all_kinds/output-0"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	dst, err := sandbox.Open(sandbox.Options{Services: backend.Services(&backend.Options{}), Project: "pyric-oracle"})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := ImportDir(dst, dir); err != nil {
		t.Fatal(err)
	}
	a, _ := src.Snapshot()
	b, _ := dst.Snapshot()
	if fsState(t, a) != fsState(t, b) {
		t.Fatalf("Firestore round trip differs:\n%.2000s\n---\n%.2000s", fsState(t, a), fsState(t, b))
	}

	// The official emulator's own export imports into pyric with the same
	// documents (TestReadOfficialExport checks the reader value by value).
	e := emulator.Start(t)
	e.Clear(ctx)
	if r, err := e.Do(ctx, "PATCH", e.DocumentsURL()+"/users/alice", map[string]any{"fields": map[string]any{"x": v("integerValue", "7")}}, "owner"); err != nil || r.Status != 200 {
		t.Fatal(err, r.Status)
	}
	odir := t.TempDir()
	if r, err := e.Do(ctx, "POST", "/emulator/v1/projects/"+e.Project+":export", map[string]any{"database": "projects/" + e.Project + "/databases/(default)", "export_directory": odir}, ""); err != nil || r.Status != 200 {
		t.Fatal(err, r.Status)
	}
	entries, _ := os.ReadDir(odir)
	if err := ImportDir(dst, filepath.Join(odir, entries[0].Name())); err != nil {
		t.Fatal(err)
	}
	got, _ := testfs.Of(dst).Admin().GetDocument(ctx, "users/alice")
	if !equalJSONForm(got, map[string]any{"x": 7}) {
		t.Fatalf("imported %v", got)
	}
	if d, _ := testfs.Of(dst).Admin().GetDocument(ctx, "c/d e"); d != nil {
		t.Fatal("import kept documents the export does not have")
	}
}

func equalJSONForm(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestMain(m *testing.M) {
	code := m.Run()
	emulator.StopAll()
	os.Exit(code)
}

// fsState is a snapshot's Firestore state.
func fsState(t *testing.T, snap []byte) string {
	t.Helper()
	var s struct {
		Services map[string]json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(snap, &s); err != nil {
		t.Fatal(err)
	}
	return string(s.Services["firestore"])
}
