package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/emulator"
)

func v(kind string, x any) map[string]any { return map[string]any{kind: x} }

// TestReadOfficialExport writes documents of every value type to the
// official Firestore emulator, exports them through its export endpoint,
// and reads the export: the same documents, value for value.
func TestReadOfficialExport(t *testing.T) {
	e := emulator.Start(t)
	defer e.Stop()
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
	got, err := ReadFirestoreExport(filepath.Join(dir, entries[0].Name()), db)
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
