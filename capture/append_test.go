package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

// TestRecorderAppends: once the state is in the file, writes append
// lines (the file's first part never changes), and the file decodes to
// the state the backend has: documents set, overwritten and deleted, in
// the default database and another one, rules reloaded.
func TestRecorderAppends(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	fs := testfs.Of(b.Sandbox).Admin()
	for i := range 20 {
		if err := fs.SetDocument(ctx, fmt.Sprintf("pre/d%d", i), map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := fs.SetDocument(ctx, fmt.Sprintf("c/d%d", i%10), map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := fs.DeleteDocument(ctx, "pre/d3"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.DeleteDocument(ctx, "c/d4"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Rules(backend.Firestore).SetRulesFile("firestore.rules", "rules_version = '2';\nservice cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read: if true; } } }"); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, first) {
		t.Fatalf("the file was rewritten, not appended to:\nbefore: %.300s\nafter:  %.300s", first, data)
	}
	if n := bytes.Count(data[len(first):], []byte("\n")); n < 60 {
		t.Errorf("%d lines appended for 30 writes and 2 deletes", n)
	}
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FromSandbox(b.Sandbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := docsOf(t, fx), docsOf(t, want); got != want {
		t.Errorf("documents in the file:\n%s\nin the backend:\n%s", got, want)
	}
	if sd := fx.Services["firestore"]; sd == nil || sd.Rules == nil || !strings.Contains(sd.Rules.Source, "allow read") {
		t.Errorf("the reloaded rules are not in the file: %+v", sd)
	}
	commits := 0
	for _, e := range fx.Events {
		if e.Kind == "commit" {
			commits++
		}
	}
	if commits != 52 { // the 20 before Start are in the bus's history
		t.Errorf("%d commits in the file, want 52", commits)
	}
}

// docsOf is a fixture's Firestore documents, as canonical JSON.
func docsOf(t *testing.T, f *Fixture) string {
	t.Helper()
	docs, err := stateDocs(f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(docs)
	return string(b)
}

func stateDocs(f *Fixture) (map[string]any, error) {
	sd := f.Services["firestore"]
	if sd == nil || len(sd.State) == 0 {
		return map[string]any{}, nil
	}
	var st struct {
		Documents map[string]any `json:"documents"`
		Databases map[string]any `json:"databases"`
	}
	if err := unmarshalNumbers(sd.State, &st); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range st.Documents {
		out[k] = v
	}
	for db, m := range st.Databases {
		for k, v := range m.(map[string]any) {
			out[db+"|"+k] = v
		}
	}
	return out, nil
}

// TestDecodeAppended: lines after the fixture fold into it; a torn last
// line (a kill in the middle of a write) is left out; a damaged line
// before the last is an error naming it.
func TestDecodeAppended(t *testing.T) {
	base := `{"schema":"pyric.verify.fixture.v1","events":[],"services":{"firestore":{"state":{}},"auth":{"state":{"users":[]}}}}` + "\n"
	lines := []string{
		`{"event":{"seq":1,"kind":"commit","service":"firestore","path":"a/b","before":null,"after":{"n":1}}}`,
		`{"service":"firestore","key":["documents","a/b"],"value":{"n":1}}`,
		`{"service":"firestore","key":["documents","a/c"],"value":{"n":2}}`,
		`{"service":"firestore","key":["databases","projects/p/databases/x","a/b"],"value":{"n":3}}`,
		`{"service":"firestore","key":["documents","a/c"]}`,
		`{"service":"auth","state":{"users":[{"uid":"u"}]}}`,
		`{"service":"firestore","rules":{"format":"firestore.rules","source":"x"}}`,
		`{"description":"now"}`,
	}
	whole := base + strings.Join(lines, "\n") + "\n"
	for _, c := range []struct{ name, data string }{
		{"whole", whole},
		{"torn", whole + `{"event":{"seq":2,"kind":"com`},
	} {
		f, err := decode([]byte(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(f.Events) != 1 || f.Description != "now" || f.Services["firestore"].Rules.Source != "x" {
			t.Errorf("%s: %+v", c.name, f)
		}
		if got := string(f.Services["firestore"].State); got != `{"databases":{"projects/p/databases/x":{"a/b":{"n":3}}},"documents":{"a/b":{"n":1}}}` {
			t.Errorf("%s: firestore state %s", c.name, got)
		}
		if got := string(f.Services["auth"].State); got != `{"users":[{"uid":"u"}]}` {
			t.Errorf("%s: auth state %s", c.name, got)
		}
	}
	// With flush-end lines, the part of a flush after the last one — torn
	// or ending between lines — is left out whole: its event goes with
	// its records.
	flushed := whole + flushEnd
	partial := `{"event":{"seq":2,"kind":"commit","service":"firestore","path":"a/d","before":null,"after":{"n":4}}}` + "\n"
	for _, c := range []struct{ name, data string }{
		{"flushed", flushed},
		{"a flush cut between lines", flushed + partial},
		{"a flush cut inside a record", flushed + partial + `{"service":"firestore","key":["documents","a/d"],"val`},
	} {
		f, err := decode([]byte(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(f.Events) != 1 {
			t.Errorf("%s: %d events, want the first flush's 1", c.name, len(f.Events))
		}
		if got := string(f.Services["firestore"].State); got != `{"databases":{"projects/p/databases/x":{"a/b":{"n":3}}},"documents":{"a/b":{"n":1}}}` {
			t.Errorf("%s: firestore state %s", c.name, got)
		}
	}
	if f, err := decode([]byte(flushed + partial + `{"service":"firestore","key":["documents","a/d"],"value":{"n":4}}` + "\n" + flushEnd)); err != nil || len(f.Events) != 2 {
		t.Errorf("two whole flushes: %v, %+v", err, f)
	}
	bad := base + lines[0] + "\n{\"event\":\n" + lines[1] + "\n"
	if _, err := decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "fixture line 3") {
		t.Errorf("a damaged line inside: %v", err)
	}
	if _, err := decode([]byte(base + `{"nothing":1}` + "\n")); err == nil || !strings.Contains(err.Error(), "fixture line 2 is none of") {
		t.Errorf("an unknown line: %v", err)
	}
	if _, err := decode([]byte(base + `{"event":{"seq":1,"kind":"nope"}}` + "\n")); err == nil || !strings.Contains(err.Error(), `fixture.events[0].kind "nope"`) {
		t.Errorf("an appended event is validated: %v", err)
	}
}

// TestRecorderAcrossReset: a reset clears the bus's history while its
// events are still on their way to the recorder; none is lost, and the
// state after it is the state after the reset.
func TestRecorderAcrossReset(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	fs := testfs.Of(b.Sandbox).Admin()
	path := filepath.Join(t.TempDir(), "s.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{Debounce: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.SetDocument(ctx, "c/a", map[string]any{"i": 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Sandbox.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SetDocument(ctx, "c/b", map[string]any{"i": 2}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, e := range fx.Events {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		kinds = append(kinds, string(e.Kind))
	}
	if !strings.Contains(strings.Join(kinds, ","), "request,commit,boundary") {
		t.Errorf("events %v", kinds)
	}
	if got := docsOf(t, fx); got != `{"c/b":{"i":2}}` {
		t.Errorf("state after the reset: %s", got)
	}
}

// TestRecorderAppendsDatabase: Realtime Database writes append their
// locations' records (no line re-encodes a tree), and the file decodes to
// the trees and rules the backend has, through the writes whose records
// a flush sees together in any order: below a leaf, replacing a node
// with a leaf, pruning emptied parents, a root primitive, rules.
func TestRecorderAppendsDatabase(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	db, ok := sandbox.Lookup[*database.Database](b.Sandbox)
	if !ok {
		t.Fatal("no database")
	}
	admin := identity.AdminIdentity()
	ns := database.DefaultNamespace(b.Project)
	set := func(ns, path string, v any) {
		t.Helper()
		if _, err := db.Set(admin, ns, path, v, database.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	set(ns, "pre", map[string]any{"big": strings.Repeat("x", 1000)})
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func(){
		func() { set(ns, "a", "x") },
		func() { set(ns, "a/b", 1.0) }, // below a leaf
		func() { set(ns, "c/d/e", 1.0) },
		func() { set(ns, "c/d/e", nil) }, // prunes c
		func() { set(ns, "f", map[string]any{"g": 1.0, "h": 2.0}) },
		func() { set(ns, "f", "leaf") }, // a node becomes a leaf
		func() { set(ns, "f/g", nil) },  // nothing below a leaf
		func() { set("other", "", 5.0) },
		func() {
			if err := db.SetRules("other", `{"rules": {".read": true}}`); err != nil {
				t.Fatal(err)
			}
		},
		func() { set(ns, "pre/n", 3.0) },
	}
	for i, step := range steps {
		step()
		if i%3 == 2 {
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, first) {
		t.Fatalf("the file was rewritten, not appended to")
	}
	if appended := data[len(first):]; bytes.Contains(appended, []byte(`"service":"database","state"`)) || bytes.Contains(appended, []byte(strings.Repeat("x", 1000))) {
		t.Errorf("a flush re-encoded a whole tree:\n%s", appended)
	}
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := database.New(service.Env{Project: b.Project}, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := replayed.Restore(fx.Services["database"].State); err != nil {
		t.Fatalf("restore the file's state: %v\n%s", err, fx.Services["database"].State)
	}
	got, _ := replayed.Snapshot()
	want, _ := db.Snapshot()
	if string(got) != string(want) {
		t.Errorf("the file's database state:\n%s\nthe backend's:\n%s", got, want)
	}
}

// TestRecorderAppendsStorage: Storage changes append the objects they
// touched (a flush lists no untouched object again), and the file
// decodes to the objects' metadata the backend has: uploads, an
// overwrite, a metadata update, a delete.
func TestRecorderAppendsStorage(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	st, ok := sandbox.Lookup[*storage.Engine](b.Sandbox)
	if !ok {
		t.Fatal("no storage")
	}
	admin := identity.AdminIdentity()
	const bkt = "demo-bucket"
	put := func(name, body, ctype string) {
		t.Helper()
		if _, err := st.Put(admin, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader(body), MediaType: ctype}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		put(fmt.Sprintf("untouched-%02d", i), "x", "text/plain")
	}
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	put("a.txt", "hello", "text/plain")
	put("b.bin", "bytes", "application/octet-stream")
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	put("a.txt", "hello again", "text/markdown")
	ctype := "image/png"
	if _, err := st.Update(admin, bkt, "b.bin", storage.Attrs{ContentType: &ctype}, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	put("gone", "x", "text/plain")
	if err := st.Delete(admin, bkt, "gone", storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, first) {
		t.Fatalf("the file was rewritten, not appended to")
	}
	if appended := data[len(first):]; bytes.Contains(appended, []byte(`"service":"storage","state"`)) || bytes.Contains(appended, []byte("untouched-")) {
		t.Errorf("a flush listed every object again:\n%s", appended)
	}
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := storage.New(service.Env{Project: b.Project}, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := replayed.Restore(fx.Services["storage"].State); err != nil {
		t.Fatalf("restore the file's state: %v\n%s", err, fx.Services["storage"].State)
	}
	summary := func(objs []*storage.Object) string {
		var s []string
		for _, o := range objs {
			s = append(s, fmt.Sprintf("%s/%s %s g%d m%d", o.Bucket, o.Name, o.ContentType, o.Generation, o.Metageneration))
		}
		return strings.Join(s, "\n")
	}
	if got, want := summary(replayed.Objects()), summary(st.Objects()); got != want {
		t.Errorf("the file's objects:\n%s\nthe backend's:\n%s", got, want)
	}
}

// TestRecorderAppendsAuth: once Auth's records are in the file, a sign-up,
// a sign-in, a profile update and a deletion append the accounts they
// changed, never every account again, and the file's state restores to
// the accounts the backend has.
func TestRecorderAppendsAuth(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	eng, ok := sandbox.Lookup[*auth.Engine](b.Sandbox)
	if !ok {
		t.Fatal("no auth")
	}
	client := auth.Call{Caller: identity.Anonymous(), Project: b.Project}
	admin := auth.Call{Caller: identity.AdminIdentity(), Project: b.Project}
	signUp := func(email string) *auth.SignUpResponse {
		t.Helper()
		r, err := eng.SignUp(client, auth.SignUpRequest{Email: &email, Password: "secret123"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i := range 20 {
		signUp(fmt.Sprintf("untouched-%02d@example.com", i))
	}
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := signUp("a@example.com")
	gone := signUp("gone@example.com")
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	email := "a@example.com"
	if _, err := eng.SignInWithPassword(client, auth.SignInWithPasswordRequest{Email: &email, Password: "secret123"}); err != nil {
		t.Fatal(err)
	}
	name := "A"
	if _, err := eng.Update(admin, auth.UpdateRequest{LocalID: a.LocalID, DisplayName: &name}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Delete(admin, auth.DeleteRequest{LocalID: gone.LocalID}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, first) {
		t.Fatalf("the file was rewritten, not appended to")
	}
	if appended := data[len(first):]; bytes.Contains(appended, []byte(`"service":"auth","state"`)) || bytes.Contains(appended, []byte("untouched-")) {
		t.Errorf("a flush listed every account again:\n%s", appended)
	}
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	replayed := auth.New(auth.Options{})
	if err := replayed.Restore(fx.Services["auth"].State); err != nil {
		t.Fatalf("restore the file's state: %v\n%s", err, fx.Services["auth"].State)
	}
	summary := func(us []*auth.User) string {
		var s []string
		for _, u := range us {
			s = append(s, fmt.Sprintf("%s %s %q %s", u.LocalID, u.Email, u.DisplayName, u.LastLoginAt))
		}
		return strings.Join(s, "\n")
	}
	got, want := summary(replayed.Users(b.Project, "")), summary(eng.Users(b.Project, ""))
	if got != want {
		t.Errorf("the file's accounts:\n%s\nthe backend's:\n%s", got, want)
	}
	if strings.Contains(got, gone.LocalID) || !strings.Contains(got, `"A"`) || strings.Count(got, "\n") != 20 {
		t.Errorf("the file's accounts miss a change:\n%s", got)
	}
}

// TestRecorderAppendsInChunks: a flush bigger than appendChunk is written
// in several writes and still reads back whole: every event and record of
// it, the flush-end line last.
func TestRecorderAppendsInChunks(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	fs := testfs.Of(b.Sandbox).Admin()
	path := filepath.Join(t.TempDir(), "last-session.json")
	// Only the test's own flushes write: a background one between the
	// writes (a slow machine spaces them past the default debounce) would
	// split the appended lines into two flushes.
	rec, err := Start(ctx, b.Sandbox, path, Options{Debounce: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 16<<10)
	const docs = 40 // 40 × 16 KiB, each in its event and its record: > 4 chunks
	for i := range docs {
		if err := fs.SetDocument(ctx, fmt.Sprintf("big/d%02d", i), map[string]any{"i": i, "s": big}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, first) {
		t.Fatalf("the file was rewritten, not appended to")
	}
	if appended := len(data) - len(first); appended < 2*docs*len(big) || appended < 4*appendChunk {
		t.Fatalf("%d bytes appended, want a flush of more than %d chunks", appended, 4)
	}
	if !bytes.HasSuffix(data, []byte(flushEnd)) || bytes.Count(data[len(first):], []byte(flushEndLine)) != 1 {
		t.Errorf("the flush does not end with one flush-end line")
	}
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FromSandbox(b.Sandbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := docsOf(t, fx), docsOf(t, want); got != want {
		t.Errorf("the file's documents differ from the backend's (%d and %d bytes)", len(got), len(want))
	}
	commits := 0
	for _, e := range fx.Events {
		if e.Kind == "commit" {
			commits++
		}
	}
	if commits != docs {
		t.Errorf("%d commits in the file, want %d", commits, docs)
	}
}

// TestRecorderAppendsWhatCommitsLeft: a document's appended record is
// what the last commit that changed it before the flush left (taken from
// its commit event), in every case a commit event's after must say: a
// batch's later write to a document its earlier one set, a transform, a
// deletion, text that JSON may escape, a named database, and databases of
// two projects sharing an id (whose events do not say which: the
// recorder reads those back).
func TestRecorderAppendsWhatCommitsLeft(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "last-session.json")
	// Flushed only when the test says, each flush taking several commits.
	rec, err := Start(ctx, b.Sandbox, path, Options{Debounce: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	eng, _ := sandbox.Lookup[*firestore.Engine](b.Sandbox)
	str := func(s string) *pb.Value { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}} }
	commit := func(db string, writes ...*pb.Write) {
		t.Helper()
		if _, err := eng.Commit(ctx, identity.AdminIdentity(), &pb.CommitRequest{Database: db, Writes: writes}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(db, doc string, fields map[string]*pb.Value) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: db + "/documents/" + doc, Fields: fields}}}
	}
	def := "projects/" + b.Project + "/databases/(default)"
	named := "projects/" + b.Project + "/databases/other"
	otherProject := "projects/another-project/databases/(default)"
	for i := range 3 {
		commit(def, set(def, "c/batch", map[string]*pb.Value{"a": str("first")}),
			&pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: def + "/documents/c/batch", Fields: map[string]*pb.Value{"b": str(fmt.Sprint("second ", i))}}},
				UpdateMask: &pb.DocumentMask{FieldPaths: []string{"b"}}})
		commit(def, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: def + "/documents/c/stamped", Fields: map[string]*pb.Value{"i": str(fmt.Sprint(i))}}},
			UpdateTransforms: []*pb.DocumentTransform_FieldTransform{{FieldPath: "at", TransformType: &pb.DocumentTransform_FieldTransform_SetToServerValue{SetToServerValue: pb.DocumentTransform_FieldTransform_REQUEST_TIME}}}})
		commit(def, set(def, "c/<a&b>", map[string]*pb.Value{"html": str(fmt.Sprint("<b>&amp;</b> ", i))}))
		commit(named, set(named, "c/n", map[string]*pb.Value{"i": str(fmt.Sprint(i))}))
		if i == 2 { // from here on, the events of (default) are ambiguous
			commit(otherProject, set(otherProject, "c/p", map[string]*pb.Value{"i": str(fmt.Sprint(i))}))
		}
		commit(def, set(def, "c/p", map[string]*pb.Value{"mine": str(fmt.Sprint(i))}))
		commit(def, set(def, "c/gone", map[string]*pb.Value{"i": str(fmt.Sprint(i))}))
		commit(def, &pb.Write{Operation: &pb.Write_Delete{Delete: def + "/documents/c/gone"}})
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fx, err := decode(data)
		if err != nil {
			t.Fatal(err)
		}
		want, err := FromSandbox(b.Sandbox, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := docsOf(t, fx), docsOf(t, want); got != want {
			t.Errorf("flush %d: documents in the file:\n%s\nin the backend:\n%s", i, got, want)
		}
	}
}

// TestRecorderReusesLineSlabs: the slabs the event lines are carved from
// are reused once a flush wrote their lines, and no line is overwritten
// before it is in the file: after thousands of writes over many slabs and
// flushes, the file holds every commit, each with the document it wrote.
func TestRecorderReusesLineSlabs(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{Debounce: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	fs := testfs.Of(b.Sandbox).Admin()
	pad := strings.Repeat("x", 300)
	const writes = 3000 // ~2 KB of lines each: ~90 slabs
	// Written while flushes run, so lines are made while a flush writes
	// the ones before them.
	done := make(chan error, 1)
	go func() {
		for i := range writes {
			if err := fs.SetDocument(ctx, fmt.Sprintf("c/d%d", i%50), map[string]any{"i": i, "pad": pad}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for writing := true; writing; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			writing = false
		default:
		}
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	spare := len(rec.lines.spare)
	rec.mu.Unlock()
	if spare == 0 {
		t.Error("no slab was kept for reuse")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for _, e := range fx.Events {
		if e.Kind != "commit" {
			continue
		}
		after, _ := e.Commit.After.(map[string]any)
		if want := fmt.Sprintf("c/d%d", next%50); e.Path != want || fmt.Sprint(after["i"]) != fmt.Sprint(next) {
			t.Fatalf("commit %d in the file: %s %v, want %s with i=%d", next, e.Path, after["i"], want, next)
		}
		next++
	}
	if next != writes {
		t.Errorf("%d commits in the file, want %d", next, writes)
	}
	want, err := FromSandbox(b.Sandbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := docsOf(t, fx), docsOf(t, want); got != want {
		t.Errorf("documents in the file:\n%.500s\nin the backend:\n%.500s", got, want)
	}
}

// TestRecorderReusesFlushState: a flush's pending lines and changed
// records, emptied, hold the next flush's changes: each flush appends
// the records its own writes changed, none of an earlier flush's.
func TestRecorderReusesFlushState(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{Debounce: time.Hour, FirstFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	fs := testfs.Of(b.Sandbox).Admin()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	for i := range 6 {
		before := size()
		for j := range 3 {
			if err := fs.SetDocument(ctx, fmt.Sprintf("f%d/d%d", i, j), map[string]any{"i": i}); err != nil {
				t.Fatal(err)
			}
		}
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var events, records int
		for _, l := range strings.Split(strings.TrimSpace(string(data[before:])), "\n") {
			var ll logLine
			if err := json.Unmarshal([]byte(l), &ll); err != nil {
				t.Fatalf("flush %d: %q: %v", i, l, err)
			}
			switch {
			case ll.Event != nil:
				events++
			case ll.Key != nil:
				records++
				if want := fmt.Sprintf("f%d/", i); len(ll.Key) != 2 || !strings.HasPrefix(ll.Key[1], want) {
					t.Errorf("flush %d appended the record %v, not one of its own writes", i, ll.Key)
				}
			}
		}
		if events != 6 || records != 3 {
			t.Errorf("flush %d appended %d events and %d records, want 6 and 3", i, events, records)
		}
	}
	rec.mu.Lock()
	reused := rec.sparePending != nil && rec.spareDirty != nil
	rec.mu.Unlock()
	if !reused {
		t.Error("no flush state kept for reuse")
	}
}

// TestRecorderKeepsWhatTheQueueLost: events the recorder's queue had no
// room for are written by the next flush, from the bus's history, though
// no later event brings the queue's gap marker.
func TestRecorderKeepsWhatTheQueueLost(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(context.Background(), b.Sandbox, path, Options{Debounce: time.Hour, FirstFlush: time.Hour, Buffer: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	const n = 30
	burst := make([]event.Event, n) // one batch: the queue takes 2 of them, under one hold of the bus's lock
	for i := range burst {
		burst[i] = event.Event{Kind: event.KindRequest, Service: "firestore", Method: "get", Path: fmt.Sprintf("c/d%d", i),
			Request: &event.Request{Verdict: event.Bypassed}}
	}
	b.Sandbox.Events().EmitBatch(burst)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range fx.Events {
		got = append(got, e.Path)
	}
	if len(got) != n || got[0] != "c/d0" || got[n-1] != fmt.Sprintf("c/d%d", n-1) {
		t.Fatalf("the file holds %d events %v, want the %d of the burst", len(got), got, n)
	}
	if rec.Lost() != 0 {
		t.Errorf("Lost = %d, want 0", rec.Lost())
	}
}
