package studio

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// diag is a diagnostic in the JSON the pages read.
type diag struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	EndLine  int    `json:"endLine"`
	EndCol   int    `json:"endColumn"`
	Fix      string `json:"fix,omitempty"`
	// Where is file:line:col; SourceLine the offending line's text.
	Where      string `json:"where"`
	SourceLine string `json:"sourceLine,omitempty"`
}

func diagsOf(f *source.File, ds source.Diagnostics) []diag {
	out := []diag{}
	lines := strings.Split(f.Text, "\n")
	for _, d := range ds {
		x := diag{Severity: d.Severity.String(), Code: d.Code, Message: d.Message, Fix: d.Fix,
			Line: d.Span.Start.Line, Column: d.Span.Start.Column, EndLine: d.Span.End.Line, EndCol: d.Span.End.Column,
			Where: fmt.Sprintf("%s:%d:%d", f.Name, d.Span.Start.Line, d.Span.Start.Column)}
		if l := d.Span.Start.Line; l >= 1 && l <= len(lines) {
			x.SourceLine = lines[l-1]
		}
		out = append(out, x)
	}
	return out
}

// rulesReport compiles and lints a rules text.
type rulesReport struct {
	File        string `json:"file"`
	Source      string `json:"source"`
	Compiles    bool   `json:"compiles"`
	Diagnostics []diag `json:"diagnostics"` // compile errors and warnings
	Lint        []diag `json:"lint"`
}

// checkRules compiles and lints a rules text of a service with live
// rules (service.LiveRules.CheckRules).
func checkRules(lr service.LiveRules, name, text string) rulesReport {
	f := source.NewFile(name, text)
	compiles, diags, findings := lr.CheckRules(name, text)
	return rulesReport{File: name, Source: text, Compiles: compiles, Diagnostics: diagsOf(f, diags), Lint: diagsOf(f, findings)}
}

// liveServices are the sandbox's services with live rules
// (service.LiveRules), in the sandbox's order.
func (s *Studio) liveServices() []service.LiveRules {
	var out []service.LiveRules
	for _, sv := range s.sb.Services() {
		if lr, ok := sv.(service.LiveRules); ok {
			out = append(out, lr)
		}
	}
	return out
}

// liveService returns the service named name if it has live rules.
func (s *Studio) liveService(name string) (service.LiveRules, bool) {
	lr, ok := s.sb.Service(name).(service.LiveRules)
	return lr, ok
}

// ruleServices are the services whose rules status Home shows: every
// served service with live rules, in the endpoints' order (every one in
// the sandbox when the Studio is not told the endpoints).
func (s *Studio) ruleServices() []string {
	var out []string
	if s.opts.Endpoints == nil {
		for _, lr := range s.liveServices() {
			out = append(out, lr.Name())
		}
		return out
	}
	for _, e := range s.opts.Endpoints() {
		if _, ok := s.liveService(e.Service); ok {
			out = append(out, e.Service)
		}
	}
	return out
}

// rulesFile is the path of a service's rules file on disk, or "".
func (s *Studio) rulesFile(service string) string {
	return s.opts.RulesFiles[service]
}

// rulesStatus is one service's rules summary (Home, Rules): what is live
// and, when a rules file is named, whether that file (as it is on disk
// now) compiles. state is "live", "none", "changed on disk", "error" (the
// file does not compile; errors carry file:line:col and the source line)
// or "not served".
func (s *Studio) rulesStatus(service string) map[string]any {
	out := map[string]any{"service": service}
	lr, ok := s.liveService(service)
	if !ok {
		out["state"] = "not served"
		return out
	}
	name, text, loaded := lr.RulesFile()
	out["loaded"], out["file"] = loaded, name
	if !loaded {
		out["state"] = "none"
	} else {
		out["state"] = "live"
	}
	if path := s.rulesFile(service); path != "" {
		out["path"] = path
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !loaded:
			out["fileError"] = "no rules file at " + path
		case err != nil:
			out["fileError"] = err.Error()
		case string(b) != text:
			rep := checkRules(lr, path, string(b))
			if !rep.Compiles {
				out["state"] = "error"
				errs := []diag{}
				for _, d := range rep.Diagnostics {
					if d.Severity == "error" {
						errs = append(errs, d)
					}
				}
				out["errors"] = errs
			} else {
				out["state"] = "changed on disk"
			}
		}
	}
	return out
}

// rulesStatuses is Home's rules status of every service with rules.
func (s *Studio) rulesStatuses() []map[string]any {
	out := []map[string]any{}
	for _, svc := range s.ruleServices() {
		out = append(out, s.rulesStatus(svc))
	}
	return out
}

