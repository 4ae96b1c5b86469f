package fsstore

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

var testDB = fsvalue.DatabaseName{Project: "p", Database: fsvalue.DefaultDatabase}

// fixture is a few stored documents of every value type, nested deep.
func fixture(t testing.TB) []StoredDocument {
	t.Helper()
	deep := fsvalue.Int(1)
	for range 20 {
		deep = fsvalue.Map(map[string]*pb.Value{"m": deep})
	}
	stamp := timestamppb.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	docs := map[string]map[string]*pb.Value{
		"c/a": {"n": fsvalue.Int(1), "s": fsvalue.String("é"), "x": fsvalue.Null(), "d": fsvalue.Double(0.5),
			"b":    {ValueType: &pb.Value_BytesValue{BytesValue: []byte("\x00\xff")}},
			"r":    {ValueType: &pb.Value_ReferenceValue{ReferenceValue: testDB.DocName("c/b")}},
			"t":    {ValueType: &pb.Value_TimestampValue{TimestampValue: stamp}},
			"arr":  fsvalue.Array(fsvalue.Int(1), fsvalue.Map(map[string]*pb.Value{"k": fsvalue.Bool(true)})),
			"deep": deep, "v": fsvalue.Vector(1, 2)},
		"c/b":       {"n": fsvalue.Int(2)},
		"c/b/sub/x": {"n": fsvalue.Int(3)},
	}
	var out []StoredDocument
	for _, rel := range []string{"c/a", "c/b", "c/b/sub/x"} {
		d := &pb.Document{Name: testDB.DocName(rel), Fields: docs[rel], CreateTime: stamp, UpdateTime: stamp}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, StoredDocument{Path: rel, Data: b})
	}
	return out
}

// checkList checks docs of testDB as CheckStored does, each encoding
// handed only during the call (overwritten after it), as a store's Log
// hands them.
func checkList(docs []StoredDocument) (*Checked, error) {
	held := make([]StoredDocument, len(docs))
	for i, d := range docs {
		held[i] = StoredDocument{Path: d.Path, Data: slices.Clone(d.Data)}
	}
	c, err := CheckStored(testDB, len(held), func(i int) StoredDocument { return held[i] })
	for _, d := range held {
		for j := range d.Data {
			d.Data[j] = 0xDD
		}
	}
	return c, err
}

// FuzzCheckStored: what checkStored accepts decodes, as the document its
// path names (the lazy decode relies on it); nothing panics.
func FuzzCheckStored(f *testing.F) {
	for _, d := range fixture(f) {
		f.Add(d.Path, d.Data)
	}
	f.Add("c/a", []byte{0x0a, 0x01})
	f.Fuzz(func(t *testing.T, rel string, data []byte) {
		if _, err := checkStored(data, testDB.Documents()+"/", rel); err != nil {
			return
		}
		d := &pb.Document{}
		if err := proto.Unmarshal(data, d); err != nil {
			t.Fatalf("checkStored accepted what does not decode: %v", err)
		}
		if d.Name != testDB.DocName(rel) {
			t.Fatalf("accepted %q under %q", d.Name, rel)
		}
	})
}

