package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/studio"
	"github.com/pyric/pyric/verify"
)

// The toy's rules: a language of its own, so that live rules, replay and
// re-run are proved through a service the tools have never heard of.
// A toy.rules file is lines of
//
//	allow NAME            anyone may add to the counter NAME ("*": any)
//	allow NAME signed-in  only a signed-in user may
//
// with blank lines and "#" comments between them. A request (Add) is
// allowed by the first line that matches it; with no rules loaded every
// client request is denied. Any other line is a compile error at its
// line; a line that repeats an earlier one is a lint warning.

const toyRulesFile = "toy.rules"

// toyRule is one allow line.
type toyRule struct {
	line     int
	text     string // the line as written, trimmed
	name     string
	signedIn bool
}

// toyRuleset is a compiled toy.rules.
type toyRuleset struct {
	name, text string
	rules      []toyRule
	// counts are each rule's true and false counts since it was loaded.
	counts []toyExprCount
}

// toyExprCount is one rule's coverage, in the shape the Studio's
// expression table reads.
type toyExprCount struct {
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Text   string `json:"text"`
	True   int    `json:"true"`
	False  int    `json:"false"`
	Error  int    `json:"error"`
}

// compileToyRules compiles text; the ruleset is nil when it has errors.
// lint holds the warnings (repeated lines).
func compileToyRules(name, text string) (rs *toyRuleset, diags, lint source.Diagnostics) {
	f := source.NewFile(name, text)
	rs = &toyRuleset{name: name, text: text}
	seen := map[string]int{}
	offset := 0
	for i, raw := range strings.Split(text, "\n") {
		line, start := i+1, offset
		offset += len(raw) + 1
		t := strings.TrimSpace(raw)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		col := strings.Index(raw, t)
		span := f.Span(start+col, start+len(raw))
		fields := strings.Fields(t)
		ok := len(fields) >= 2 && len(fields) <= 3 && fields[0] == "allow" && (len(fields) == 2 || fields[2] == "signed-in")
		if !ok {
			diags = append(diags, source.Diagnostic{Severity: source.Error, Code: "TOY_SYNTAX", Span: span,
				Message: fmt.Sprintf("line %d: want \"allow NAME\" or \"allow NAME signed-in\", not %q", line, t)})
			continue
		}
		if prev, dup := seen[t]; dup {
			lint = append(lint, source.Diagnostic{Severity: source.Warning, Code: "TOY_REPEATED", Span: span,
				Message: fmt.Sprintf("line %d repeats line %d: it never decides", line, prev)})
		}
		seen[t] = line
		rs.rules = append(rs.rules, toyRule{line: line, text: t, name: fields[1], signedIn: len(fields) == 3})
		rs.counts = append(rs.counts, toyExprCount{Line: line, Column: col + 1, Text: t})
	}
	if len(diags) > 0 {
		return nil, diags, lint
	}
	return rs, nil, lint
}

// toyDecision is a toy.rules verdict on one request.
type toyDecision struct {
	verdict event.Verdict
	rule    *event.Rule
	reason  string
}

// decide decides adding to the counter name as who; count adds the
// evaluation to the rules' coverage.
func (rs *toyRuleset) decide(who event.Identity, name string, count bool) toyDecision {
	if rs == nil {
		return toyDecision{verdict: event.Deny, reason: "no toy.rules are loaded: every client request is denied"}
	}
	signedIn := who.Lens == event.LensUser
	for i, r := range rs.rules {
		match := (r.name == "*" || r.name == name) && (!r.signedIn || signedIn)
		if count {
			if match {
				rs.counts[i].True++
			} else {
				rs.counts[i].False++
			}
		}
		if match {
			return toyDecision{verdict: event.Allow, reason: fmt.Sprintf("allowed by %q @ L%d", r.text, r.line),
				rule: &event.Rule{Index: i, Line: r.line, Column: rs.counts[i].Column, MatchPath: r.name, Condition: r.text}}
		}
	}
	return toyDecision{verdict: event.Deny, reason: fmt.Sprintf("no allow line of %s matches adding to %q", rs.name, name)}
}

// Add adds n to the counter name as who, if the rules allow it (admin
// bypasses them), and emits the request event.
func (t *toy) Add(who event.Identity, name string, n int64) (event.Verdict, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := toyDecision{verdict: event.Bypassed, reason: "admin requests bypass rules"}
	if who.Lens != event.LensAdmin {
		d = t.rules.decide(who, name, t.counting)
	}
	ev := event.Event{Kind: event.KindRequest, Service: toyName, Actor: event.Actor{Kind: identity.App}, Identity: who,
		Method: "add", Path: name, Request: &event.Request{Verdict: d.verdict, Rule: d.rule,
			Decision: &event.Explanation{Engine: toyName, Reason: d.reason}}}
	if d.verdict == event.Deny {
		ev.Err = &event.Failure{Code: "PERMISSION_DENIED", Message: d.reason}
		t.env.Events.Emit(ev)
		return d.verdict, errors.New(d.reason)
	}
	t.counts[name] += n
	if t.env.Bucket != nil {
		if err := t.env.Bucket.Update(func(tx service.Tx) error {
			return tx.Put([]byte(name), []byte(fmt.Sprint(t.counts[name])))
		}); err != nil {
			return d.verdict, err
		}
	}
	t.env.Events.Emit(ev)
	return d.verdict, nil
}

