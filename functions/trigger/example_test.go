package trigger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/functions/trigger"
)

// The functions engine gives the dispatcher the discovered functions and
// a way to invoke one; the dispatcher taps the event bus and invokes each
// function a committed change fires with the payload production sends.
func ExampleDispatcher() {
	bus := event.NewBus(event.Options{})
	deliver := func(ctx context.Context, fnID string, payload []byte) error {
		var ce struct {
			Type     string `json:"type"`
			Document string `json:"document"`
		}
		_ = json.Unmarshal(payload, &ce)
		fmt.Println(fnID, ce.Type, ce.Document)
		return nil
	}
	d := trigger.NewDispatcher(trigger.Options{Env: trigger.Env{Project: "demo"}, Deliver: deliver})
	defer d.Close()
	bus.Tap(d.Tap)

	// One export's __endpoint, as firebase-functions writes it for
	// onDocumentCreated("users/{uid}", …).
	ep, err := functions.ParseEndpoint("default", "onUserCreated", []byte(`{"platform":"gcfv2","eventTrigger":{
		"eventType":"google.cloud.firestore.document.v1.created",
		"eventFilters":{"database":"(default)","namespace":"(default)"},
		"eventFilterPathPatterns":{"document":"users/{uid}"},"retry":false}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	d.SetFunctions([]trigger.Function{ep.TriggerFunction()})

	// What the Firestore engine emits once a create is durable.
	bus.Emit(event.Event{Kind: event.KindCommit, Service: "firestore", Path: "users/alice",
		Commit: &event.Commit{Database: "(default)", After: map[string]any{"name": "Alice"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.Idle(ctx)
	// Output:
	// onUserCreated google.cloud.firestore.document.v1.created users/alice
}
