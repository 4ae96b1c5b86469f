package functions

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/functions/trigger"
	"github.com/pyric/pyric/sandbox/service"
)

// tapper is an event stream that hands every event to a callback without
// loss (event.Bus): the trigger dispatcher needs every committed change.
type tapper interface {
	Tap(fn func(event.Event))
}

// startTriggers connects the loaded event functions to the sandbox's
// changes: a trigger.Dispatcher taps the event stream, matches each
// change against the functions and delivers through DeliverEvent. env is
// the workers' environment, whose FIREBASE_CONFIG and emulator hosts say
// where the services are, as the functions themselves see them.
func (e *Engine) startTriggers(env map[string]string) {
	tp, ok := e.events.(tapper)
	if !ok {
		return // an engine without a sandbox bus sees no changes
	}
	// The changes committed while the codebases first load are held
	// and matched once they loaded (Release in StartLoading).
	opts := trigger.Options{
		Env:     triggerEnv(e.project, env, e.newID),
		Deliver: e.DeliverEvent,
		Logf:    func(format string, args ...any) { e.printf(format+"\n", args...) },
		Held:    true,
	}
	if e.log != nil {
		opts.Journal = deliveryJournal{log: e.log, logf: opts.Logf}
	}
	d := trigger.NewDispatcher(opts)
	e.mu.Lock()
	e.dispatcher = d
	left := e.left
	e.left = nil
	e.mu.Unlock()
	// The changes an earlier run committed and never matched (it was
	// killed first) go before this run's.
	if len(left) > 0 {
		e.printf("functions: matching %d change(s) committed before pyric last stopped and not yet delivered\n", len(left))
		d.Resume(left)
	}
	tp.Tap(d.Tap)
	tp.Tap(e.noteWrite)
	// From here on the commits the dispatcher may deliver are held in
	// the outbox with the commit itself (after the Tap: a change held is
	// one the dispatcher takes).
	if e.outbox != nil && e.log != nil {
		e.outbox.Want(d.Wants)
	}
	e.syncTriggers()
}

// TriggerFunction is what the trigger dispatcher needs of an
// event-triggered endpoint (ep.Event must be set): its event type and
// filters, and the region of its event trigger, else its own.
func (ep Endpoint) TriggerFunction() trigger.Function {
	region := ep.Event.Region
	if region == "" && len(ep.Regions) > 0 {
		region = ep.Regions[0]
	}
	return trigger.Function{ID: ep.ID, Platform: trigger.Platform(ep.Platform), EventType: ep.Event.EventType,
		EventFilters: ep.Event.EventFilters, EventFilterPathPatterns: ep.Event.EventFilterPathPatterns,
		Channel: ep.Event.Channel, Retry: ep.Event.Retry, Region: region}
}

// syncTriggers gives the dispatcher the event functions now loaded.
func (e *Engine) syncTriggers() {
	e.mu.Lock()
	d := e.dispatcher
	e.mu.Unlock()
	if d == nil {
		return
	}
	var fns []trigger.Function
	for _, ep := range e.Endpoints() {
		if ep.Event == nil {
			continue
		}
		fns = append(fns, ep.TriggerFunction())
	}
	// A registration whose function is no longer loaded waits for it.
	e.mu.Lock()
	regs := slices.Clone(e.registered)
	e.mu.Unlock()
	for _, r := range regs {
		if ep, ok := e.triggerByName(r.TriggerName); ok {
			f := r.fn
			f.ID, f.Platform, f.Retry = ep.ID, trigger.Platform(ep.Platform), ep.Event.Retry
			fns = append(fns, f)
		}
	}
	d.SetFunctions(fns)
}

// TriggersIdle waits until every change emitted so far has been
// delivered to the functions it fires (for tests and `pyric exec`).
func (e *Engine) TriggersIdle(ctx context.Context) error {
	e.mu.Lock()
	d := e.dispatcher
	e.mu.Unlock()
	if d == nil {
		return nil
	}
	return d.Idle(ctx)
}

// triggerEnv is what the payloads need from the functions' environment:
// the default Realtime Database instance (FIREBASE_CONFIG's databaseURL,
// as firebase-functions resolves a ref without an instance) and the
// Storage emulator's URL for objects' links.
func triggerEnv(project string, env map[string]string, newID func() string) trigger.Env {
	te := trigger.Env{Project: project, NewID: newID, DatabaseInstance: project + "-default-rtdb"}
	var cfg struct {
		DatabaseURL string `json:"databaseURL"`
	}
	if json.Unmarshal([]byte(env["FIREBASE_CONFIG"]), &cfg) == nil && cfg.DatabaseURL != "" {
		if u, err := url.Parse(cfg.DatabaseURL); err == nil {
			if ns := u.Query().Get("ns"); ns != "" {
				te.DatabaseInstance = ns
			} else if host, _, _ := strings.Cut(u.Hostname(), "."); host != "" {
				te.DatabaseInstance = host
			}
		}
	}
	if s := env["STORAGE_EMULATOR_HOST"]; s != "" {
		te.StorageURL = s
	}
	return te
}

