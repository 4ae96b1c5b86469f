package firestore

import (
	"fmt"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
)

// declaredTestIndexes is the index file the declared-index tests load:
// COLLECTION and COLLECTION_GROUP composites in mixed directions, an
// array-contains one, a trailing __name__, and a field override.
const declaredTestIndexes = `{
  "indexes": [
    {"collectionGroup": "c", "queryScope": "COLLECTION", "fields": [
      {"fieldPath": "b", "order": "ASCENDING"}, {"fieldPath": "a", "order": "DESCENDING"}]},
    {"collectionGroup": "c", "queryScope": "COLLECTION_GROUP", "fields": [
      {"fieldPath": "b", "order": "ASCENDING"}, {"fieldPath": "a", "order": "ASCENDING"}, {"fieldPath": "__name__", "order": "ASCENDING"}]},
    {"collectionGroup": "c", "queryScope": "COLLECTION", "fields": [
      {"fieldPath": "tags", "arrayConfig": "CONTAINS"}, {"fieldPath": "a", "order": "ASCENDING"}]},
    {"collectionGroup": "c", "queryScope": "COLLECTION_GROUP", "fields": [
      {"fieldPath": "tags", "arrayConfig": "CONTAINS"}, {"fieldPath": "b", "order": "DESCENDING"}]},
    {"collectionGroup": "c", "queryScope": "COLLECTION", "fields": [
      {"fieldPath": "a", "order": "ASCENDING"}, {"fieldPath": "tags", "arrayConfig": "CONTAINS"}]}
  ],
  "fieldOverrides": [
    {"collectionGroup": "c", "fieldPath": "tags", "indexes": [
      {"arrayConfig": "CONTAINS", "queryScope": "COLLECTION_GROUP"}]}
  ]
}`