func BenchmarkCheckStored(b *testing.B) {
	docs := fixture(b)
	prefix := testDB.Documents() + "/"
	for b.Loop() {
		for _, d := range docs {
			if _, err := checkStored(d.Data, prefix, d.Path); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// The publish hook hears each commit once it is visible, and a restore as
// everything changed.
func TestPublishHook(t *testing.T) {
	type heard struct {
		t   time.Time
		n   int
		all bool
	}
	var got []heard
	var s *Store
	s = New(Options{Name: testDB, History: time.Hour, HistoryBytes: DefaultHistoryBytes, Now: time.Now,
		Publish: func(at time.Time, changes []Change, all bool) {
			if !s.ReadTime().Equal(at) {
				t.Errorf("published %v while reads happen at %v", at, s.ReadTime())
			}
			got = append(got, heard{at, len(changes), all})
		}})
	c, err := checkList(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := s.RestoreStored(c)
	if err != nil {
		t.Fatal(err)
	}
	other := New(Options{Name: fsvalue.DatabaseName{Project: "p", Database: "other"}, History: time.Hour,
		HistoryBytes: DefaultHistoryBytes, Now: time.Now})
	if _, err := other.RestoreStored(c); !errors.Is(err, fsvalue.ErrInternal) {
		t.Errorf("restoring documents checked for another database: %v", err)
	}
	again := New(Options{Name: testDB, History: time.Hour, HistoryBytes: DefaultHistoryBytes, Now: time.Now})
	if _, err := again.RestoreStored(c); !errors.Is(err, fsvalue.ErrInternal) {
		t.Errorf("restoring checked documents a second time (their entries are the first store's): %v", err)
	}
	s.Lock()
	t1 := s.NextTime()
	if done := s.Commit(t1, []Change{{Path: "c/a", Doc: nil}}); done.Queued() {
		t.Fatal("an in-memory commit is queued")
	}
	if s.GetAt("c/a", t1) != nil || s.GetAt("c/a", rt) == nil {
		t.Error("the delete is not at its commit time, or history lost the restored version")
	}
	s.Unlock()
	want := []heard{{rt, 0, true}, {t1, 1, false}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("hook heard %v, want %v", got, want)
	}
}

// bigStored is n stored documents in key order, in collection c and, one
// in ten, in a subcollection under the one before (c/dNNNNN/sub/x), so
// that the two halves of a parallel check and restore hold both.
func bigStored(t testing.TB, n int) []StoredDocument {
	t.Helper()
	stamp := timestamppb.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var out []StoredDocument
	for i := 0; len(out) < n; i++ {
		rels := []string{fmt.Sprintf("c/d%06d", i)}
		if i%10 == 9 {
			rels = append(rels, rels[0]+"/sub/x")
		}
		for _, rel := range rels {
			d := &pb.Document{Name: testDB.DocName(rel), Fields: map[string]*pb.Value{"n": fsvalue.Int(int64(len(out)))},
				CreateTime: stamp, UpdateTime: stamp}
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, StoredDocument{Path: rel, Data: b})
		}
	}
	return out[:n]
}

// TestRestoreStoredBig: a batch big enough to be checked and restored in
// two halves at once restores every document, each readable at its path
// and listed in its collection and collection group; damage in either
// half is found, and the first damaged document is the one reported.
func TestRestoreStoredBig(t *testing.T) {
	t.Parallel()
	docs := bigStored(t, 2*parallelCheck+3)
	c, err := checkList(docs)
	if err != nil {
		t.Fatal(err)
	}
	if !c.sorted {
		t.Fatal("documents in key order are not seen as sorted")
	}
	s := New(Options{Name: testDB, History: time.Hour, HistoryBytes: DefaultHistoryBytes, Now: time.Now})
	rt, err := s.RestoreStored(c)
	if err != nil {
		t.Fatal(err)
	}
	s.RLock()
	defer s.RUnlock()
	subs := 0
	for i, sd := range docs {
		d := s.GetAt(sd.Path, rt)
		if d == nil || d.Fields["n"].GetIntegerValue() != int64(i) || d.Name != testDB.DocName(sd.Path) {
			t.Fatalf("%s reads %v", sd.Path, d)
		}
		if strings.HasSuffix(sd.Path, "/sub/x") {
			subs++
		}
	}
	if got := len(s.colls["c"]); got != len(docs)-subs {
		t.Errorf("collection c lists %d documents, want %d", got, len(docs)-subs)
	}
	if got := len(s.groups["sub"]); got != subs {
		t.Errorf("collection group sub has %d collections, want %d", got, subs)
	}
	if st := s.Stats(); st.Documents != len(docs) || st.Encoded != len(docs) {
		t.Errorf("stats %+v, want %d documents, all encoded", st, len(docs))
	}

	damaged := func(at ...int) []StoredDocument {
		out := append([]StoredDocument(nil), docs...)
		for _, i := range at {
			out[i].Data = append([]byte{0xff}, out[i].Data...) // a bad field tag
		}
		return out
	}
	for _, at := range [][]int{{5}, {len(docs) - 2}, {len(docs) - 2, 5}} {
		_, err := checkList(damaged(at...))
		var de *StoredDocumentError
		first := slices.Min(at)
		if !errors.As(err, &de) || de.Path != docs[first].Path {
			t.Errorf("damaged at %v: %v, want the document %s reported", at, err, docs[first].Path)
		}
	}
	swapped := append([]StoredDocument(nil), docs...)
	swapped[len(docs)-1], swapped[len(docs)-2] = swapped[len(docs)-2], swapped[len(docs)-1]
	if c, err := checkList(swapped); err != nil || c.sorted {
		t.Errorf("documents out of key order: sorted %v, %v", c != nil && c.sorted, err)
	}
}

// smallCacheStore is a durable store of 200 small documents whose
// decoded-document cache holds only a few of them (4 KiB).
func smallCacheStore(t *testing.T) *Store {
	t.Helper()
	s := New(Options{Name: testDB, History: time.Hour, HistoryBytes: DefaultHistoryBytes, Now: time.Now, Persister: nopPersister{}})
	s.SetDecodedCacheLimit(4 << 10)
	for i := range 200 {
		s.Lock()
		at := s.NextTime()
		rel := fmt.Sprintf("c/d%03d", i)
		done := s.Commit(at, []Change{{Path: rel, Doc: &pb.Document{Name: testDB.DocName(rel),
			Fields:     map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}}},
			CreateTime: timestamppb.New(at), UpdateTime: timestamppb.New(at)}}})
		s.Unlock()
		if err := done.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Encodings finds a document's kept encoding while the decoded-document
// cache holds its decoded form, and only then: the cache's index of
// decoded forms drops each one the cache drops.
func TestEncodingsFollowTheCache(t *testing.T) {
	s := smallCacheStore(t)
	s.RLock()
	var docs []*pb.Document
	for _, e := range s.All() {
		docs = append(docs, e.Current())
	}
	s.RUnlock()
	found := 0
	s.Encodings(docs, func(i int, raw []byte) {
		found++
		d := &pb.Document{}
		if err := proto.Unmarshal(raw, d); err != nil || d.Name != "" {
			t.Fatalf("%s: kept encoding %x (%v)", docs[i].Name, raw, err)
		}
		d.Name = docs[i].Name
		if !proto.Equal(d, docs[i]) {
			t.Fatalf("%s: kept encoding decodes to %v", docs[i].Name, d)
		}
	})
	s.cache.mu.Lock()
	live, indexed := len(s.cache.ring)-s.cache.head, len(s.cache.byDoc)
	for d, x := range s.cache.byDoc {
		if x.doc.Load() != d {
			t.Errorf("%s: indexed, but no longer its encoding's decoded form", d.Name)
		}
	}
	s.cache.mu.Unlock()
	if indexed != live || found == 0 || found > live {
		t.Errorf("the cache holds %d decoded forms, indexes %d; Encodings found %d of %d", live, indexed, found, len(docs))
	}
}

// TestScanLeavesTheCache: ScanAt reads what GetAt reads, but where GetAt
// keeps the decoded form of a document kept only encoded, ScanAt decodes
// it for the caller alone: the decoded-document
// cache holds the same forms after a scan of every document as before
// it, and a document it did not hold stays encoded only.
func TestScanLeavesTheCache(t *testing.T) {
	s := smallCacheStore(t)
	cached := func() map[*pb.Document]bool {
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		m := map[*pb.Document]bool{}
		for _, e := range s.cache.ring[s.cache.head:] {
			m[e.d] = true
		}
		return m
	}
	before := cached()
	s.RLock()
	defer s.RUnlock()
	now := s.ReadTime()
	encodedOnly := 0
	for rel, e := range s.All() {
		v, _ := e.versionAt(now)
		if v.enc == nil {
			t.Fatalf("%s: not kept encoded in a durable store", rel)
		}
		wasDecoded := v.enc.doc.Load() != nil
		got := scanned(s, rel, now)
		if !wasDecoded {
			encodedOnly++
			if v.enc.doc.Load() != nil {
				t.Errorf("%s: the scan kept its decoded form", rel)
			}
		}
		want := s.GetAt(rel, now)
		if !proto.Equal(got, want) {
			t.Errorf("%s: ScanEncodedAt %v, GetAt %v", rel, got, want)
		}
		if v.enc.doc.Load() != want {
			t.Errorf("%s: GetAt did not keep its decoded form", rel)
		}
	}
	if encodedOnly == 0 {
		t.Fatal("every document was decoded already: the scan was not tested")
	}
	// GetAt above entered documents into the cache; scan again from a
	// fresh snapshot of it.
	before = cached()
	for rel := range s.All() {
		s.ScanEncodedAt(rel, now)
	}
	if after := cached(); !maps.Equal(before, after) {
		t.Errorf("a scan changed the cache: %d forms before, %d after", len(before), len(after))
	}
	if doc, raw := s.ScanEncodedAt("c/absent", now); doc != nil || raw != nil {
		t.Error("ScanEncodedAt of an absent document")
	}
}

// scanned is the document ScanEncodedAt gives for rel, its stored
// encoding decoded (with its name, as GetAt gives it) when it gave that.
func scanned(s *Store, rel string, t time.Time) *pb.Document {
	doc, raw := s.ScanEncodedAt(rel, t)
	if raw == nil {
		return doc
	}
	d := &pb.Document{}
	if err := proto.Unmarshal(raw, d); err != nil {
		return nil
	}
	if d.Name == "" {
		d.Name = s.cache.prefix + rel
	}
	return d
}
