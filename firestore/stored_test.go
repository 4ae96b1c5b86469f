package firestore

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pyric/pyric/firestore/fsstore"
)

// storedOf encodes an engine's documents as a Persister stores them.
func storedOf(t testing.TB, e *Engine) []StoredDocument {
	t.Helper()
	var out []StoredDocument
	for _, d := range e.Dump(testDB) {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, StoredDocument{Path: strings.TrimPrefix(d.Name, testDB.Documents()+"/"), Data: b})
	}
	return out
}

// restoreStored restores docs into testDB of e, each encoding handed
// only during the call (overwritten after it), as a store's Log hands them.
func restoreStored(e *Engine, docs []StoredDocument) error {
	held := make([]StoredDocument, len(docs))
	for i, d := range docs {
		held[i] = StoredDocument{Path: d.Path, Data: bytes.Clone(d.Data)}
	}
	err := e.RestoreStored(testDB, len(held), func(i int) StoredDocument { return held[i] })
	for _, d := range held {
		for j := range d.Data {
			d.Data[j] = 0xDD
		}
	}
	return err
}

var testTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func storedFixture(t testing.TB) *Engine {
	e := newTestEngine(t)
	deep := Int(1)
	for range 20 {
		deep = Map(map[string]*pb.Value{"m": deep})
	}
	setT(t, e, "c/a", map[string]*pb.Value{"n": Int(1), "s": String("é"), "t": tsv(7), "b": bytesv("\x00\xff"),
		"r": refv("c/b"), "g": geov(1, 2), "x": Null(), "d": Double(nan), "arr": Array(Int(1), Map(map[string]*pb.Value{"k": Bool(true)})),
		"deep": deep, "v": Vector(1, 2)})
	setT(t, e, "c/b", map[string]*pb.Value{"n": Int(2)})
	setT(t, e, "c/b/sub/x", map[string]*pb.Value{"n": Int(3)})
	setT(t, e, "other/y", map[string]*pb.Value{"n": Int(4)})
	return e
}

// Restored encodings read back as the documents they encode: gets,
// queries (through an index built on them), collection groups, and
// overwrites keeping the restored version as history.
func TestRestoreStored(t *testing.T) {
	src := storedFixture(t)
	e := newTestEngine(t)
	if err := restoreStored(e, storedOf(t, src)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(src.Dump(testDB), e.Dump(testDB), protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
		t.Fatalf("restored documents differ (-want +got):\n%s", diff)
	}
	if got := ids(t, e, &pb.StructuredQuery{From: from("c"), Where: where("n", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(1))}); fmt.Sprint(got) != "[b]" {
		t.Fatalf("query: %v", got)
	}
	group := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "sub", AllDescendants: true}}}
	if got := ids(t, e, group); fmt.Sprint(got) != "[x]" {
		t.Fatalf("collection group: %v", got)
	}
	if v, _, _ := e.HistoryStats(testDB); v != 0 {
		t.Fatalf("history after restore: %d versions", v)
	}
	setT(t, e, "c/b", map[string]*pb.Value{"n": Int(5)})
	if v, n, _ := e.HistoryStats(testDB); v != 1 || n <= fsstore.VersionOverhead {
		t.Fatalf("history after an overwrite: %d versions, %d bytes", v, n)
	}
	if got := getT(t, e, "c/b").Fields["n"].GetIntegerValue(); got != 5 {
		t.Fatalf("overwrite reads %d", got)
	}
}

// A stored document without create and update times (stores written
// before they were kept) gets the restore time, as Restore gives it.
func TestRestoreStoredWithoutTimes(t *testing.T) {
	e := newTestEngine(t)
	b, _ := proto.Marshal(&pb.Document{Name: name("c/q"), Fields: map[string]*pb.Value{"n": Int(1)}})
	if err := restoreStored(e, []StoredDocument{{Path: "c/q", Data: b}}); err != nil {
		t.Fatal(err)
	}
	d := getT(t, e, "c/q")
	if d.GetCreateTime() == nil || d.GetUpdateTime() == nil || d.Fields["n"].GetIntegerValue() != 1 {
		t.Fatalf("restored %v", d)
	}
}