func declareT(t testing.TB, e *Engine, src string) {
	t.Helper()
	cfg, err := ParseIndexFile("firestore.indexes.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	e.DeclareIndexes(cfg)
	e.WaitIndexes()
}

// indexList renders the maintained indexes as "scope fields… declared
// docs/entries", one per line, for comparisons.
func indexList(e *Engine) string {
	e.WaitIndexes() // declared indexes are built beside traffic
	var b strings.Builder
	for _, ix := range e.MaintainedIndexes(testDB) {
		scope := "c:" + ix.Scope.Path
		if ix.Scope.Group {
			scope = "g:" + ix.Scope.Path
		}
		var fs []string
		for _, f := range ix.Fields {
			fs = append(fs, f.String())
		}
		kind := "on-demand"
		if ix.Declared {
			kind = "declared"
		}
		fmt.Fprintf(&b, "%s [%s] %s %d/%d\n", scope, strings.Join(fs, ", "), kind, ix.Docs, ix.Entries)
	}
	return b.String()
}

func wantIndexes(t *testing.T, e *Engine, want string) {
	t.Helper()
	if got := indexList(e); got != want {
		t.Fatalf("maintained indexes:\n%s\nwant:\n%s", got, want)
	}
}

// TestDeclaredIndexesBuiltAtDeclare: declaring an index file builds its
// indexes over the documents there are, before any query; a collection
// created later gets its COLLECTION-scope indexes with its first
// document; a reset or restore rebuilds them; a query they serve builds
// nothing.
func TestDeclaredIndexesBuiltAtDeclare(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "c/1", M("a", Int(1), "b", Int(2), "tags", Array(String("x"), String("y"), String("x"))))
	setT(t, e, "c/2", M("a", Int(2)))
	setT(t, e, "p/x/c/3", M("a", Int(3), "b", Int(2), "tags", Array(Int(1), Double(1))))
	setT(t, e, "other/4", M("a", Int(4), "b", Int(4)))
	declareT(t, e, declaredTestIndexes)
	const built = `c:c [a, tags CONTAINS] declared 1/2
c:c [b, a] declared 1/1
c:c [tags CONTAINS, a] declared 1/2
c:p/x/c [a, tags CONTAINS] declared 1/1
c:p/x/c [b, a] declared 1/1
c:p/x/c [tags CONTAINS, a] declared 1/1
g:c [b, a] declared 2/2
g:c [tags CONTAINS] declared 2/3
g:c [tags CONTAINS, b] declared 2/3
`
	wantIndexes(t, e, built)

	// Queries the declared indexes serve build nothing more.
	for _, sq := range []*pb.StructuredQuery{
		{From: from("c"), Where: where("b", pb.StructuredQuery_FieldFilter_EQUAL, Int(2)), OrderBy: []*pb.StructuredQuery_Order{orderBy("a", false)}},
		{From: from("c"), Where: where("b", pb.StructuredQuery_FieldFilter_EQUAL, Int(2)), OrderBy: []*pb.StructuredQuery_Order{orderBy("a", true)}, Limit: limit(1)},
		{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "c", AllDescendants: true}},
			Where: where("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, Int(1))},
		{From: from("c"), Where: and(where("a", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)), where("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, String("y")))},
	} {
		if _, err := queryIDs(e, admin, testDB.Documents(), sq); err != nil {
			t.Fatal(err)
		}
	}
	wantIndexes(t, e, built)

	// A new collection with the id has its indexes from its first document.
	setT(t, e, "p/y/c/5", M("a", Int(5), "b", Int(5)))
	if got := indexList(e); !strings.Contains(got, "c:p/y/c [b, a] declared 1/1\n") || !strings.Contains(got, "g:c [b, a] declared 3/3\n") {
		t.Fatalf("after a new collection:\n%s", got)
	}

	// Reset and Restore rebuild the declared indexes.
	e.Reset()
	wantIndexes(t, e, "g:c [b, a] declared 0/0\ng:c [tags CONTAINS] declared 0/0\ng:c [tags CONTAINS, b] declared 0/0\n")
	if err := e.Restore(testDB, []*pb.Document{{Name: name("c/9"), Fields: M("a", Int(9), "b", Int(9), "tags", Array(Int(9)))}}); err != nil {
		t.Fatal(err)
	}
	wantIndexes(t, e, `c:c [a, tags CONTAINS] declared 1/1
c:c [b, a] declared 1/1
c:c [tags CONTAINS, a] declared 1/1
g:c [b, a] declared 1/1
g:c [tags CONTAINS] declared 1/1
g:c [tags CONTAINS, b] declared 1/1
`)

	// Reopening a durable store (RestoreStored, documents kept encoded)
	// builds them over what it loads.
	e3 := newTestEngine(t)
	declareT(t, e3, declaredTestIndexes)
	if err := restoreStored(e3, storedOf(t, e)); err != nil {
		t.Fatal(err)
	}
	if got, want := indexList(e3), indexList(e); got != want {
		t.Fatalf("after RestoreStored:\n%s\nwant:\n%s", got, want)
	}

	// A database created after the declaration has them from the start;
	// declaring nothing forgets them.
	e2 := newTestEngine(t)
	declareT(t, e2, declaredTestIndexes)
	setT(t, e2, "c/1", M("a", Int(1), "b", Int(1)))
	if got := indexList(e2); !strings.Contains(got, "c:c [b, a] declared 1/1\n") {
		t.Fatalf("new database:\n%s", got)
	}
	e2.DeclareIndexes(nil)
	e2.WaitIndexes()
	wantIndexes(t, e2, "")
}

// TestDeclaredIndexesMaintained changes, removes and restores indexed
// fields (array elements among them) through commits and checks both the
// index's contents and what the queries it serves return, in memory and
// through a Persister (group commit makes commits visible).
func TestDeclaredIndexesMaintained(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) { t.Parallel(); declaredMaintained(t, newTestEngine(t)) })
	t.Run("durable", func(t *testing.T) {
		t.Parallel()
		declaredMaintained(t, New(Options{Rules: AllowAll, Persister: &memPersister{data: map[string][]byte{}}}))
	})
}

