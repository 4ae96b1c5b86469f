package verify

// Case derivation for Realtime Database and Storage sessions: every client
// request becomes a `pyric database rules simulate` / `pyric storage rules
// simulate` case whose expectation is the captured verdict.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

// DatabaseCase is one `pyric database rules simulate` case.
type DatabaseCase struct {
	Description string         `json:"description"`
	Expectation string         `json:"expectation"`
	Operation   string         `json:"operation"` // read or write
	Path        string         `json:"path"`
	Auth        *rtdb.AuthJSON `json:"auth"`
	// Data is the whole namespace before the request; NewData the value
	// a write sets at Path (server values resolved).
	Data    json.RawMessage `json:"data"`
	NewData any             `json:"newData"`
	Now     string          `json:"now"`
	// Query is a read's query as the rules saw it (query.* names).
	Query any `json:"query,omitempty"`
}

var verdictExpectation = map[event.Verdict]string{event.Allow: "ALLOW", event.Deny: "DENY"}

// DeriveDatabaseCases writes every client Realtime Database request of the
// fixture (reads, listens, writes; admin requests excepted) as a simulator
// case, with the namespace's data as the session had it at that moment.
// A multi-location update of several paths has no case form (the
// simulator writes one location) and is listed as unsupported.
func DeriveDatabaseCases(f *capture.Fixture, rulesSource string) (*Cases[DatabaseCase], error) {
	out := &Cases[DatabaseCase]{Source: rulesSource, TestCases: []DatabaseCase{}, Derived: []DerivedCase{}, Warnings: []string{}, Unsupported: []string{}}
	var captured *database.SessionState
	if sd := f.Services["database"]; sd != nil && len(sd.State) > 0 {
		var err error
		if captured, err = database.DecodeSessionState(sd.State, "fixture.services.database.state"); err != nil {
			return nil, fixtureError(err)
		}
	}
	trees, err := database.InitialTrees(f.Events, captured, func(ns string) string {
		if strings.HasSuffix(ns, "-default-rtdb") {
			return ""
		}
		return ns
	}, func(ns string) string { return ns })
	if err != nil {
		return nil, fixtureError(err)
	}
	multiNS := false
events:
	for i := range f.Events {
		ev := &f.Events[i]
		if ev.Kind == event.KindBoundary {
			if ev.Boundary != nil && ev.Boundary.Boundary == event.Reset {
				trees = map[string]any{}
			}
			continue
		}
		if ev.Service != "database" {
			continue
		}
		ns, keys, err := database.EventKeys(ev.Path)
		if err != nil {
			return nil, &capture.Error{Path: fmt.Sprintf("fixture.events[%d].path", i), Msg: err.Error()}
		}
		if ev.Kind == event.KindCommit {
			after, err := database.Normalize(ev.Commit.After, nil, 0)
			if err != nil {
				return nil, &capture.Error{Path: fmt.Sprintf("fixture.events[%d].after", i), Msg: err.Error()}
			}
			trees[ns] = database.SetTree(trees[ns], keys, after)
			continue
		}
		if ev.Kind != event.KindRequest || service.Bypassed(ev) || ev.Origin == event.OriginListener {
			continue
		}
		exp, ok := verdictExpectation[ev.Verdict]
		if !ok {
			if ev.Verdict == event.Unsupported {
				out.Unsupported = append(out.Unsupported, ev.ID)
			}
			continue
		}
		if ns != "" {
			multiNS = true
		}
		c := DatabaseCase{Description: fmt.Sprintf("%s %s %s (%s)", ev.ID, ev.Method, ev.Path, who(ev)), Expectation: exp,
			Operation: "read", Path: "/" + strings.Join(keys, "/"), Now: ev.At.UTC().Format(time.RFC3339Nano)}
		if ev.Identity.Lens == event.LensUser {
			c.Auth = &rtdb.AuthJSON{UID: ev.Identity.UID, Token: ev.Identity.Token}
		}
		if !database.IsWriteMethod(ev.Method) && ev.Seen != nil && ev.Seen.Query != nil {
			c.Query = ev.Seen.Query
		}
		if database.IsWriteMethod(ev.Method) {
			c.Operation = "write"
			var raw any
			switch {
			case ev.Seen == nil:
				out.Unsupported = append(out.Unsupported, ev.ID)
				continue
			case ev.Seen.Updates != nil:
				if len(ev.Seen.Updates) != 1 {
					out.Unsupported = append(out.Unsupported, ev.ID)
					continue
				}
				for rel, v := range ev.Seen.Updates {
					sub, err := database.ParsePath(rel)
					if err != nil {
						out.Unsupported = append(out.Unsupported, ev.ID)
						continue events
					}
					keys = append(append([]string(nil), keys...), sub...)
					c.Path, raw = "/"+strings.Join(keys, "/"), v
				}
			default:
				raw = ev.Seen.Data
			}
			nd, err := database.Normalize(raw, database.TreeAt(trees[ns], keys), ev.At.UnixMilli())
			if err != nil {
				out.Unsupported = append(out.Unsupported, ev.ID)
				continue events
			}
			c.NewData = nd
		}
		data := trees[ns]
		if data == nil {
			data = map[string]any{}
		}
		if c.Data, err = json.Marshal(data); err != nil {
			return nil, err
		}
		out.Derived = append(out.Derived, DerivedCase{EventID: ev.ID, Index: len(out.TestCases)})
		out.TestCases = append(out.TestCases, c)
	}
	if multiNS {
		out.Warnings = append(out.Warnings, "NAMESPACES: the session used several namespaces; every case is decided by the one rules source")
	}
	return out, nil
}

