package discover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gfs "cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
	fsserver "github.com/pyric/pyric/server/firestore"
)

func seeded(t testing.TB, docs map[string]map[string]any) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.Open(testfs.With(sandbox.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	for p, d := range docs {
		if err := testfs.Of(sb).Admin().SetDocument(context.Background(), p, d); err != nil {
			t.Fatalf("seed %s: %v", p, err)
		}
	}
	return sb
}

func nestedData() map[string]map[string]any {
	return map[string]map[string]any{
		"users/alice":                 {"name": "Alice", "age": 30, "role": "admin", "profile": map[string]any{"bio": "hi", "score": 1.5}},
		"users/bob":                   {"name": "Bob", "age": 25, "role": "member", "nick": nil},
		"users/carol":                 {"name": "Carol", "age": 41, "role": "member", "nick": "cc"},
		"users/dave":                  {"name": "Dave", "age": 19, "role": "member"},
		"users/alice/posts/p1":        {"title": "One", "author": map[string]any{"__type": "reference", "path": "users/alice"}, "tags": []any{"a", "b"}},
		"users/bob/posts/p2":          {"title": "Two", "author": map[string]any{"__type": "reference", "path": "users/bob"}, "embedding": map[string]any{"__type__": "__vector__", "value": []any{1, 2, 3}}},
		"users/bob/posts/p2/likes/l1": {"at": map[string]any{"__type": "timestamp", "seconds": 1, "nanos": 0}},
		"ttt_lobbies/x/games/g1":      {"__name__x": 1, "a.b": true, "42": "n"},
	}
}

func TestTemplatePath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"users":                          "users",
		"users/u1/posts":                 "users/{userId}/posts",
		"ttt_lobbies/abc/games/g1/moves": "ttt_lobbies/{lobbyId}/games/{gameId}/moves",
		"addresses/a/classes/c/x":        "addresses/{addressId}/classes/{classId}/x",
		"categories/c/boss/b/data":       "categories/{categoryId}/boss/{bossId}/data",
		"a.users/u/s":                    "a.users/{userId}/s",
	} {
		if got := TemplatePath(in); got != want {
			t.Errorf("TemplatePath(%q) = %q, want %q", in, got, want)
		}
	}
	for name, want := range map[string]string{"__name__": "firestore_reserved_name", "a.b": "dotted_field_name", "42": "numeric_field_name", "__meta__": "double_underscore_wrap", "name": "", "__": ""} {
		if got := ReservedReason(name); got != want {
			t.Errorf("ReservedReason(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestCrawlNested(t *testing.T) {
	t.Parallel()
	sb := seeded(t, nestedData())
	res, err := Crawl(context.Background(), NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default()), Options{StopOnStable: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ttt_lobbies", "users", "ttt_lobbies/{lobbyId}/games", "users/{userId}/posts", "users/{userId}/posts/{postId}/likes"}
	var got []string
	for _, e := range res.Events {
		if e.Kind == "collection_discovered" {
			got = append(got, e.TemplatePath)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("discovered %v, want %v", got, want)
	}
	if !res.Complete || res.Continuation != "" {
		t.Fatalf("complete=%v continuation=%q", res.Complete, res.Continuation)
	}
	users := res.Schemas["users"]
	if users.Documents != 4 || users.Collections != 1 {
		t.Fatalf("users: %+v", users)
	}
	f := users.Fields
	if f["age"].Types[0].Type != "integer" || f["name"].Types[0].Type != "string" {
		t.Fatalf("users fields: %s", js(f))
	}
	if !f["nick"].Nullable || f["nick"].PresenceSeen != 2 || f["nick"].PresenceTotal != 4 {
		t.Fatalf("nick: %s", js(f["nick"]))
	}
	if e := f["role"].EnumCandidate; e == nil || len(e.Values) != 2 {
		t.Fatalf("role enum: %s", js(f["role"]))
	}
	if f["name"].EnumCandidate != nil {
		t.Fatalf("name is not an enum: %s", js(f["name"]))
	}
	prof := f["profile"].Types[0]
	if prof.Kind != "map" || prof.Fields["score"].Types[0].Type != "double" {
		t.Fatalf("profile: %s", js(f["profile"]))
	}
	posts := res.Schemas["users/{userId}/posts"]
	if posts.Collections != 2 || posts.ParentPath != "users" || posts.Depth != 2 {
		t.Fatalf("posts: %s", js(posts))
	}
	if a := posts.Fields["author"].Types[0]; a.Kind != "reference" || a.TargetCollection != "users" {
		t.Fatalf("author: %s", js(posts.Fields["author"]))
	}
	if v := posts.Fields["embedding"].Types[0]; v.Kind != "vector" || v.Dimension != 3 {
		t.Fatalf("embedding: %s", js(posts.Fields["embedding"]))
	}
	if tg := posts.Fields["tags"].Types[0]; tg.Kind != "array" || tg.ElementTypes[0].Type != "string" {
		t.Fatalf("tags: %s", js(posts.Fields["tags"]))
	}
	if l := res.Schemas["users/{userId}/posts/{postId}/likes"]; l.Fields["at"].Types[0].Type != "timestamp" || l.ParentPath != "users/{userId}/posts" {
		t.Fatalf("likes: %s", js(l))
	}
	// ttt_lobbies/x is a missing document with a subcollection.
	lob := res.Schemas["ttt_lobbies"]
	if lob.Documents != 1 || lob.SamplesSeen != 0 {
		t.Fatalf("lobbies: %s", js(lob))
	}
	g := res.Schemas["ttt_lobbies/{lobbyId}/games"].Fields
	for name, reason := range map[string]string{"a.b": "dotted_field_name", "42": "numeric_field_name"} {
		if g[name].ReservedReason != reason {
			t.Errorf("%s: reserved %q, want %q", name, g[name].ReservedReason, reason)
		}
	}
	if users.SamplingComplete != ConvergedExhausted && users.SamplingComplete != ConvergedStable {
		t.Fatalf("users sampling %s", users.SamplingComplete)
	}
	var text bytes.Buffer
	WriteText(&text, res)
	for _, s := range []string{"users  (4 docs", "  users/{userId}/posts  (2 docs", "nick: string | null  (in 2/4)", "author: reference → users", "embedding: vector(3)", "enum{"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text tree lacks %q:\n%s", s, text.String())
		}
	}
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestSamplingOutcomes(t *testing.T) {
	t.Parallel()
	docs := map[string]map[string]any{}
	for i := range 30 {
		docs[fmt.Sprintf("same/d%02d", i)] = map[string]any{"k": "v", "n": i}
		docs[fmt.Sprintf("many/d%02d", i)] = map[string]any{fmt.Sprintf("f%d", i): 1}
	}
	sb := seeded(t, docs)
	res, err := Crawl(context.Background(), NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default()), Options{MaxSamples: 20, StopOnStable: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Schemas["same"]; s.SamplingComplete != ConvergedStable || s.SamplesSeen != 6 {
		t.Fatalf("same: %s after %d", s.SamplingComplete, s.SamplesSeen)
	}
	if s := res.Schemas["many"]; s.SamplingComplete != ConvergedMax || s.SamplesSeen != 20 {
		t.Fatalf("many: %s after %d", s.SamplingComplete, s.SamplesSeen)
	}
	var declared *int
	for _, e := range res.Events {
		if e.Kind == "sampling_complete" && e.TemplatePath == "same" {
			declared = e.DeclaredAt
		}
	}
	if declared == nil || *declared != 6 {
		t.Fatalf("declaredAt %v", declared)
	}
	// doc 1 adds fields, doc 2 makes k an enum candidate, docs 3-6 change
	// nothing. Reading stopped there: 8 (two chunks of 4) for same,
	// 20 for many.
	if res.ReadOps != 28 {
		t.Fatalf("readOps %d", res.ReadOps)
	}
}

func TestMergeChanges(t *testing.T) {
	t.Parallel()
	s := NewSchema()
	str := func(v string) *pb.Value { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: v}} }
	i := func(v int64) *pb.Value { return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: v}} }
	null := &pb.Value{ValueType: &pb.Value_NullValue{}}
	kinds := func(ch []Change) string {
		var k []string
		for _, c := range ch {
			k = append(k, c.Kind+":"+strings.Join(c.Path, "."))
		}
		return strings.Join(k, ",")
	}
	steps := []struct {
		doc  map[string]*pb.Value
		want string
	}{
		{map[string]*pb.Value{"a": str("x"), "b": i(1)}, "field_added:a,field_added:b"},
		{map[string]*pb.Value{"a": str("x"), "b": i(1)}, "enum_added:a,enum_added:b"},
		{map[string]*pb.Value{"a": str("x"), "b": str("s")}, "enum_dropped:b,type_expanded:b"},
		{map[string]*pb.Value{"a": null}, "became_nullable:a,presence_changed:b"},
		{map[string]*pb.Value{"a": str("x"), "b": i(2)}, ""},
	}
	for n, st := range steps {
		if got := kinds(s.Merge(st.doc)); got != st.want {
			t.Fatalf("step %d: %s, want %s", n, got, st.want)
		}
	}
}

func TestContinuation(t *testing.T) {
	t.Parallel()
	docs := map[string]map[string]any{}
	for c := range 6 {
		for d := range 10 {
			docs[fmt.Sprintf("c%d/d%d", c, d)] = map[string]any{"text": strings.Repeat("x", 50), "n": d}
			docs[fmt.Sprintf("c%d/d%d/sub/s", c, d)] = map[string]any{"v": true}
		}
	}
	sb := seeded(t, docs)
	src := NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default())
	full, err := Crawl(context.Background(), src, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := NewSessionStore(SessionOptions{})
	res, err := Crawl(context.Background(), src, Options{MaxBatchBytes: 1024}, store)
	if err != nil {
		t.Fatal(err)
	}
	batches := 1
	for !res.Complete {
		if res.Continuation == "" || store.Len() != 1 {
			t.Fatalf("paused without a session: %+v", res)
		}
		open := 0
		for _, s := range res.Schemas {
			if s.SamplingComplete == SamplingOpen {
				open++
			}
		}
		if open == 0 {
			t.Fatal("a paused walk has no open template")
		}
		tok := res.Continuation
		res, err = Crawl(context.Background(), src, Options{Continuation: tok}, store)
		if err != nil {
			t.Fatal(err)
		}
		batches++
		if batches > 50 {
			t.Fatal("no progress")
		}
	}
	if batches < 3 {
		t.Fatalf("only %d batches", batches)
	}
	if store.Len() != 0 {
		t.Fatal("finished session kept")
	}
	if res.ListOps != full.ListOps || res.ReadOps != full.ReadOps {
		t.Fatalf("resumed counters %d/%d, single-call %d/%d", res.ListOps, res.ReadOps, full.ListOps, full.ReadOps)
	}
	if js(res.Schemas) != js(full.Schemas) {
		t.Fatalf("resumed schemas differ:\n%s\n%s", js(res.Schemas), js(full.Schemas))
	}
}

func TestSessionErrors(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	store := NewSessionStore(SessionOptions{MaxSessions: 2, MaxSessionBytes: 10, Now: func() time.Time { return now }})
	code := func(err error) string {
		var se *SessionError
		if !errors.As(err, &se) || se.RecoveryHint == "" {
			t.Fatalf("not a session error with a hint: %v", err)
		}
		return se.Code
	}
	if _, err := store.Create(make([]byte, 11)); code(err) != SessionPayloadTooLarge {
		t.Fatal(err)
	}
	a, _ := store.Create([]byte("a"))
	now = now.Add(time.Second)
	b, _ := store.Create([]byte("b"))
	now = now.Add(time.Second)
	if _, err := store.Get(a); err != nil { // a is now the most recent
		t.Fatal(err)
	}
	c, _ := store.Create([]byte("c")) // evicts b
	if _, err := store.Get(b); code(err) != SessionEvicted {
		t.Fatal(err)
	}
	if _, err := store.Get("nope"); code(err) != SessionMalformedToken {
		t.Fatal(err)
	}
	if err := store.Update(c, make([]byte, 11)); code(err) != SessionPayloadTooLarge {
		t.Fatal(err)
	}
	now = now.Add(DefaultSessionTTL + time.Second)
	if _, err := store.Get(c); code(err) != SessionExpired {
		t.Fatal(err)
	}
	// Through Crawl: an error event and the typed error.
	sb := seeded(t, map[string]map[string]any{"x/y": {"a": 1}})
	res, err := Crawl(context.Background(), NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default()), Options{Continuation: a}, store)
	if code(err) != SessionExpired || len(res.Events) != 1 || res.Events[0].Kind != "error" || res.Events[0].Code != SessionExpired {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestDryRunAndOptions(t *testing.T) {
	t.Parallel()
	sb := seeded(t, nestedData())
	src := NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default())
	res, err := Crawl(context.Background(), src, Options{DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ListOps != 1 || res.ReadOps != 0 || res.DryRunCostEstimate.RootCollections != 2 || res.DryRunCostEstimate.EstimatedCollections != 6 {
		t.Fatalf("%s", js(res))
	}
	for _, o := range []Options{{MaxDepth: -1}, {MaxBatchBytes: 100}, {DryRun: true, Continuation: "disc_x"}, {MaxConcurrency: 1000}} {
		if _, err := Crawl(context.Background(), src, o, NewSessionStore(SessionOptions{})); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	res, err = Crawl(context.Background(), src, Options{RootPrefix: "us", MaxDepth: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Schemas) != 1 || res.Schemas["users"] == nil {
		t.Fatalf("rootPrefix+maxDepth: %v", keys(res.Schemas))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestFindCollectionGroup(t *testing.T) {
	t.Parallel()
	sb := seeded(t, nestedData())
	src := NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default())
	res, err := FindCollectionGroup(context.Background(), src, "posts", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hosts) != 1 || res.Hosts[0].TemplatePath != "users/{userId}/posts" || res.Hosts[0].SampleDocCount != 2 || res.Reads != 2 || res.LimitWasReached {
		t.Fatalf("%s", js(res))
	}
	res, err = FindCollectionGroup(context.Background(), src, "posts", 1)
	if err != nil || !res.LimitWasReached {
		t.Fatalf("%v %s", err, js(res))
	}
	if _, err := FindCollectionGroup(context.Background(), src, "a/b", 1); !errors.Is(err, ErrInvalidOptions) {
		t.Fatal(err)
	}
}

// TestClientSource drives the live-endpoint source: the official Go
// client against pyric's own Firestore gRPC port.
func TestClientSource(t *testing.T) {
	t.Parallel()
	sb := seeded(t, nestedData())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port, _ := fsserver.NewPort(l, fsserver.New(fsserver.Options{Engine: testfs.Of(sb).Engine, DefaultProject: sandbox.DefaultProject}))
	go port.Serve()
	t.Cleanup(func() { port.Close() })
	ctx := context.Background()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(ownerToken{}))
	if err != nil {
		t.Fatal(err)
	}
	client, err := gfs.NewClient(ctx, sandbox.DefaultProject, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	live, err := Crawl(ctx, ClientSource{Client: client}, Options{StopOnStable: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	local, err := Crawl(ctx, NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default()), Options{StopOnStable: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if js(live.Schemas) != js(local.Schemas) {
		t.Fatalf("live and in-process schemas differ:\n%s\n%s", js(live.Schemas), js(local.Schemas))
	}
	g, err := FindCollectionGroup(ctx, ClientSource{Client: client}, "likes", 10)
	if err != nil || len(g.Hosts) != 1 || g.Hosts[0].TemplatePath != "users/{userId}/posts/{postId}/likes" {
		t.Fatalf("%v %s", err, js(g))
	}
}

// ownerToken is the emulator's admin credential.
type ownerToken struct{}

func (ownerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer owner"}, nil
}
func (ownerToken) RequireTransportSecurity() bool { return false }

func BenchmarkCrawl10kDocs100Collections(b *testing.B) {
	docs := map[string]map[string]any{}
	for c := range 100 {
		for d := range 100 {
			docs[fmt.Sprintf("coll%03d/doc%03d", c, d)] = map[string]any{"name": fmt.Sprintf("n%d", d), "n": d, "kind": []string{"a", "b", "c"}[d%3], "nested": map[string]any{"x": 1.5}}
		}
	}
	sb := seeded(b, docs)
	b.ResetTimer()
	for range b.N {
		// A fresh source per walk: its snapshot index is part of the cost.
		src := NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default())
		res, err := Crawl(context.Background(), src, Options{}, nil)
		if err != nil || len(res.Schemas) != 100 {
			b.Fatal(err, len(res.Schemas))
		}
	}
}

// countingSource records the most requests in flight at once.
type countingSource struct {
	Source
	mu       sync.Mutex
	now, max int
}

func (c *countingSource) enter() func() {
	c.mu.Lock()
	c.now++
	if c.now > c.max {
		c.max = c.now
	}
	c.mu.Unlock()
	time.Sleep(200 * time.Microsecond) // hold the slot so overlaps can happen
	return func() { c.mu.Lock(); c.now--; c.mu.Unlock() }
}

func (c *countingSource) ListCollectionIDs(ctx context.Context, p string) ([]string, error) {
	defer c.enter()()
	return c.Source.ListCollectionIDs(ctx, p)
}

func (c *countingSource) GetDocument(ctx context.Context, p string) (map[string]*pb.Value, bool, error) {
	defer c.enter()()
	return c.Source.GetDocument(ctx, p)
}

func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	docs := map[string]map[string]any{}
	for i := range 40 {
		docs[fmt.Sprintf("c/d%02d", i)] = map[string]any{"n": i}
	}
	sb := seeded(t, docs)
	for _, limit := range []int{1, 3} {
		src := &countingSource{Source: NewEngineSource(testfs.Of(sb).Engine, testfs.Of(sb).Default())}
		if _, err := Crawl(context.Background(), src, Options{MaxConcurrency: limit, StopOnStable: 40}, nil); err != nil {
			t.Fatal(err)
		}
		if src.max > limit {
			t.Fatalf("limit %d: %d in flight", limit, src.max)
		}
	}
}
