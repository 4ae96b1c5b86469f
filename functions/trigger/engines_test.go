package trigger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions/trigger"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

type captured struct {
	mu    sync.Mutex
	calls []string
}

// deliver records "fn ref before→after" of RTDB v2 payloads.
func (c *captured) deliver(_ context.Context, fn string, p []byte) error {
	var ce struct {
		Ref  string `json:"ref"`
		Data struct {
			Data  any `json:"data"`
			Delta any `json:"delta"`
		} `json:"data"`
	}
	if err := json.Unmarshal(p, &ce); err != nil {
		return err
	}
	b, _ := json.Marshal(ce.Data.Data)
	d, _ := json.Marshal(ce.Data.Delta)
	c.mu.Lock()
	c.calls = append(c.calls, fmt.Sprintf("%s %s %s→%s", fn, ce.Ref, b, d))
	c.mu.Unlock()
	return nil
}

// TestDatabaseWritesBelowAWatchedLocation: with the dispatcher's event
// scope installed, the real RTDB engine's events let a function watching
// /users/{uid} see a write to /users/u1/name with u1's whole value, and
// a multi-location update under one user once.
func TestDatabaseWritesBelowAWatchedLocation(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	c := &captured{}
	d := trigger.NewDispatcher(trigger.Options{Env: trigger.Env{Project: "demo-p", DatabaseInstance: database.DefaultNamespace("demo-p")},
		Deliver: c.deliver, Logf: t.Logf})
	defer d.Close()
	bus.Tap(d.Tap)
	d.SetFunctions([]trigger.Function{{ID: "users", Platform: trigger.GCFv2, EventType: "google.firebase.database.ref.v1.written",
		EventFilterPathPatterns: map[string]string{"ref": "users/{uid}", "instance": "*"}}})
	rt, err := database.New(service.Env{Project: "demo-p", Events: bus}, database.Options{Rules: `{"rules": {".read": true, ".write": true}}`})
	if err != nil {
		t.Fatal(err)
	}
	rt.SetEventScope(d.DatabaseScope)
	ns := database.DefaultNamespace("demo-p")
	admin := identity.AdminIdentity()
	if _, err := rt.Set(admin, ns, "users/u1", map[string]any{"name": "a", "age": 1}, database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Set(admin, ns, "users/u1/name", "b", database.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Update(admin, ns, "/", map[string]any{"users/u2/x": 1, "users/u2/y": 2, "users/u1/age": 2}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Set(admin, ns, "users/u1/name", "b", database.WriteOptions{}); err != nil { // no change
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Idle(ctx); err != nil {
		t.Fatal(err)
	}
	got := append([]string(nil), c.calls...)
	sort.Strings(got[2:]) // the update's two locations in either order
	want := []string{
		`users users/u1 null→{"age":1,"name":"a"}`,
		`users users/u1 {"age":1,"name":"a"}→{"age":1,"name":"b"}`,
		`users users/u1 {"age":1,"name":"b"}→{"age":2,"name":"b"}`,
		`users users/u2 null→{"x":1,"y":2}`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("deliveries:\n%v\nwant\n%v", got, want)
	}
	if s := d.Stats(); s.Errors != 0 {
		t.Errorf("stats %+v", s)
	}
}