// DeriveStorageCases writes every client Storage request of the fixture
// (admin requests and reads granted by a download token excepted) as a
// `pyric storage rules simulate` case: the object as the rules saw it
// before (existingResource) and, for uploads and patches, after
// (resource). A request whose rules read Firestore documents gets exact
// function mocks: the documents it read, as the session's Firestore held
// them then (the captured rules decide it again to learn which). When
// that cannot be done (no rules captured, the new decision differs) it is
// listed as unsupported.
func DeriveStorageCases(f *capture.Fixture, rulesSource string) (*Cases[srules.Case], error) {
	out := &Cases[srules.Case]{Source: rulesSource, TestCases: []srules.Case{}, Derived: []DerivedCase{}, Warnings: []string{}, Unsupported: []string{}}
	var rs *srules.Ruleset
	if strings.TrimSpace(rulesSource) != "" {
		rs, _ = srules.Compile(source.NewFile("storage.rules", rulesSource))
	}
	fsView, err := firestoreAsCaptured(f)
	if err != nil {
		return nil, err
	}
	for i := range f.Events {
		ev := &f.Events[i]
		if ev.Kind == event.KindCommit && ev.Service == "firestore" {
			if err := fsView.apply(i, ev); err != nil {
				return nil, err
			}
			continue
		}
		if ev.Service != storage.Service || ev.Kind != event.KindRequest || service.Bypassed(ev) {
			continue
		}
		exp, ok := verdictExpectation[ev.Verdict]
		if !ok {
			if ev.Verdict == event.Unsupported {
				out.Unsupported = append(out.Unsupported, ev.ID)
			}
			continue
		}
		c := srules.Case{Description: fmt.Sprintf("%s %s %s (%s)", ev.ID, ev.Method, ev.Path, who(ev)), Expectation: exp,
			Method: ev.Method, Path: ev.Path, Bucket: bucketOf(ev), RequestTime: ev.At.UTC().Format(time.RFC3339Nano)}
		if ev.Identity.Lens == event.LensUser {
			c.Auth, _ = json.Marshal(map[string]any{"uid": ev.Identity.UID, "token": ev.Identity.Token})
		}
		if ev.Seen != nil && ev.Seen.Before != nil && ev.Seen.Before.Exists && ev.Method != srules.List {
			c.ExistingResource, _ = json.Marshal(caseObject(ev.Seen.Before.Data))
		}
		if (ev.Method == srules.Create || ev.Method == srules.Update) && ev.Seen != nil && ev.Seen.Data != nil {
			c.Resource, _ = json.Marshal(caseObject(ev.Seen.Data))
		}
		if ev.Decision != nil && ev.Decision.Lookups > 0 {
			mocks, ok := storageMocks(rs, ev, fsView)
			if !ok {
				out.Unsupported = append(out.Unsupported, ev.ID)
				continue
			}
			c.FunctionMocks = mocks
		}
		out.Derived = append(out.Derived, DerivedCase{EventID: ev.ID, Index: len(out.TestCases)})
		out.TestCases = append(out.TestCases, c)
	}
	return out, nil
}

