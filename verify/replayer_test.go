package verify_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/verify"
)

// toy is a service verify knows nothing of: its rules are one word,
// "allow" or "deny", and a request is allowed when they say "allow".
type toy struct{ sessions int }

func (*toy) Name() string                       { return "toy" }
func (*toy) Reset() error                       { return nil }
func (*toy) Snapshot() (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
func (*toy) Restore(json.RawMessage) error      { return nil }

func (t *toy) Replay(s *service.Session, candidate *source.File) (*service.Report, error) {
	t.sessions++
	rules := ""
	if r := s.Rules["toy"]; r != nil {
		rules = r.Source
	}
	if candidate != nil {
		rules = candidate.Text
	}
	if rules != "allow" && rules != "deny" {
		return nil, &service.RulesError{File: "toy.rules"}
	}
	rep := service.NewReport()
	for _, ev := range s.Events {
		if ev.Service != "toy" || ev.Kind != event.KindRequest {
			continue
		}
		rep.CheckedEvents++
		now := event.Deny
		if rules == "allow" {
			now = event.Allow
		}
		if k := service.DivergenceKind(ev.Verdict, now); k != "" {
			rep.Add(service.Divergence{Kind: k, EventID: ev.ID, Method: ev.Method, Path: ev.Path, Before: string(ev.Verdict), After: string(now)})
		}
	}
	return rep, nil
}

var _ service.Replayer = (*toy)(nil)

// TestToyReplayerInVerify: a service implementing service.Replayer is
// verified beside the built-in ones, by its name, with the session's
// rules or a candidate, and only when the session used it.
func TestToyReplayerInVerify(t *testing.T) {
	f := &capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{
		"toy": {Rules: &capture.Rules{Name: "toy.rules", Source: "allow"}},
	}, Events: []event.Event{
		{ID: "e1", Service: "toy", Kind: event.KindRequest, Method: "poke", Path: "/a", Request: &event.Request{Verdict: event.Allow}},
		{ID: "e2", Service: "toy", Kind: event.KindRequest, Method: "poke", Path: "/b", Request: &event.Request{Verdict: event.Allow}},
	}}
	tr := &toy{}
	res, err := verify.Run(f, verify.Options{Registrations: regs(), Replayers: []service.Replayer{tr}})
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Services["toy"]
	if sr == nil || !sr.OK || sr.CheckedEvents != 2 || !res.OK {
		t.Fatalf("with the session's rules: %+v %+v", res, sr)
	}
	res, err = verify.Run(f, verify.Options{Registrations: regs(), Replayers: []service.Replayer{tr},
		Candidates: map[string]*source.File{"toy": source.NewFile("toy.rules", "deny")}})
	if err != nil {
		t.Fatal(err)
	}
	sr = res.Services["toy"]
	if res.OK || sr == nil || sr.OK || len(sr.Divergences) != 2 || sr.Divergences[0].Kind != verify.NowDenied || sr.Divergences[1].EventID != "e2" {
		t.Fatalf("with a denying candidate: %+v", sr)
	}
	_, err = verify.Run(f, verify.Options{Registrations: regs(), Replayers: []service.Replayer{tr},
		Candidates: map[string]*source.File{"toy": source.NewFile("toy.rules", "maybe")}})
	if err == nil || !strings.Contains(err.Error(), "toy.rules does not compile") {
		t.Fatalf("bad candidate: %v", err)
	}
	// With no service to replay with, verify says what is missing
	// rather than verifying nothing.
	if _, err := verify.Run(f, verify.Options{}); !errors.Is(err, verify.ErrNoServices) || !strings.Contains(err.Error(), "Options.Registrations") {
		t.Fatalf("no registrations: %v", err)
	}
	if _, _, _, err := verify.DeriveService(f, "toy", verify.Options{}); !errors.Is(err, verify.ErrNoServices) {
		t.Fatalf("no registrations, derive: %v", err)
	}
	// A session that never used the service does not replay it.
	n := tr.sessions
	res, err = verify.Run(&capture.Fixture{Schema: capture.Schema, Services: map[string]*capture.ServiceData{}}, verify.Options{Registrations: regs(), Replayers: []service.Replayer{tr}})
	if err != nil || res.Services["toy"] != nil || tr.sessions != n {
		t.Fatalf("unused service replayed: %+v %v", res, err)
	}
}