// The service.LiveRules capability.

func (t *toy) RulesFileName() string { return toyRulesFile }

func (t *toy) RulesFile() (name, text string, loaded bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rules == nil {
		return "", "", false
	}
	return t.rules.name, t.rules.text, true
}

// SetRulesFile loads text when it compiles; otherwise the rules in force
// stay.
func (t *toy) SetRulesFile(name, text string) (source.Diagnostics, error) {
	rs, diags, lint := compileToyRules(name, text)
	if rs == nil {
		return append(diags, lint...), &service.RulesError{File: name, Diags: diags}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules = rs
	return lint, nil
}

func (t *toy) CheckRules(name, text string) (compiles bool, diags, lint source.Diagnostics) {
	rs, diags, lint := compileToyRules(name, text)
	return rs != nil, diags, lint
}

func (t *toy) CollectCoverage() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counting = true
}

// RulesView has one scope: the rules in force and each line's counts.
func (t *toy) RulesView(string) service.RulesView {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rules == nil {
		return service.RulesView{Name: toyRulesFile, Coverage: []toyExprCount{}}
	}
	return service.RulesView{Name: t.rules.name, Text: t.rules.text, Loaded: true, Coverage: append([]toyExprCount{}, t.rules.counts...)}
}

// The service.Replayer capability: the session's toy requests decided
// again under candidate rules. The verdicts are all a toy request's
// replay compares (the toy's captured state is its counters' names).
func (t *toy) Replay(s *service.Session, candidate *source.File) (*service.Report, error) {
	if st, ok := s.States[toyName]; ok {
		// Its snapshot (counts) or its capture state (names).
		var recorded struct {
			Counts map[string]int64 `json:"counts"`
			Names  []string         `json:"names"`
		}
		if err := decodeStrict(st, &recorded); err != nil {
			return nil, &service.SessionError{Path: "fixture.services.toy.state", Msg: err.Error()}
		}
	}
	var rs *toyRuleset
	switch {
	case candidate != nil:
		var diags source.Diagnostics
		if rs, diags, _ = compileToyRules(candidate.Name, candidate.Text); rs == nil {
			return nil, &service.RulesError{File: candidate.Name, Diags: diags}
		}
	case s.Rules[toyName] != nil:
		r := s.Rules[toyName]
		var diags source.Diagnostics
		if rs, diags, _ = compileToyRules(r.Name, r.Source); rs == nil {
			return nil, &service.SessionError{Path: "fixture.services.toy.rules", Msg: (&service.RulesError{File: r.Name, Diags: diags}).Error()}
		}
	}
	rep := service.NewReport()
	for i := range s.Events {
		ev := &s.Events[i]
		if ev.Service != toyName || ev.Kind != event.KindRequest || ev.Request == nil || service.Bypassed(ev) {
			continue
		}
		rep.CheckedEvents++
		d := rs.decide(ev.Identity, ev.Path, false)
		if kind := service.DivergenceKind(ev.Request.Verdict, d.verdict); kind != "" {
			rep.Add(service.Divergence{Kind: kind, EventID: ev.ID, Method: ev.Method, Path: ev.Path, UID: ev.Identity.UID,
				Before: ev.Request.Verdict, After: d.verdict, Explanation: service.ExplainDecision(d.rule, &event.Explanation{Reason: d.reason})})
		}
	}
	return rep, nil
}

// The service.Rerunner capability: one recorded toy request decided
// again, under the live rules or edited ones, as its identity or another.
func (t *toy) Rerun(_ context.Context, r service.RerunRequest) (*service.Rerun, error) {
	if r.Event.Service != toyName || r.Event.Request == nil {
		return nil, &service.ErrRerun{Msg: "not a toy request"}
	}
	var rs *toyRuleset
	if r.Rules != "" {
		var diags source.Diagnostics
		if rs, diags, _ = compileToyRules(toyRulesFile, r.Rules); rs == nil {
			return nil, &service.RulesError{File: toyRulesFile, Diags: diags}
		}
	} else {
		t.mu.Lock()
		rs = t.rules
		t.mu.Unlock()
		if rs == nil {
			return nil, &service.ErrRerun{Msg: "no toy.rules are loaded"}
		}
	}
	d := rs.decide(r.As, r.Event.Path, false) // a re-run counts no coverage
	x := &service.Rerun{Verdict: d.verdict, Reason: d.reason, Rule: d.rule, Decision: &event.Explanation{Engine: toyName, Reason: d.reason}}
	x.Explanation = []string{service.ExplainDecision(d.rule, x.Decision)}
	return x, nil
}