// storageMocks decides ev again with the captured rules on the session's
// Firestore as it was, and returns a mock of each document the rules
// read; ok is false when the decision differs from the captured one.
func storageMocks(rs *srules.Ruleset, ev *event.Event, fsView *capturedFirestore) ([]srules.FunctionMock, bool) {
	if rs == nil {
		return nil, false
	}
	var read []string
	seen := map[string]bool{}
	req := &srules.Request{Method: ev.Method, Bucket: bucketOf(ev), Path: ev.Path, Time: ev.At, NoTrace: true,
		Firestore: fsView.lookup(func(p string) {
			if !seen[p] {
				seen[p] = true
				read = append(read, p)
			}
		})}
	if ev.Identity.Lens == event.LensUser {
		req.Auth = &srules.Auth{UID: ev.Identity.UID, Token: ev.Identity.Token}
	}
	if ev.Seen != nil && ev.Seen.Before != nil && ev.Seen.Before.Exists && ev.Method != srules.List {
		req.Resource, _ = objectView(ev.Seen.Before.Data)
	}
	if (ev.Method == srules.Create || ev.Method == srules.Update) && ev.Seen != nil {
		req.Incoming, _ = objectView(ev.Seen.Data)
	}
	d := rs.Decide(req)
	if (d.Allowed() && ev.Verdict != event.Allow) || (!d.Allowed() && ev.Verdict != event.Deny) {
		return nil, false
	}
	var mocks []srules.FunctionMock
	for _, p := range read {
		doc := fsView.br.Get(p)
		if doc == nil {
			mocks = append(mocks, srules.FunctionMock{Function: "firestore.exists", Path: p, Result: json.RawMessage("false")})
			continue
		}
		data, err := json.Marshal(simForm(firestore.EncodeFields(doc.Fields, DB)))
		if err != nil {
			return nil, false
		}
		mocks = append(mocks, srules.FunctionMock{Function: "firestore.get", Path: p, Result: data})
	}
	return mocks, true
}

// caseObject is an event's object view as a case gives it: the
// properties that are set (an unset one is absent in the Test API).
func caseObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, e := range m {
		switch x := e.(type) {
		case string:
			if x == "" {
				continue
			}
		case json.Number:
			if x == "0" && k != "size" {
				continue
			}
		}
		out[k] = e
	}
	return out
}

// DeriveService writes a fixture's session of one service ("firestore",
// "database" or "storage") as that service's simulator input, deciding
// with the candidate rules opts names for it, else the captured ones. It
// returns the *Cases value with its number of cases and of unsupported
// events.
func DeriveService(f *capture.Fixture, service string, opts Options) (cases any, n, unsupported int, err error) {
	switch service {
	case "firestore":
		c := DeriveCases(f, RulesText(f, opts.FirestoreRules, service))
		return c, len(c.TestCases), len(c.Unsupported), nil
	case "database":
		c, err := DeriveDatabaseCases(f, RulesText(f, opts.DatabaseRules, service))
		if err != nil {
			return nil, 0, 0, err
		}
		return c, len(c.TestCases), len(c.Unsupported), nil
	case "storage":
		c, err := DeriveStorageCases(f, RulesText(f, opts.StorageRules, service))
		if err != nil {
			return nil, 0, 0, err
		}
		return c, len(c.TestCases), len(c.Unsupported), nil
	}
	return nil, 0, 0, fmt.Errorf("%w %q: want firestore, database or storage", ErrUnknownService, service)
}

// ErrUnknownService: DeriveService was asked for a service it doesn't know.
var ErrUnknownService = errors.New("unknown service")

// RulesText is the rules source a derivation of service decides with:
// the candidate, else the fixture's captured rules for it ("" when none).
func RulesText(f *capture.Fixture, candidate *source.File, service string) string {
	if candidate != nil {
		return candidate.Text
	}
	if sd := f.Services[service]; sd != nil && sd.Rules != nil {
		if sd.Rules.Source == "" {
			return string(sd.Rules.JSON)
		}
		return sd.Rules.Source
	}
	return ""
}