// A damaged encoding is a StoredDocumentError naming the path and the
// problem, and nothing of the batch is restored.
func TestRestoreStoredDamaged(t *testing.T) {
	good := storedOf(t, storedFixture(t))
	a := good[0]
	enc := func(d *pb.Document) []byte { b, _ := proto.Marshal(d); return b }
	cases := []struct {
		name string
		doc  StoredDocument
		want string
	}{
		{"truncated", StoredDocument{Path: a.Path, Data: a.Data[:len(a.Data)/2]}, "not a valid encoding"},
		{"garbage", StoredDocument{Path: a.Path, Data: []byte{0xff, 0xff, 0xff}}, "not a valid encoding"},
		{"empty", StoredDocument{Path: a.Path, Data: nil}, "has no name"},
		{"under another path", StoredDocument{Path: "c/zzz", Data: a.Data}, "is named"},
		{"key not a document path", StoredDocument{Path: "c", Data: a.Data}, "not a document path"},
		{"field name not UTF-8", StoredDocument{Path: "c/q", Data: bytes.ReplaceAll(enc(&pb.Document{Name: name("c/q"), Fields: map[string]*pb.Value{"QQQQ": Int(1)},
			CreateTime: ts(testTime), UpdateTime: ts(testTime)}), []byte("QQQQ"), []byte("\xff\xfe\xff\xfe"))}, "not valid UTF-8"},
		{"function value", StoredDocument{Path: "c/q", Data: enc(&pb.Document{Name: name("c/q"), Fields: map[string]*pb.Value{"f": {ValueType: &pb.Value_FunctionValue{FunctionValue: &pb.Function{Name: "f"}}}}})}, "function"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			err := restoreStored(e, append(append([]StoredDocument{}, good[1:]...), c.doc))
			var se *StoredDocumentError
			if !errors.As(err, &se) || se.Path != c.doc.Path || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a StoredDocumentError for %s containing %q", err, c.doc.Path, c.want)
			}
			if n := len(e.Dump(testDB)); n != 0 {
				t.Fatalf("%d documents restored from a damaged batch", n)
			}
		})
	}
}

// memPersister records what it is handed.
type memPersister struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (p *memPersister) Commit(_ DatabaseName, _ time.Time, changes []Change) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range changes {
		p.data[c.Path] = slices.Clone(c.Data) // valid only during the call
	}
	return nil
}

// Durable commits keep documents encoded, decoded forms in a bounded
// cache: with the cache far smaller than the data, every read still
// returns the document committed, and the encoding handed to the
// Persister decodes to it.
func TestCompactedDocuments(t *testing.T) {
	p := &memPersister{data: map[string][]byte{}}
	e := New(Options{Rules: AllowAll, Persister: p})
	e.db(testDB).st.SetDecodedCacheLimit(4 << 10)
	want := map[string]*pb.Document{}
	for i := range 300 {
		rel := fmt.Sprintf("c/d%03d", i%200)
		setT(t, e, rel, map[string]*pb.Value{"i": Int(int64(i)), "s": String(strings.Repeat("x", i))})
		want[rel] = getT(t, e, rel)
	}
	db := e.db(testDB)
	db.st.RLock()
	st := db.st.Stats()
	db.st.RUnlock()
	if st.Encoded != 200 {
		t.Fatalf("%d of 200 latest versions encoded", st.Encoded)
	}
	if st.DecodedCacheBytes > st.DecodedCacheLimit+fsstore.DocHeapSize(want["c/d199"]) {
		t.Fatalf("cache holds %d bytes, limit %d", st.DecodedCacheBytes, st.DecodedCacheLimit)
	}
	for rel, w := range want {
		if diff := cmp.Diff(w, getT(t, e, rel), protocmp.Transform()); diff != "" {
			t.Fatalf("%s (-committed +read):\n%s", rel, diff)
		}
		d := &pb.Document{}
		if err := proto.Unmarshal(p.data[rel], d); err != nil || !proto.Equal(d, w) {
			t.Fatalf("%s: the persisted encoding decodes to %v (%v)", rel, d, err)
		}
	}
	// A query decodes what the cache dropped.
	if got := ids(t, e, &pb.StructuredQuery{From: from("c"), Where: where("i", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, Int(200))}); len(got) != 100 {
		t.Fatalf("query over compacted documents: %d results", len(got))
	}
}