func declaredMaintained(t *testing.T, e *Engine) {
	declareT(t, e, `{"indexes":[
	  {"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"g","order":"ASCENDING"},{"fieldPath":"n","order":"DESCENDING"}]},
	  {"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"tags","arrayConfig":"CONTAINS"},{"fieldPath":"n","order":"ASCENDING"}]}]}`)
	byG := &pb.StructuredQuery{From: from("c"), Where: where("g", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)),
		OrderBy: []*pb.StructuredQuery_Order{orderBy("n", true)}}
	byTag := func(tag string) *pb.StructuredQuery {
		return &pb.StructuredQuery{From: from("c"), Where: where("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, String(tag)),
			OrderBy: []*pb.StructuredQuery_Order{orderBy("n", false)}}
	}
	check := func(step, indexes, g1, tagX, tagY string) {
		t.Helper()
		if got := indexList(e); got != indexes {
			t.Fatalf("%s: maintained indexes:\n%s\nwant:\n%s", step, got, indexes)
		}
		for _, c := range []struct {
			sq   *pb.StructuredQuery
			want string
		}{{byG, g1}, {byTag("x"), tagX}, {byTag("y"), tagY}} {
			q, err := compileQuery(testDB, "", c.sq)
			if err != nil {
				t.Fatal(err)
			}
			db := e.db(testDB)
			db.st.RLock()
			p, ok := db.planIndex(q)
			db.st.RUnlock()
			if !ok || !p.ix.Declared() {
				t.Fatalf("%s: query %v does not walk a declared index", step, c.sq)
			}
			if got := strings.Join(ids(t, e, c.sq), " "); got != c.want {
				t.Errorf("%s: query %v = %q, want %q", step, c.sq.Where, got, c.want)
			}
		}
	}
	commitT(t, e, admin, upd("c/a", M("g", Int(1), "n", Int(1), "tags", Array(String("x")))),
		upd("c/b", M("g", Int(1), "n", Int(2), "tags", Array(String("x"), String("y"), String("x")))),
		upd("c/c", M("g", Int(2), "n", Int(3))))
	check("create",
		"c:c [g, n] declared 3/3\nc:c [tags CONTAINS, n] declared 2/3\n", "b a", "a b", "b")
	commitT(t, e, admin, upd("c/a", M("g", Int(1), "n", Int(5), "tags", Array(String("y")))), // n and tags change
		upd("c/c", M("g", Int(1), "n", Int(0), "tags", Array())), // g changes; empty array: not in the tags index
		upd("c/b", M("g", Int(1), "tags", Array(String("x")))))   // n removed: in neither index
	check("update",
		"c:c [g, n] declared 2/2\nc:c [tags CONTAINS, n] declared 1/1\n", "a c", "", "a")
	commitT(t, e, admin, del("c/a"), upd("c/b", M("g", Int(1), "n", Int(4), "tags", Array(String("y"), String("x")))))
	check("delete",
		"c:c [g, n] declared 2/2\nc:c [tags CONTAINS, n] declared 1/2\n", "b c", "b", "b")
}

