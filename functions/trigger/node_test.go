package trigger_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/functions/trigger"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox/service"
)

const project = "demo-p"

func harness(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e2etest.FunctionsSDKCommand(ctx, t, project, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sdk-harness.cjs %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// engineEvents drives the real Firestore, Realtime Database and Auth
// engines and returns the events they emitted, as the dispatcher's tap
// receives them.
func engineEvents(t *testing.T, scope func(ns string, keys []string) int) []event.Event {
	bus := event.NewBus(event.Options{})
	var mu sync.Mutex
	var evs []event.Event
	bus.Tap(func(e event.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() })
	ctx := context.Background()
	admin := identity.AdminIdentity()
	alice := identity.NewUser("alice", map[string]any{"email": "alice@example.com"})

	fs := firestore.New(firestore.Options{Events: bus})
	db := firestore.DatabaseName{Project: project, Database: firestore.DefaultDatabase}
	commit := func(w *pb.Write) {
		t.Helper()
		if _, err := fs.Commit(ctx, admin, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{w}}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(path string, fields map[string]*pb.Value) {
		commit(&pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(path), Fields: fields}}})
	}
	set("users/alice", map[string]*pb.Value{"name": firestore.String("Alice"), "age": firestore.Int(30),
		"tags": firestore.Array(firestore.String("a"), firestore.String("b")), "score": firestore.Double(1.5)})
	set("users/alice", map[string]*pb.Value{"name": firestore.String("Alice"), "age": firestore.Int(31)})
	commit(&pb.Write{Operation: &pb.Write_Delete{Delete: db.DocName("users/alice")}})
	set("logs/2026/12/e1", map[string]*pb.Value{"level": firestore.String("info")})

	rt, err := database.New(service.Env{Project: project, Events: bus}, database.Options{Rules: `{"rules": {".read": true, ".write": true}}`})
	if err != nil {
		t.Fatal(err)
	}
	rt.SetEventScope(scope)
	ns := database.DefaultNamespace(project)
	for _, w := range []struct {
		who  identity.Identity
		path string
		v    any
	}{
		{alice, "cases/c1", map[string]any{"title": "t", "items": map[string]any{"alpha": 1, "beta": map[string]any{"x": 1}}}},
		{admin, "status/srv", "up"},
		{admin, "status/srv", "down"},
		{alice, "users/u1", map[string]any{"n": "a"}},
		{alice, "users/u1", map[string]any{"n": "b"}},
		{alice, "users/u1/n", "c"}, // below the watched /users/{uid}
	} {
		if _, err := rt.Set(w.who, ns, w.path, w.v, database.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	au := auth.New(auth.Options{Events: bus})
	call := auth.Call{Caller: admin, Project: project}
	email := "bob@example.com"
	u, err := au.SignUp(call, auth.SignUpRequest{Email: &email, Password: "secret1", DisplayName: "Bob", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := au.Delete(call, auth.DeleteRequest{LocalID: u.LocalID}); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	return append([]event.Event(nil), evs...)
}

// syntheticEvents are the changes no engine here makes in the test: a
// user's Firestore update (withAuthContext as app_user), Storage writes.
func syntheticEvents() []event.Event {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	obj := func(gen int64) map[string]any {
		return map[string]any{"bucket": project + ".appspot.com", "name": "img/a.png", "size": int64(3), "contentType": "image/png",
			"generation": gen, "metageneration": int64(1), "md5Hash": "MD5", "crc32c": "CRC", "metadata": map[string]any{"k": "v"},
			"downloadTokens": "tok", "timeCreated": "2026-12-06T10:00:00Z", "updated": "2026-12-06T10:00:01Z"}
	}
	return []event.Event{
		{Kind: event.KindCommit, Service: "firestore", Path: "rooms/r1/msgs/m1", At: at,
			Identity: event.Identity{Lens: event.LensUser, UID: "carol"},
			Commit: &event.Commit{RequestTime: at, Database: "(default)", Before: map[string]any{"text": "hi"}, After: map[string]any{"text": "hello"},
				BeforeCreateTime: at.Add(-time.Hour), BeforeUpdateTime: at.Add(-time.Hour), CreateTime: at.Add(-time.Hour), UpdateTime: at}},
		{Kind: event.KindMutation, Service: "storage", Path: "img/a.png", At: at,
			Mutation: &event.Mutation{Op: "object_put", Project: project, Previous: obj(6), Current: obj(7)}},
	}
}

// TestPayloadsDecodeInFirebaseFunctions: the real firebase-functions
// 7.4.0 declares the functions (their __endpoint is what is matched
// against), real engines make the changes, and the real handlers decode
// the payloads: params, snapshots, before/after, auth context.
func TestPayloadsDecodeInFirebaseFunctions(t *testing.T) {
	e2etest.NeedFunctions(t)
	var endpoints map[string]json.RawMessage
	if err := json.Unmarshal(harness(t, "manifest"), &endpoints); err != nil {
		t.Fatal(err)
	}
	var fns []trigger.Function
	for name, ep := range endpoints {
		e, err := functions.ParseEndpoint("default", name, ep)
		if err != nil {
			t.Fatal(err)
		}
		if e.Event != nil {
			fns = append(fns, e.TriggerFunction())
		}
	}
	if len(fns) < 12 {
		t.Fatalf("only %d event functions in the manifest", len(fns))
	}
	env := trigger.Env{Project: project, DatabaseInstance: database.DefaultNamespace(project), StorageURL: "http://127.0.0.1:9199"}
	type item struct {
		Fn      string          `json:"fn"`
		Payload json.RawMessage `json:"payload"`
	}
	var items []item
	d := trigger.NewDispatcher(trigger.Options{Env: env, Deliver: func(context.Context, string, []byte) error { return nil }})
	defer d.Close()
	d.SetFunctions(fns)
	for _, ev := range append(engineEvents(t, d.DatabaseScope), syntheticEvents()...) {
		for _, f := range fns {
			ds, err := trigger.Deliveries(f, ev, env)
			if err != nil {
				t.Fatalf("%s on %s %s: %v", f.ID, ev.Service, ev.Path, err)
			}
			for _, d := range ds {
				items = append(items, item{Fn: f.ID, Payload: d.Payload})
			}
		}
	}
	file := filepath.Join(t.TempDir(), "deliveries.json")
	b, _ := json.Marshal(items)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var results []struct {
		Fn    string         `json:"fn"`
		Seen  map[string]any `json:"seen"`
		Error string         `json:"error"`
	}
	if err := json.Unmarshal(harness(t, "invoke", file), &results); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]map[string]any{}
	for _, r := range results {
		if r.Error != "" {
			t.Errorf("%s threw decoding its payload: %s", r.Fn, r.Error)
			continue
		}
		seen[r.Fn] = append(seen[r.Fn], r.Seen)
	}
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	check := func(fn string, n int, i int, want map[string]string) {
		t.Helper()
		if len(seen[fn]) != n {
			t.Errorf("%s invoked %d times, want %d: %s", fn, len(seen[fn]), n, j(seen[fn]))
			return
		}
		for path, w := range want {
			var v any = seen[fn][i]
			for _, k := range strings.Split(path, ".") {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			if got := j(v); got != w {
				t.Errorf("%s[%d].%s = %s, want %s", fn, i, path, got, w)
			}
		}
	}
	check("fsCreated", 1, 0, map[string]string{"params": `{"uid":"alice"}`, "doc.exists": "true", "doc.id": `"alice"`, "doc.path": `"users/alice"`,
		"doc.data": `{"age":30,"name":"Alice","score":1.5,"tags":["a","b"]}`, "document": `"users/alice"`,
		"source": `"//firestore.googleapis.com/projects/demo-p/databases/(default)"`, "database": `"(default)"`})
	if c := seen["fsCreated"]; len(c) == 1 {
		doc, _ := c[0]["doc"].(map[string]any)
		if doc["createTime"] == nil || doc["createTime"] != doc["updateTime"] {
			t.Errorf("created document times %v / %v", doc["createTime"], doc["updateTime"])
		}
	}
	check("fsDeleted", 1, 0, map[string]string{"params": `{"uid":"alice"}`, "doc.data": `{"age":31,"name":"Alice"}`})
	check("fsV1Write", 3, 1, map[string]string{"params": `{"uid":"alice"}`, "before.data.age": "30", "after.data.age": "31",
		"after.exists": "true", "eventType": `"google.firestore.document.write"`,
		"resource": `{"name":"projects/demo-p/databases/(default)/documents/users/alice","service":"firestore.googleapis.com"}`})
	check("fsV1Write", 3, 2, map[string]string{"before.data.age": "31", "after.exists": "false"})
	check("fsWrittenDeep", 1, 0, map[string]string{"params": `{"rest":"2026/12/e1"}`, "after.data": `{"level":"info"}`, "before.exists": "false"})
	check("fsUpdatedAuth", 1, 0, map[string]string{"params": `{"msg":"m1","room":"r1"}`, "before.data": `{"text":"hi"}`,
		"after.data": `{"text":"hello"}`, "authType": `"app_user"`, "authId": `"carol"`})
	check("dbCreated", 2, 0, map[string]string{"params": `{"caseId":"c1","itemId":"alpha"}`, "val": "1", "key": `"alpha"`,
		"ref": `"cases/c1/items/alpha"`, "authType": `"app_user"`, "authId": `"alice"`, "instance": `"demo-p-default-rtdb"`})
	check("dbCreated", 2, 1, map[string]string{"params": `{"caseId":"c1","itemId":"beta"}`, "val": `{"x":1}`, "numChildren": "1"})
	check("dbWritten", 2, 1, map[string]string{"params": `{"who":"srv"}`, "before": `"up"`, "after": `"down"`, "authType": `"unknown"`})
	check("dbV1Update", 2, 0, map[string]string{"before": `{"n":"a"}`, "after": `{"n":"b"}`, "params": `{"uid":"u1"}`,
		"authType": `"USER"`, "auth.uid": `"alice"`, "eventType": `"google.firebase.database.ref.update"`})
	check("dbV1Update", 2, 1, map[string]string{"before": `{"n":"b"}`, "after": `{"n":"c"}`, "params": `{"uid":"u1"}`})
	check("stFinalized", 1, 0, map[string]string{"name": `"img/a.png"`, "bucket": `"demo-p.appspot.com"`, "size": `"3"`, "generation": `"7"`,
		"metadata": `{"firebaseStorageDownloadTokens":"tok","k":"v"}`, "subject": `"objects/img/a.png"`})
	check("stV1Delete", 1, 0, map[string]string{"name": `"img/a.png"`, "generation": `"6"`, "eventType": `"google.storage.object.delete"`,
		"resource": `{"name":"projects/_/buckets/demo-p.appspot.com/objects/img/a.png","service":"storage.googleapis.com","type":"storage#object"}`})
	check("authV1Create", 1, 0, map[string]string{"email": `"bob@example.com"`, "emailVerified": "true", "claims": "{}",
		"eventType": `"google.firebase.auth.user.create"`})
	if c := seen["authV1Create"]; len(c) == 1 && (c[0]["uid"] == "" || c[0]["creationTime"] == nil) {
		t.Errorf("authV1Create user %v", c[0])
	}
	check("authV2Deleted", 1, 0, map[string]string{"email": `"bob@example.com"`})
	for fn := range seen {
		if _, ok := endpoints[fn]; !ok {
			t.Errorf("unknown function %s invoked", fn)
		}
	}
}