// rulesService is the service with live rules a request names (empty:
// the first of the sandbox's services with live rules); it fails the
// request with status when there is none.
func (s *Studio) rulesService(w http.ResponseWriter, name string, status int) (string, service.LiveRules, bool) {
	if name == "" {
		if live := s.liveServices(); len(live) > 0 {
			return live[0].Name(), live[0], true
		}
		fail(w, status, "no service with rules is served")
		return "", nil, false
	}
	lr, ok := s.liveService(name)
	if !ok {
		var names []string
		for _, l := range s.liveServices() {
			names = append(names, quote(l.Name()))
		}
		served := "none is"
		if len(names) > 0 {
			served = strings.Join(names, ", ") + " are"
		}
		fail(w, status, "no service "+quote(name)+" with rules is served (the services with rules: "+served+")")
		return "", nil, false
	}
	return name, lr, true
}

// rules serves the live rules of a service (?service=NAME, by default the
// first with rules; ?scope= or ?ns= names one of the service's scopes,
// such as an RTDB namespace) with diagnostics, lint findings and
// coverage: each expression's true, false and error counts since the
// rules were loaded, allowed requests included, as the service's
// service.LiveRules.RulesView gives them.
func (s *Studio) rules(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	svc, lr, ok := s.rulesService(w, q.Get("service"), http.StatusNotFound)
	if !ok {
		return
	}
	scope := q.Get("scope")
	if scope == "" {
		scope = q.Get("ns")
	}
	v := lr.RulesView(scope)
	out := map[string]any{"service": svc, "loaded": v.Loaded, "rules": checkRules(lr, v.Name, v.Text), "status": s.rulesStatus(svc), "coverage": v.Coverage}
	if v.Coverage == nil {
		out["coverage"] = []any{}
	}
	for k, x := range v.Facts {
		if _, taken := out[k]; !taken {
			out[k] = x
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// rulesCheck compiles and lints a posted text: {"source": "...",
// "service": NAME (by default the first with rules), "file": its name
// (by default the service's rules file's)}.
func (s *Studio) rulesCheck(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Source  string `json:"source"`
		File    string `json:"file"`
		Service string `json:"service"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	_, lr, ok := s.rulesService(w, body.Service, http.StatusBadRequest)
	if !ok {
		return
	}
	if body.File == "" {
		body.File = lr.RulesFileName()
	}
	writeJSON(w, http.StatusOK, checkRules(lr, body.File, body.Source))
}

// rerunReq is the body of POST /api/events/{id}/rerun.
type rerunReq struct {
	// As replaces the identity: {"uid": "bob", "claims": {...}}, or
	// {"anonymous": true} for no credential; absent keeps the event's.
	As *struct {
		UID       string         `json:"uid"`
		Claims    map[string]any `json:"claims"`
		Anonymous bool           `json:"anonymous"`
	} `json:"as"`
	// Source replaces the rules; empty uses the live rules.
	Source string `json:"source"`
}

// rerunResult is a re-decided request.
type rerunResult struct {
	Verdict     event.Verdict      `json:"verdict"`
	Reason      string             `json:"reason"`
	Rule        *event.Rule        `json:"rule,omitempty"`
	Trace       []event.Step       `json:"trace,omitempty"`
	Decision    *event.Explanation `json:"decision,omitempty"`
	Explanation []string           `json:"explanation,omitempty"`
	Identity    event.Identity     `json:"identity"`
	Rules       *rulesReport       `json:"rules,omitempty"` // set when the edited rules do not compile
	// Notes say where the re-run could not use what the request saw (a
	// document the recorded decision did not read); none means exact.
	Notes []string `json:"notes,omitempty"`
}

// rerun decides a recorded request again, as another identity and/or
// against edited rules, without changing any state, through its service's
// service.Rerunner: the same
// path verify's replay takes, so a re-run with the same rules and
// identity reproduces the recorded verdict.
func (s *Studio) rerun(w http.ResponseWriter, r *http.Request) {
	ev, ok := s.findEvent(w, r.PathValue("id"))
	if !ok {
		return
	}
	rr, ok := s.sb.Service(ev.Service).(service.Rerunner)
	if ev.Request == nil || !ok {
		fail(w, http.StatusBadRequest, rerunScope)
		return
	}
	var body rerunReq
	if !readJSON(w, r, &body) {
		return
	}
	who, err := rerunIdentity(ev, body)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	s.rerunWith(w, r, rr, ev, who, body.Source)
}

// rerunScope says which events can be re-run and why not the others.
const rerunScope = "re-run is available for the requests of a served service that decides its requests by rules and re-runs them"

// rerunIdentity is the identity a re-run decides as: the event's, or the
// one the body names; admin is refused (it bypasses rules).
func rerunIdentity(ev event.Event, body rerunReq) (identity.Identity, error) {
	who, err := identityOfEvent(ev.Identity)
	if err != nil {
		return who, err
	}
	if a := body.As; a != nil {
		switch {
		case a.Anonymous:
			who = identity.Anonymous()
		case a.UID != "":
			claims := map[string]any{}
			for k, v := range a.Claims {
				claims[k] = v
			}
			claims["sub"], claims["user_id"] = a.UID, a.UID
			if _, ok := claims["firebase"]; !ok {
				claims["firebase"] = map[string]any{"sign_in_provider": "custom", "identities": map[string]any{}}
			}
			who = identity.NewUser(a.UID, normalizeClaims(claims))
		default:
			return who, errors.New(`as must be {"uid": "..."} or {"anonymous": true}`)
		}
	}
	if who.IsAdmin() {
		return who, errors.New("the request ran as admin, which bypasses rules: re-run it as a user")
	}
	return who, nil
}

// rerunWith decides a recorded request again through its service's
// service.Rerunner.
func (s *Studio) rerunWith(w http.ResponseWriter, r *http.Request, rr service.Rerunner, ev event.Event, who identity.Identity, text string) {
	x, err := rr.Rerun(r.Context(), service.RerunRequest{Event: ev, Later: s.sb.Events().Since(ev.Seq, 0), As: event.IdentityOf(who), Rules: text})
	var re *service.RulesError
	var cannot *service.ErrRerun
	switch {
	case errors.As(err, &re):
		rep := rulesReport{File: re.File, Source: text, Diagnostics: diagsOf(source.NewFile(re.File, text), re.Diags), Lint: []diag{}}
		if lr, ok := s.liveService(ev.Service); ok {
			rep = checkRules(lr, re.File, text)
		}
		writeJSON(w, http.StatusUnprocessableEntity, rerunResult{Rules: &rep, Reason: "the edited rules do not compile"})
		return
	case errors.As(err, &cannot):
		fail(w, http.StatusBadRequest, cannot.Msg)
		return
	case err != nil:
		fail(w, http.StatusBadRequest, "the request cannot be re-run: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rerunResult{Verdict: x.Verdict, Reason: x.Reason, Rule: x.Rule, Trace: x.Trace, Decision: x.Decision,
		Explanation: x.Explanation, Identity: event.IdentityOf(who), Notes: x.Notes})
}

func normalizeClaims(m map[string]any) map[string]any {
	for k, v := range m {
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			m[k] = int64(f)
		}
	}
	return m
}

func identityOfEvent(id event.Identity) (identity.Identity, error) {
	switch id.Lens {
	case event.LensAdmin:
		return identity.AdminIdentity(), nil
	case event.LensUser:
		return identity.NewUser(id.UID, id.Token), nil
	case event.LensUnauthenticated, "":
		return identity.Anonymous(), nil
	}
	return identity.Identity{}, fmt.Errorf("unknown lens %q", id.Lens)
}

// verdictCounts counts, from the event history, the verdicts per service
// and per deciding rule (the Home and Traffic pages); per-expression
// coverage is counted by the engines (rules).
type verdictCounts struct{ bus *event.Bus }

func newVerdictCounts(bus *event.Bus) *verdictCounts { return &verdictCounts{bus: bus} }

// ruleCount is allows/denies of one rule.
type ruleCount struct {
	Service   string `json:"service"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	MatchPath string `json:"matchPath"`
	Allow     int    `json:"allow"`
	Deny      int    `json:"deny"`
}

func (c *verdictCounts) counts() map[string]any {
	byService := map[string]map[string]int{}
	rules := map[string]*ruleCount{}
	for _, e := range c.bus.History() {
		if e.Request == nil || e.Actor.Kind == event.ActorStudio {
			continue
		}
		m := byService[e.Service]
		if m == nil {
			m = map[string]int{}
			byService[e.Service] = m
		}
		m[string(e.Request.Verdict)]++
		m["total"]++
		if rl := e.Request.Rule; rl != nil {
			k := fmt.Sprintf("%s:%d:%d", e.Service, rl.Line, rl.Column)
			rc := rules[k]
			if rc == nil {
				rc = &ruleCount{Service: e.Service, Line: rl.Line, Column: rl.Column, MatchPath: rl.MatchPath}
				rules[k] = rc
			}
			switch e.Request.Verdict {
			case event.Allow:
				rc.Allow++
			case event.Deny:
				rc.Deny++
			}
		}
	}
	list := make([]*ruleCount, 0, len(rules))
	for _, rc := range rules {
		list = append(list, rc)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Service != list[j].Service {
			return list[i].Service < list[j].Service
		}
		if list[i].Line != list[j].Line {
			return list[i].Line < list[j].Line
		}
		return list[i].Column < list[j].Column
	})
	return map[string]any{"byService": byService, "rules": list}
}