// A durable database's documents go to the wire in the encoding its
// store keeps: WireDocuments replaces each document a read returned by
// one that marshals to a message equal to it (an old version read at an
// earlier time too); a projection and a database in memory keep theirs.
func TestWireDocuments(t *testing.T) {
	p := &memPersister{data: map[string][]byte{}}
	e := New(Options{Rules: AllowAll, Persister: p})
	for i := range 20 {
		setT(t, e, fmt.Sprintf("c/d%02d", i), map[string]*pb.Value{"i": Int(int64(i)), "g": Int(int64(i % 2)),
			"m": {ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{"s": String("x")}}}}})
	}
	before := getT(t, e, "c/d00")
	setT(t, e, "c/d00", map[string]*pb.Value{"i": Int(100), "g": Int(0)})
	r, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{
		StructuredQuery: &pb.StructuredQuery{From: from("c"), Where: where("g", pb.StructuredQuery_FieldFilter_EQUAL, Int(0))}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []*pb.Document
	for _, x := range r {
		docs = append(docs, x.Document)
	}
	if len(docs) != 10 {
		t.Fatalf("%d results, want 10", len(docs))
	}
	projected, err := e.BatchGetDocuments(bg, admin, &pb.BatchGetDocumentsRequest{Database: testDB.String(),
		Documents: []string{name("c/d01")}, Mask: &pb.DocumentMask{FieldPaths: []string{"i"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The version before the last write, read at its time, is history
	// kept decoded.
	old, err := e.BatchGetDocuments(bg, admin, &pb.BatchGetDocumentsRequest{Database: testDB.String(),
		Documents: []string{name("c/d00")}, ConsistencySelector: &pb.BatchGetDocumentsRequest_ReadTime{ReadTime: before.UpdateTime}})
	if err != nil {
		t.Fatal(err)
	}
	if old[0].GetFound().GetFields()["m"] == nil {
		t.Fatalf("the old version read is %v", old[0].GetFound())
	}
	all := append(slices.Clone(docs), old[0].GetFound(), projected[0].GetFound())
	wire := slices.Clone(all)
	e.WireDocuments(testDB, wire)
	for i, w := range wire {
		if i == len(all)-1 {
			if w != all[i] {
				t.Errorf("%s: the projection was replaced", all[i].Name)
			}
			continue
		}
		if w == all[i] || len(w.Fields) != 0 {
			t.Errorf("%s: not replaced by its kept encoding", all[i].Name)
		}
		b, err := proto.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		got := &pb.Document{}
		if err := proto.Unmarshal(b, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all[i], got, protocmp.Transform()); diff != "" {
			t.Errorf("%s: the wire form decodes otherwise (-read +wire):\n%s", all[i].Name, diff)
		}
	}
	// In memory nothing is kept encoded.
	m := newTestEngine(t)
	setT(t, m, "c/d00", map[string]*pb.Value{"i": Int(1)})
	d := getT(t, m, "c/d00")
	w := []*pb.Document{d}
	m.WireDocuments(testDB, w)
	if w[0] != d {
		t.Errorf("a document of a database in memory was replaced")
	}
}

// flakyPersister fails every commit of a document whose path ends in
// "fail".
type flakyPersister struct{}

func (flakyPersister) Commit(_ DatabaseName, _ time.Time, changes []Change) error {
	for _, c := range changes {
		if strings.HasSuffix(c.Path, "fail") {
			return errors.New("disk full")
		}
	}
	return nil
}

// A commit the Persister fails is answered UNAVAILABLE and left out of
// the state, and the commits before and after it (whose batches reuse
// the group commit's queue and acknowledgements) are answered and kept
// as they were made.
func TestFailedDurableCommitsBetweenGoodOnes(t *testing.T) {
	e := New(Options{Rules: AllowAll, Persister: flakyPersister{}})
	for i := range 20 {
		rel := fmt.Sprintf("c/%d", i)
		if i%3 == 1 {
			rel += "fail"
		}
		_, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{upd(rel, M("n", Int(int64(i))))}})
		if i%3 == 1 {
			if Code(err).String() != "Unavailable" {
				t.Fatalf("commit %s: %v, want UNAVAILABLE", rel, err)
			}
			if getT(t, e, rel) != nil {
				t.Fatalf("%s, not made durable, is readable", rel)
			}
			continue
		}
		if err != nil {
			t.Fatalf("commit %s: %v", rel, err)
		}
		if d := getT(t, e, rel); d == nil || d.Fields["n"].GetIntegerValue() != int64(i) {
			t.Fatalf("%s is %v", rel, d)
		}
	}
}