// TestParseIndexFileErrors: each mistake an index file can make is an
// INVALID_ARGUMENT naming the file, where in it, and what is wrong.
func TestParseIndexFileErrors(t *testing.T) {
	t.Parallel()
	field := func(f string) string {
		return `{"indexes":[{"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"a","order":"ASCENDING"},` + f + `]}]}`
	}
	for _, c := range []struct{ name, src, want string }{
		{"unknown order", field(`{"fieldPath":"b","order":"ASC"}`),
			`idx.json: indexes[0].fields[1] (b): unknown order "ASC" (want ASCENDING or DESCENDING)`},
		{"empty fields", `{"indexes":[{"collectionGroup":"users","queryScope":"COLLECTION","fields":[]}]}`,
			`idx.json: indexes[0] (collectionGroup "users"): "fields" is empty; an index needs at least one field`},
		{"no collection group", `{"indexes":[{"fields":[{"fieldPath":"a","order":"ASCENDING"}]}]}`,
			`idx.json: indexes[0]: missing "collectionGroup"`},
		{"no order", field(`{"fieldPath":"b"}`),
			`idx.json: indexes[0].fields[1] (b): needs an order (ASCENDING or DESCENDING) or an arrayConfig (CONTAINS)`},
		{"order and arrayConfig", field(`{"fieldPath":"b","order":"ASCENDING","arrayConfig":"CONTAINS"}`),
			`idx.json: indexes[0].fields[1] (b): has both order "ASCENDING" and arrayConfig "CONTAINS"; give one`},
		{"unknown arrayConfig", field(`{"fieldPath":"b","arrayConfig":"ANY"}`),
			`idx.json: indexes[0].fields[1] (b): unknown arrayConfig "ANY" (want CONTAINS)`},
		{"two arrayConfigs", field(`{"fieldPath":"b","arrayConfig":"CONTAINS"},{"fieldPath":"d","arrayConfig":"CONTAINS"}`),
			`idx.json: indexes[0].fields[2] (d): an index can have only one arrayConfig field`},
		{"bad field path", field(`{"fieldPath":"b..c","order":"ASCENDING"}`), `idx.json: indexes[0].fields[1]: fieldPath "b..c": `},
		{"name not last", `{"indexes":[{"collectionGroup":"c","fields":[{"fieldPath":"__name__","order":"ASCENDING"},{"fieldPath":"a","order":"ASCENDING"}]}]}`,
			`idx.json: indexes[0].fields[0]: __name__ can only be the last field of an index`},
		{"unknown scope", `{"indexes":[{"collectionGroup":"c","queryScope":"GROUP","fields":[{"fieldPath":"a","order":"ASCENDING"}]}]}`,
			`idx.json: indexes[0]: unknown queryScope "GROUP" (want COLLECTION or COLLECTION_GROUP)`},
		{"override order", `{"fieldOverrides":[{"collectionGroup":"c","fieldPath":"a","indexes":[{"order":"UP"}]}]}`,
			`idx.json: fieldOverrides[0].indexes[0]: unknown order "UP" (want ASCENDING or DESCENDING)`},
		{"override collection group", `{"fieldOverrides":[{"fieldPath":"a","indexes":[]}]}`,
			`idx.json: fieldOverrides[0]: missing "collectionGroup"`},
		{"syntax", "{\"indexes\": [\n  {\"collectionGroup\": \"c\",}\n]}", `idx.json:2:28: invalid character '}'`},
		{"wrong type", `{"indexes": {"collectionGroup": "c"}}`, `idx.json: json: cannot unmarshal object`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseIndexFile("idx.json", []byte(c.src))
			if Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want INVALID_ARGUMENT containing %q", err, c.want)
			}
		})
	}
	if _, err := ParseIndexFile("idx.json", []byte(declaredTestIndexes)); err != nil {
		t.Errorf("valid file: %v", err)
	}
}

// FuzzParseIndexFile: any input parses or fails with an error, and what
// parses can be declared and queried without a panic.
func FuzzParseIndexFile(f *testing.F) {
	f.Add([]byte(declaredTestIndexes))
	f.Add([]byte(`{"indexes":[{"collectionGroup":"c","fields":[{"fieldPath":"a","order":"DESCENDING"},{"fieldPath":"__name__","order":"DESCENDING"}]}]}`))
	f.Add([]byte(`{"fieldOverrides":[{"collectionGroup":"c","fieldPath":"a.b","indexes":[{"order":"ASCENDING","queryScope":"COLLECTION_GROUP"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseIndexFile("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		e := newTestEngine(t)
		setT(t, e, "c/1", M("a", Int(1), "tags", Array(Int(1))))
		e.SetIndexes(cfg)
		e.WaitIndexes()
		_, _ = queryIDs(e, admin, testDB.Documents(), &pb.StructuredQuery{From: from("c"),
			Where: where("a", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)), OrderBy: []*pb.StructuredQuery_Order{orderBy("b", false)}})
	})
}
