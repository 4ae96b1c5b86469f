package storage

// The service.CaseDeriver capability: every client request of a session
// becomes a `pyric storage rules simulate` case whose expectation is the
// recorded verdict.

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/rules/value"
	"github.com/pyric/pyric/sandbox/service"
)

// DeriveCases implements service.CaseDeriver.
func (e *Engine) DeriveCases(s *service.Session, rulesSource string) (any, int, int, error) {
	c, err := deriveCases(s, rulesSource)
	if err != nil {
		return nil, 0, 0, err
	}
	return c, len(c.TestCases), len(c.Unsupported), nil
}

// deriveCases writes every client Storage request of the session
// (admin requests and reads granted by a download token excepted) as a
// `pyric storage rules simulate` case: the object as the rules saw it
// before (existingResource) and, for uploads and patches, after
// (resource). A request whose rules read Firestore documents gets exact
// function mocks: the documents it read, as the session's Firestore held
// them then (the captured rules decide it again to learn which). When
// that cannot be done (no rules captured, the new decision differs) it is
// listed as unsupported.
func deriveCases(s *service.Session, rulesSource string) (*service.Cases[srules.Case], error) {
	out := service.NewCases[srules.Case](rulesSource)
	var rs *srules.Ruleset
	if strings.TrimSpace(rulesSource) != "" {
		rs, _ = srules.Compile(source.NewFile("storage.rules", rulesSource))
	}
	// firestore.get()/exists() read the session's Firestore as it was.
	fsView, err := firestoreAt(s)
	if err != nil {
		return nil, err
	}
	for i := range s.Events {
		ev := &s.Events[i]
		if ev.Kind == event.KindCommit && ev.Service == firestoreService {
			if err := fsView.Advance(i); err != nil {
				return nil, err
			}
			continue
		}
		if ev.Service != Service || ev.Kind != event.KindRequest || service.Bypassed(ev) {
			continue
		}
		exp, ok := service.CaseExpectation(ev.Verdict)
		if !ok {
			if ev.Verdict == event.Unsupported {
				out.Unsupported = append(out.Unsupported, ev.ID)
			}
			continue
		}
		c := srules.Case{Description: service.CaseDescription(ev), Expectation: exp,
			Method: ev.Method, Path: ev.Path, Bucket: BucketOf(ev), RequestTime: ev.At.UTC().Format(time.RFC3339Nano)}
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
		out.Add(ev, c)
	}
	return out, nil
}

// storageMocks decides ev again with the captured rules on the session's
// Firestore as it was, and returns a mock of each document the rules
// read; ok is false when the decision differs from the captured one.
func storageMocks(rs *srules.Ruleset, ev *event.Event, fsView service.StateView) ([]srules.FunctionMock, bool) {
	if rs == nil {
		return nil, false
	}
	var read []string
	seen := map[string]bool{}
	req := &srules.Request{Method: ev.Method, Bucket: BucketOf(ev), Path: ev.Path, Time: ev.At, NoTrace: true,
		Firestore: srules.FirestoreLookupFunc(func(p string) (value.Map, bool, error) {
			if !seen[p] {
				seen[p] = true
				read = append(read, p)
			}
			return fsView.RulesValue(p)
		})}
	if ev.Identity.Lens == event.LensUser {
		req.Auth = &srules.Auth{UID: ev.Identity.UID, Token: ev.Identity.Token}
	}
	if ev.Seen != nil && ev.Seen.Before != nil && ev.Seen.Before.Exists && ev.Method != srules.List {
		req.Resource, _ = ObjectView(ev.Seen.Before.Data)
	}
	if (ev.Method == srules.Create || ev.Method == srules.Update) && ev.Seen != nil {
		req.Incoming, _ = ObjectView(ev.Seen.Data)
	}
	d := rs.Decide(req)
	if (d.Allowed() && ev.Verdict != event.Allow) || (!d.Allowed() && ev.Verdict != event.Deny) {
		return nil, false
	}
	var mocks []srules.FunctionMock
	for _, p := range read {
		doc := fsView.Record(p)
		if doc == nil {
			mocks = append(mocks, srules.FunctionMock{Function: "firestore.exists", Path: p, Result: json.RawMessage("false")})
			continue
		}
		data, err := json.Marshal(doc)
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
