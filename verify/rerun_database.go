package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// errNoWriteData: a captured write whose event carries no data.
var errNoWriteData = errors.New("the captured write carries no data (a capture older than write data in events), so it cannot be re-decided")

// redecideDatabase issues a recorded Realtime Database request again on
// db as who: a read is judged, a write is done (or, for an onDisconnect
// registration, decided without being done). A denial is a
// *database.Denied.
func redecideDatabase(db *database.Database, ev *event.Event, who identity.Identity, ns string, keys []string) error {
	path := "/" + strings.Join(keys, "/")
	switch {
	case !dbWriteMethods[ev.Method]:
		return db.JudgeRead(who, ns, path, rulesQuery(ev.Seen), ev.Method)
	case ev.Seen == nil: // a set of null (a delete) carries Seen with no data
		return errNoWriteData
	case ev.Method == "ondisconnect_register":
		// Registering decides the write without doing it.
		c := db.Connect(ns, who)
		defer c.Close()
		defer c.OnDisconnectCancel("/")
		if ev.Seen.Updates != nil {
			return c.OnDisconnectMerge(path, ev.Seen.Updates)
		}
		return c.OnDisconnectSet(path, ev.Seen.Data)
	case ev.Seen.Updates != nil:
		return db.Update(who, ns, path, ev.Seen.Updates, ev.Method)
	}
	_, err := db.Set(who, ns, path, ev.Seen.Data, database.WriteOptions{Method: ev.Method})
	return err
}

// DatabaseRerun is a recorded Realtime Database request decided again.
type DatabaseRerun struct {
	Verdict event.Verdict
	// Event is the request event the branch emitted: its decision, trace
	// and reason are the re-run's.
	Event *event.Event
}

// RerunDatabase decides a recorded Realtime Database request (ev) again as
// who against the rules src (named name; it applies to every namespace)
// on a branch of the live state: live is the database service's snapshot
// taken now and later the events recorded after ev, oldest first (every
// one of them: a bounded history drops only events older than ev). The
// branch is live with each later commit undone, newest first, so the
// rules see the tree exactly as the request found it; the request is then
// issued on the branch, at the time it was made. Nothing live changes.
// A reset or snapshot load after ev means the tree as of ev is not known:
// an error.
func RerunDatabase(project string, live json.RawMessage, later []event.Event, ev *event.Event, who identity.Identity, name, src string) (*DatabaseRerun, error) {
	if ev.Service != "database" || ev.Kind != event.KindRequest {
		return nil, fmt.Errorf("event %s is not a Realtime Database request", ev.ID)
	}
	if rs, diags := rtdb.Compile(source.NewFile(name, src)); rs == nil || diags.HasErrors() {
		return nil, &RulesError{File: name, Diags: diags}
	}
	st, err := decodeDBState(live, "live")
	if err != nil {
		return nil, err
	}
	defaultNS := database.DefaultNamespace(project)
	nsOf := func(ns string) string {
		if ns == "" {
			return defaultNS
		}
		return ns
	}
	for i := range later {
		if later[i].Kind == event.KindBoundary {
			return nil, fmt.Errorf("the state was reset or a snapshot loaded after event %s: the tree as of that request is not known", ev.ID)
		}
	}
	trees := make(map[string]any, len(st.Namespaces))
	for k, n := range st.Namespaces {
		trees[k] = n.Data
	}
	if err := undoDatabaseCommits(trees, later, nsOf, "events after "+ev.ID); err != nil {
		return nil, err
	}
	for k, t := range trees {
		st.Namespaces[k] = dbNamespace{Data: t} // no rules of its own: the rules re-run with apply everywhere
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	at := ev.At
	last := &lastRequest{}
	db, err := database.New(service.Env{Project: project, Now: func() time.Time { return at }, Events: last},
		database.Options{Rules: src, RulesName: name})
	if err != nil {
		return nil, fmt.Errorf("verify: database: %w", err)
	}
	if err := db.Restore(raw); err != nil {
		return nil, fmt.Errorf("the branch's tree: %w", err)
	}
	ns, keys, err := dbPath(ev.Path)
	if err != nil {
		return nil, fmt.Errorf("event %s: %v", ev.ID, err)
	}
	out := &DatabaseRerun{Verdict: event.Allow}
	err = redecideDatabase(db, ev, who, nsOf(ns), keys)
	var denied *database.Denied
	switch {
	case err == nil:
	case errors.As(err, &denied):
		out.Verdict = event.Deny
	default:
		return nil, err
	}
	out.Event = last.ev
	return out, nil
}
