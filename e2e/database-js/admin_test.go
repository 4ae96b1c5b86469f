package databasejs

import (
	"context"
	"strings"
	"sync"
	"testing"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/db"
)

// adminClient is firebase-admin-go's db client pointed at addr as the SDK
// requires: FIREBASE_DATABASE_EMULATOR_HOST=localhost:PORT?ns=NAME (an IP
// host fails its URL check).
// override nil is admin; a pointer to a nil map is the unauthenticated
// guest (auth_variable_override=null).
func adminClient(t *testing.T, addr, ns string, override *map[string]any) *db.Client {
	t.Helper()
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	t.Setenv("FIREBASE_DATABASE_EMULATOR_HOST", "localhost:"+port+"?ns="+ns)
	cfg := &firebase.Config{ProjectID: "demo-rtdb", DatabaseURL: "https://" + ns + ".firebaseio.com"}
	cfg.AuthOverride = override
	app, err := firebase.NewApp(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := app.Database(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type score struct {
	Score int `json:"score"`
}

func TestAdminSDK(t *testing.T) {
	addr, _ := serve(t, "demo-rtdb", rules)
	ns := "demo-rtdb-default-rtdb"
	c := adminClient(t, addr, ns, nil)
	ctx := context.Background()

	if err := c.NewRef("public/scores").Set(ctx, map[string]score{"a": {30}, "b": {10}, "c": {20}}); err != nil {
		t.Fatalf("Set: %v", err)
	}
	var got map[string]score
	if err := c.NewRef("public/scores").Get(ctx, &got); err != nil || len(got) != 3 || got["b"].Score != 10 {
		t.Fatalf("Get: %v %v", got, err)
	}
	if err := c.NewRef("public/scores").Update(ctx, map[string]any{"d": score{40}, "a/score": 31}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	ref, err := c.NewRef("public/pushed").Push(ctx, map[string]any{"v": 1})
	if err != nil || len(ref.Key) != 20 {
		t.Fatalf("Push: %v %v", ref, err)
	}
	var pushed map[string]int
	if err := ref.Get(ctx, &pushed); err != nil || pushed["v"] != 1 {
		t.Fatalf("pushed %v %v", pushed, err)
	}
	// Queries, ordered by the SDK from the REST result.
	nodes, err := c.NewRef("public/scores").OrderByChild("score").LimitToFirst(2).GetOrdered(ctx)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	if len(nodes) != 2 || nodes[0].Key() != "b" || nodes[1].Key() != "c" {
		t.Fatalf("query keys %v", keysOf(nodes))
	}
	nodes, err = c.NewRef("public/scores").OrderByChild("score").StartAt(20).EndAt(31).GetOrdered(ctx)
	if err != nil || len(nodes) != 2 || nodes[0].Key() != "c" || nodes[1].Key() != "a" {
		t.Fatalf("range query %v %v", keysOf(nodes), err)
	}
	nodes, err = c.NewRef("public/scores").OrderByKey().LimitToLast(1).GetOrdered(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].Key() != "d" {
		t.Fatalf("key query %v %v", keysOf(nodes), err)
	}
	if _, err := c.NewRef("public").OrderByChild("nope").GetOrdered(ctx); err == nil || !strings.Contains(err.Error(), "Index not defined") {
		t.Fatalf("unindexed query: %v", err)
	}
	var shallow map[string]bool
	if err := c.NewRef("public/scores").GetShallow(ctx, &shallow); err != nil || len(shallow) != 4 || !shallow["a"] {
		t.Fatalf("shallow %v %v", shallow, err)
	}
	// ETags: GetIfChanged, SetIfUnchanged.
	var n int
	etag, err := c.NewRef("public/scores/a/score").GetWithETag(ctx, &n)
	if err != nil || n != 31 || etag == "" {
		t.Fatalf("GetWithETag %v %q %v", n, etag, err)
	}
	changed, _, err := c.NewRef("public/scores/a/score").GetIfChanged(ctx, etag, &n)
	if err != nil || changed {
		t.Fatalf("GetIfChanged same: %v %v", changed, err)
	}
	if err := c.NewRef("public/scores/a/score").Set(ctx, 31); err != nil {
		t.Fatal(err)
	}
	if changed, _, err := c.NewRef("public/scores/a/score").GetIfChanged(ctx, "other", &n); err != nil || !changed || n != 31 {
		t.Fatalf("GetIfChanged other etag: %v %d %v", changed, n, err)
	}
	nodes, err = c.NewRef("public/scores").OrderByChild("score").EqualTo(20).GetOrdered(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].Key() != "c" {
		t.Fatalf("equalTo %v %v", keysOf(nodes), err)
	}
	ok, err := c.NewRef("public/scores/a/score").SetIfUnchanged(ctx, "stale", 1)
	if err != nil || ok {
		t.Fatalf("SetIfUnchanged stale: %v %v", ok, err)
	}
	ok, err = c.NewRef("public/scores/a/score").SetIfUnchanged(ctx, etag, 32)
	if err != nil || !ok {
		t.Fatalf("SetIfUnchanged: %v %v", ok, err)
	}
	// Transactions from two goroutines × 20 end at exactly 40.
	if err := c.NewRef("counter").Set(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if err := c.NewRef("counter").Transaction(ctx, func(tn db.TransactionNode) (any, error) {
					var v int
					if err := tn.Unmarshal(&v); err != nil {
						return nil, err
					}
					return v + 1, nil
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Transaction: %v", err)
	}
	if err := c.NewRef("counter").Get(ctx, &n); err != nil || n != 40 {
		t.Fatalf("counter %d %v", n, err)
	}
	if err := c.NewRef("public/pushed").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	var gone any
	if err := c.NewRef("public/pushed").Get(ctx, &gone); err != nil || gone != nil {
		t.Fatalf("after Delete %v %v", gone, err)
	}

	// AuthOverride: rules apply to the overridden identity.
	alice := adminClient(t, addr, ns, &map[string]any{"uid": "alice"})
	if err := alice.NewRef("users/alice").Set(ctx, map[string]string{"name": "A"}); err != nil {
		t.Fatalf("override own write: %v", err)
	}
	// The REST error body says production's words, then why: the Go
	// client's error carries both.
	err = alice.NewRef("users/bob").Set(ctx, map[string]string{"name": "B"})
	if err == nil || !strings.Contains(err.Error(), "Permission denied") || !strings.Contains(err.Error(), "auth.uid === $uid → 'alice' === 'bob' is false") {
		t.Fatalf("override other write: %v", err)
	}
	var none map[string]any
	guest := adminClient(t, addr, ns, &none)
	var v any
	if err := guest.NewRef("users/alice").Get(ctx, &v); err == nil || !strings.Contains(err.Error(), "Permission denied") || !strings.Contains(err.Error(), "auth != null → null != null is false") {
		t.Fatalf("guest read: %v", err)
	}
	if err := guest.NewRef("public/g").Set(ctx, 1); err != nil {
		t.Fatalf("guest public write: %v", err)
	}
}

func keysOf(nodes []db.QueryNode) []string {
	var k []string
	for _, n := range nodes {
		k = append(k, n.Key())
	}
	return k
}