// decodeStrict decodes b into v, refusing unknown fields.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

var (
	_ service.LiveRules = (*toy)(nil)
	_ service.Replayer  = (*toy)(nil)
	_ service.Rerunner  = (*toy)(nil)
)

// postJSON POSTs body as JSON to url, decodes the answer into v (when
// not nil) and returns its status.
func postJSON(t *testing.T, url string, body, v any) int {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

// TestToyRulesInEveryTool: the toy's rules, a language no tool knows,
// are live in the Studio's rules page (status, source, coverage, check),
// re-run by the Studio's inspector, captured with a session, replayed by
// verify under candidate rules and checked by the contract suite
// (TestToyServiceContract), each through the capability interfaces with
// no edit in the tool.
func TestToyRulesInEveryTool(t *testing.T) {
	b := startWithToy(t, t.TempDir())
	sts := httptest.NewServer(studio.New(studio.Options{Sandbox: b.Sandbox}))
	defer sts.Close()
	tt, ok := sandbox.Lookup[*toy](b.Sandbox)
	if !ok {
		t.Fatal("no toy service")
	}
	lr, ok := b.Sandbox.Service(toyName).(service.LiveRules)
	if !ok {
		t.Fatal("the toy does not offer service.LiveRules through the sandbox")
	}

	// Live rules: loaded, and a file that does not compile is refused
	// with its line while the last good rules stay.
	const rules = "# the toy's rules\nallow apples\nallow pears signed-in\n"
	if _, err := lr.SetRulesFile(toyRulesFile, rules); err != nil {
		t.Fatal(err)
	}
	diags, err := lr.SetRulesFile(toyRulesFile, "allow apples\nforbid pears\n")
	var re *service.RulesError
	if !errors.As(err, &re) || len(diags) != 1 || diags[0].Span.Start.Line != 2 {
		t.Fatalf("broken rules: %v, %v", err, diags)
	}
	if _, text, loaded := lr.RulesFile(); !loaded || text != rules {
		t.Fatalf("the broken rules replaced the good ones: %q %v", text, loaded)
	}

	alice := event.Identity{Lens: event.LensUser, UID: "alice"}
	anon := event.Identity{Lens: event.LensUnauthenticated}
	for _, c := range []struct {
		who  event.Identity
		name string
		want event.Verdict
	}{{alice, "apples", event.Allow}, {anon, "pears", event.Deny}, {alice, "pears", event.Allow}, {alice, "plums", event.Deny}} {
		if got, _ := tt.Add(c.who, c.name, 1); got != c.want {
			t.Fatalf("%s adding to %s: %s, want %s", c.who.UID, c.name, got, c.want)
		}
	}
	var reqs []event.Event
	for _, e := range b.Sandbox.Events().History() {
		if e.Service == toyName && e.Kind == event.KindRequest {
			reqs = append(reqs, e)
		}
	}
	if len(reqs) != 4 {
		t.Fatalf("%d toy request events, want 4", len(reqs))
	}

	// The Studio's rules page: status on Home, the source, each line's
	// counts, and the check of an edited text.
	var home struct {
		Rules []map[string]any `json:"rules"`
	}
	getJSON(t, sts.URL+"/api/services", &home)
	if !slices.ContainsFunc(home.Rules, func(m map[string]any) bool { return m["service"] == toyName && m["state"] == "live" }) {
		t.Errorf("no live toy rules on Home: %v", home.Rules)
	}
	var page struct {
		Service string `json:"service"`
		Loaded  bool   `json:"loaded"`
		Rules   struct {
			File     string `json:"file"`
			Source   string `json:"source"`
			Compiles bool   `json:"compiles"`
		} `json:"rules"`
		Coverage []toyExprCount `json:"coverage"`
	}
	getJSON(t, sts.URL+"/api/rules?service="+toyName, &page)
	if page.Service != toyName || !page.Loaded || page.Rules.File != toyRulesFile || page.Rules.Source != rules || !page.Rules.Compiles {
		t.Errorf("the toy's rules page: %+v", page)
	}
	// apples (alice) stops at line 2; pears (anonymous), pears (alice)
	// and plums pass it by; line 3 matches only alice's pears.
	wantCov := []toyExprCount{{Line: 2, Column: 1, Text: "allow apples", True: 1, False: 3}, {Line: 3, Column: 1, Text: "allow pears signed-in", True: 1, False: 2}}
	if !slices.Equal(page.Coverage, wantCov) {
		t.Errorf("the toy's coverage: %+v, want %+v", page.Coverage, wantCov)
	}
	var check struct {
		Compiles    bool `json:"compiles"`
		Diagnostics []struct {
			Line  int    `json:"line"`
			Where string `json:"where"`
		} `json:"diagnostics"`
		Lint []struct {
			Severity string `json:"severity"`
			Line     int    `json:"line"`
		} `json:"lint"`
	}
	if c := postJSON(t, sts.URL+"/api/rules/check", map[string]any{"service": toyName, "source": "allow apples\nallow pears please\n"}, &check); c != http.StatusOK ||
		check.Compiles || len(check.Diagnostics) != 1 || check.Diagnostics[0].Where != "toy.rules:2:1" {
		t.Errorf("checking broken toy rules: %d %+v", c, check)
	}
	check.Lint = nil
	if postJSON(t, sts.URL+"/api/rules/check", map[string]any{"service": toyName, "source": "allow apples\nallow apples\n"}, &check); !check.Compiles ||
		len(check.Lint) != 1 || check.Lint[0].Severity != "warning" || check.Lint[0].Line != 2 {
		t.Errorf("checking toy rules with a repeated line: %+v", check)
	}

	// The Studio's re-run: the anonymous pears denial, again as it was,
	// as bob, and under edited rules; edited rules that do not compile
	// come back with their diagnostics.
	var rr struct {
		Verdict event.Verdict `json:"verdict"`
		Reason  string        `json:"reason"`
		Rules   *struct {
			Compiles bool `json:"compiles"`
		} `json:"rules"`
	}
	denied := sts.URL + "/api/events/" + reqs[1].ID + "/rerun"
	for _, c := range []struct {
		body   map[string]any
		status int
		want   event.Verdict
	}{
		{map[string]any{}, http.StatusOK, event.Deny},
		{map[string]any{"as": map[string]any{"uid": "bob"}}, http.StatusOK, event.Allow},
		{map[string]any{"source": "allow *\n"}, http.StatusOK, event.Allow},
		{map[string]any{"source": "allow\n"}, http.StatusUnprocessableEntity, ""},
	} {
		rr.Verdict, rr.Rules = "", nil
		if got := postJSON(t, denied, c.body, &rr); got != c.status || rr.Verdict != c.want {
			t.Errorf("re-run %v: %d %+v, want %d %s", c.body, got, rr, c.status, c.want)
		}
		if c.status == http.StatusUnprocessableEntity && (rr.Rules == nil || rr.Rules.Compiles) {
			t.Errorf("re-run under broken rules: no diagnostics: %+v", rr)
		}
	}

	// Capture and verify: the session keeps the toy's rules, and a replay
	// under the recorded rules passes while candidate rules flip verdicts.
	f, err := capture.FromSandbox(b.Sandbox, b.Sandbox.Events().History())
	if err != nil {
		t.Fatal(err)
	}
	if sd := f.Services[toyName]; sd == nil || sd.Rules == nil || sd.Rules.Source != rules || sd.Rules.Name != toyRulesFile {
		t.Fatalf("captured toy rules: %+v", sd)
	}
	regs := append(backend.Services(&backend.Options{}), toyRegistration)
	res, err := verify.Run(f, verify.Options{Registrations: regs, Services: []string{toyName}})
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.Services[toyName]; sr == nil || !sr.OK || sr.CheckedEvents != 4 || !res.OK {
		t.Fatalf("replay under the recorded rules: %+v", sr)
	}
	res, err = verify.Run(f, verify.Options{Registrations: regs, Services: []string{toyName},
		Candidates: map[string]*source.File{toyName: source.NewFile(toyRulesFile, "allow apples\nallow plums\n")}})
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Services[toyName]
	if sr == nil || sr.OK || res.OK || len(sr.Divergences) != 2 {
		t.Fatalf("replay under candidate rules: %+v", sr)
	}
	got := map[string]string{}
	for _, d := range sr.Divergences {
		got[d.EventID] = d.Kind
	}
	if want := map[string]string{reqs[2].ID: verify.NowDenied, reqs[3].ID: verify.NowAllowed}; !maps.Equal(got, want) {
		t.Errorf("divergences %v, want %v", got, want)
	}
	_, err = verify.Run(f, verify.Options{Registrations: regs, Services: []string{toyName},
		Candidates: map[string]*source.File{toyName: source.NewFile(toyRulesFile, "deny everything\n")}})
	if !errors.As(err, &re) || re.Diags[0].Span.Start.Line != 1 {
		t.Errorf("candidate rules that do not compile: %v", err)
	}
}