// Auth blocking event types of firebase-functions' manifest, and the
// keys of the Auth config's blockingFunctions.triggers they fill.
var blockingEvents = map[string]string{
	"providers/cloud.auth/eventTypes/user.beforeCreate": "beforeCreate",
	"providers/cloud.auth/eventTypes/user.beforeSignIn": "beforeSignIn",
	// Production's (the Emulator Suite registers neither).
	"providers/cloud.auth/eventTypes/user.beforeSendEmail": "beforeSendEmail",
	"providers/cloud.auth/eventTypes/user.beforeSendSms":   "beforeSendSms",
}

// BlockingConfig is the Auth project config's blockingFunctions for the
// blocking functions now loaded, as the Emulator Suite registers them
// with its Auth emulator: each event's functionUri on the functions port
// (baseURL, "http://127.0.0.1:5001"), and the credentials the functions
// ask to be forwarded. It is nil when no blocking function is loaded.
func (e *Engine) BlockingConfig(baseURL string) map[string]any {
	triggers := map[string]any{}
	creds := map[string]any{}
	for _, ep := range e.Endpoints() {
		if ep.Blocking == nil {
			continue
		}
		key, ok := blockingEvents[ep.Blocking.EventType]
		if !ok {
			continue
		}
		region := DefaultRegion
		if len(ep.Regions) > 0 {
			region = ep.Regions[0]
		}
		triggers[key] = map[string]any{"functionUri": baseURL + "/" + e.project + "/" + region + "/" + ep.ID}
		for _, c := range []string{"accessToken", "idToken", "refreshToken"} {
			on, _ := ep.Blocking.Options[c].(bool)
			creds[c] = on || creds[c] == true
		}
	}
	if len(triggers) == 0 {
		return nil
	}
	return map[string]any{"triggers": triggers, "forwardInboundCredentials": creds}
}

// DatabaseScope is the Realtime Database's event scope for the loaded
// functions (database.Database.SetEventScope): the depth of the
// shallowest location above a write that an RTDB function watches, so
// the write's event carries that location's whole value; -1 when none.
func (e *Engine) DatabaseScope(ns string, keys []string) int {
	e.mu.Lock()
	d := e.dispatcher
	e.mu.Unlock()
	if d == nil {
		return -1
	}
	return d.DatabaseScope(ns, keys)
}

// PubSubTopics are the topics the loaded Pub/Sub-triggered functions
// listen on (full names, sorted, without repeats): the ones the Emulator
// Suite creates when it registers their triggers.
func (e *Engine) PubSubTopics() []string {
	seen := map[string]bool{}
	var out []string
	for _, ep := range e.Endpoints() {
		if ep.Event == nil {
			continue
		}
		t := trigger.PubSubTopic(ep.TriggerFunction(), e.project)
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// pendingSpace is the engine's Log space of the trigger deliveries
// matched and not yet made (trigger.Journal), keyed by the
// dispatcher's keys, each a trigger.Pending in JSON.
const pendingSpace = "pending-deliveries"

// deliveryJournal is the dispatcher's trigger.Journal over the engine's
// Log: a change's deliveries are one durable append before any is made,
// each one's settlement another (a deletion), so what a kill -9 leaves
// in the space is what was matched and not made.
type deliveryJournal struct {
	log  service.Log
	logf func(format string, args ...any)
}

func (j deliveryJournal) Pending(ps []trigger.Pending, taken []string) error {
	changes := make([]service.LogChange, len(ps), len(ps)+len(taken))
	for i, p := range ps {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		changes[i] = service.LogChange{Key: p.Key, Value: b}
	}
	for _, k := range taken {
		changes = append(changes, service.LogChange{Key: k, Outbox: true})
	}
	return j.log.Append(pendingSpace, changes)
}

func (j deliveryJournal) Settled(key string) {
	if err := j.log.Append(pendingSpace, []service.LogChange{{Key: key}}); err != nil {
		j.logf("functions: could not record that delivery %s was made (it runs again after a restart): %v", key, err)
	}
}

// loadPendingDeliveries reads the deliveries an earlier run matched and
// did not make (it crashed, or stopped while they ran).
func (e *Engine) loadPendingDeliveries() error {
	return e.log.Load(func(space string, entries []service.LogChange) error {
		if space != pendingSpace {
			return nil
		}
		for _, c := range entries {
			var p trigger.Pending
			if err := json.Unmarshal(c.Value, &p); err != nil || p.Function == "" {
				return &service.DamagedError{Problem: fmt.Sprintf("functions: pending trigger delivery %s does not decode", c.Key)}
			}
			p.Key = c.Key
			e.recovered = append(e.recovered, p)
		}
		return nil
	})
}

// redeliver hands the dispatcher the deliveries an earlier run left,
// once the codebases loaded: production delivers an event at least
// once, and a write acknowledged before a crash is a write whose
// triggers run.
func (e *Engine) redeliver() {
	e.mu.Lock()
	d, ps := e.dispatcher, e.recovered
	e.recovered = nil
	e.mu.Unlock()
	if d == nil || len(ps) == 0 {
		return
	}
	e.printf("functions: delivering %d trigger event(s) left pending when pyric last stopped\n", len(ps))
	d.Redeliver(ps)
}
