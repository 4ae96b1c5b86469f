package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

type simulateRulesIn struct {
	Source    string           `json:"source" jsonschema:"firestore.rules source"`
	TestCases []map[string]any `json:"testCases" jsonschema:"cases: {description, expectation ALLOW|DENY, method get|list|create|update|delete, path, auth ({uid, token}|null), data, resource, functionMocks, requestTime, query}"`
}

type lintRulesIn struct {
	Source string `json:"source" jsonschema:"firestore.rules source"`
}

type stdlibListIn struct {
	Service string `json:"service,omitempty" jsonschema:"firestore (default) or storage"`
}

type stdlibGetIn struct {
	Service string `json:"service,omitempty" jsonschema:"firestore (default) or storage"`
	Key     string `json:"key" jsonschema:"entry key from the list, e.g. string.matches or math.abs"`
}

type fsStdlibGetIn struct {
	Key string `json:"key" jsonschema:"entry key from firestore_rules_stdlib_list, e.g. string.matches"`
}

type rtdbAccessIn struct {
	Operation string `json:"operation" jsonschema:"read, write, or validate (a write whose result reports the .validate outcome)"`
	Path      string `json:"path" jsonschema:"database path, e.g. /users/alice"`
	Auth      *Auth  `json:"auth,omitempty" jsonschema:"auth: {uid, token} or null for signed out"`
	NewData   any    `json:"newData,omitempty" jsonschema:"the value a write sets at path (null deletes)"`
	Rules     string `json:"rules,omitempty" jsonschema:"database.rules.json to use instead of the sandbox's loaded RTDB rules"`
	Data      any    `json:"data,omitempty" jsonschema:"the database before the request, instead of the sandbox's RTDB data"`
}

type explainIn struct {
	EventID string `json:"eventId,omitempty" jsonschema:"id of the denied operation event (from firestore_simulator_events); absent = the most recent denial"`
}

type inspectIn struct {
	RecentEventLimit int `json:"recentEventLimit,omitempty" jsonschema:"how many recent requests and denials to include (default 10, at most 200)"`
}

func (s *Server) addRulesTools() {
	addTool(s, "firestore_simulate_rules", "Run Security Rules test cases locally (Rules Test API conventions) and report each verdict with its explanation.",
		func(ctx context.Context, in *simulateRulesIn, raw []byte) *result {
			parsed, err := fsrules.ParseInput(raw)
			if err != nil {
				return invalid("%v", err)
			}
			if strings.TrimSpace(in.Source) == "" {
				return failure("PARSE_FAILED", "Empty rules source", true, "pass the firestore.rules text as source")
			}
			rs, diags := fsrules.Compile(source.NewFile("firestore.rules", in.Source))
			if rs == nil {
				r := failure("PARSE_FAILED", fmt.Sprintf("Failed to parse rules source (%d error(s))", countErrors(diags)), true, "fix the diagnostics and call again")
				r.data = map[string]any{"diagnostics": diagnostics(diags)}
				return r
			}
			rep, err := rs.Simulate(parsed.TestCases, s.sb.Now())
			if err != nil {
				return invalid("%v", err)
			}
			total := len(rep.Results)
			r := okResult(fmt.Sprintf("%d/%d test cases passed", rep.Passed, total), rep)
			r.ok = rep.Failed == 0
			return r
		})

	addTool(s, "firestore_lint_rules", "Lint Firestore rules: production compile limits, runtime budget, security holes and common agent mistakes. ok is true when there is no error-severity diagnostic.",
		func(ctx context.Context, in *lintRulesIn, _ []byte) *result {
			res := lint.Lint(source.NewFile("firestore.rules", in.Source), lint.Options{Service: lint.Firestore})
			d := diagnostics(res.Diagnostics)
			errs := countErrors(res.Diagnostics)
			r := okResult(fmt.Sprintf("%d error(s), %d diagnostic(s) in all", errs, len(d)), map[string]any{"diagnostics": d, "metrics": res.Metrics, "parseFailed": res.ParseFailed})
			r.ok = errs == 0 && !res.ParseFailed
			return r
		})

	listFn := func(service string) *result {
		svc, bad := stdlibService(service)
		if bad != nil {
			return bad
		}
		entries := stdlibFor(svc)
		out := make([]map[string]string, 0, len(entries))
		for _, e := range entries {
			out = append(out, map[string]string{"key": e.Key, "signature": e.Signature, "summary": e.Summary})
		}
		return okResult(fmt.Sprintf("%d %s rules standard library entries", len(out), svc), map[string]any{"service": svc, "entries": out})
	}
	getFn := func(service, key string) *result {
		svc, bad := stdlibService(service)
		if bad != nil {
			return bad
		}
		for _, e := range stdlibFor(svc) {
			if e.Key == key {
				return okResult(e.Signature+": "+e.Summary, e)
			}
		}
		return failure("UNKNOWN_KEY", fmt.Sprintf("no %s standard library entry %q", svc, key), true, "list the keys with rules_stdlib_list"+closest(key, svc))
	}
	addTool(s, "rules_stdlib_list", "List the Security Rules standard library (types, methods, namespaces, functions) of a service.",
		func(ctx context.Context, in *stdlibListIn, _ []byte) *result { return listFn(in.Service) })
	addTool(s, "rules_stdlib_get", "Describe one Security Rules standard library entry: signature, behaviour, example.",
		func(ctx context.Context, in *stdlibGetIn, _ []byte) *result { return getFn(in.Service, in.Key) })
	addTool(s, "firestore_rules_stdlib_list", "List the Firestore Security Rules standard library.",
		func(ctx context.Context, _ *noArgs, _ []byte) *result { return listFn("firestore") })
	addTool(s, "firestore_rules_stdlib_get", "Describe one Firestore Security Rules standard library entry.",
		func(ctx context.Context, in *fsStdlibGetIn, _ []byte) *result { return getFn("firestore", in.Key) })

	addTool(s, "rtdb_simulate_access", "Judge a Realtime Database read or write with the RTDB rules (the sandbox's loaded ones, or rules given here) and explain the decision.",
		func(ctx context.Context, in *rtdbAccessIn, raw []byte) *result { return s.rtdbAccess(in, raw) })

	addTool(s, "explain_denial", "Explain a denied request: the deciding rule (line, match path, condition), the sub-expressions that failed, and a suggested fix. Takes an event id, or explains the most recent denial.",
		func(ctx context.Context, in *explainIn, _ []byte) *result { return s.explain(in.EventID) })

	addTool(s, "sandbox_inspect", "Overview of the sandbox: the loaded rules (size, lint counts), documents per root collection, recent requests and denials.",
		func(ctx context.Context, in *inspectIn, _ []byte) *result {
			limit := in.RecentEventLimit
			if limit == 0 {
				limit = 10
			}
			if limit < 0 || limit > 200 {
				return invalid("recentEventLimit: want 1 to 200, got %d", limit)
			}
			return s.inspect(limit)
		})
}

func stdlibService(s string) (string, *result) {
	switch s {
	case "", "firestore", "cloud.firestore":
		return "firestore", nil
	case "storage", "firebase.storage":
		return "storage", nil
	}
	return "", invalid("service: want firestore or storage, got %q", s)
}

func closest(key, svc string) string {
	for _, e := range stdlibFor(svc) {
		if strings.HasSuffix(e.Key, "."+key) || strings.EqualFold(e.Key, key) {
			return "; did you mean " + e.Key + "?"
		}
	}
	return ""
}

func (s *Server) rtdbAccess(in *rtdbAccessIn, raw []byte) *result {
	var op rtdb.Operation
	switch in.Operation {
	case "read":
		op = rtdb.Read
	case "write", "validate":
		op = rtdb.Write
	default:
		return invalid("operation: want read, write or validate, got %q", in.Operation)
	}
	rules, data := in.Rules, in.Data
	if rules == "" && s.opts.RTDB != nil {
		var loaded any
		rules, loaded = s.opts.RTDB()
		if in.Data == nil {
			data = loaded
		}
	}
	if strings.TrimSpace(rules) == "" {
		return failure("NO_ACTIVE_RULES", "no Realtime Database rules are loaded in this sandbox", true, "pass database.rules.json as rules, or start pyric with database.rules.json")
	}
	rs, diags := rtdb.Compile(source.NewFile("database.rules.json", rules))
	if rs == nil {
		r := failure("INVALID_RULES", fmt.Sprintf("the RTDB rules do not compile (%d error(s))", countErrors(diags)), true, "fix the diagnostics")
		r.data = map[string]any{"diagnostics": diagnostics(diags)}
		return r
	}
	// newData and data keep exact numbers: decode them again from raw.
	var exact struct {
		NewData any `json:"newData"`
		Data    any `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	_ = dec.Decode(&exact)
	if in.Data != nil {
		data = exact.Data
	}
	req := rtdb.Request{Operation: op, Path: in.Path, Data: data, NewData: exact.NewData, Now: s.sb.Now(), Trace: true}
	if in.Auth != nil {
		req.Auth = &rtdb.Auth{UID: in.Auth.UID, Token: in.Auth.Token}
		if p, ok := in.Auth.Token["firebase"].(map[string]any); ok {
			req.Auth.Provider, _ = p["sign_in_provider"].(string)
		}
	}
	dec2, err := rs.Evaluate(req)
	if err != nil {
		return invalid("%v", err)
	}
	out := map[string]any{"allowed": dec2.Allowed, "rules": dec2.Rules, "notes": dec2.Notes, "pathVariableBindings": dec2.Bindings}
	if dec2.Deciding >= 0 && dec2.Deciding < len(dec2.Rules) {
		r := dec2.Rules[dec2.Deciding]
		out["matchedPath"], out["matchedRule"] = r.MatchPath, r.Condition
	}
	if len(dec2.Notes) > 0 {
		out["reason"] = strings.Join(dec2.Notes, " ")
	}
	verdict := "DENIED"
	if dec2.Allowed {
		verdict = "ALLOWED"
	}
	r := okResult(fmt.Sprintf("%s %s %s", verdict, in.Operation, in.Path), out)
	r.ok = dec2.Allowed
	return r
}

func (s *Server) explain(id string) *result {
	hist := s.history()
	var ev *event.Event
	isDenial := func(e *event.Event) bool {
		v := verdictOf(e)
		return v == event.Deny || v == event.Unsupported
	}
	for i := len(hist) - 1; i >= 0; i-- {
		e := &hist[i]
		if (id != "" && e.ID == id) || (id == "" && isDenial(e)) {
			ev = e
			break
		}
	}
	if ev == nil {
		if id != "" {
			return failure("EVENT_NOT_FOUND", fmt.Sprintf("no event %q in the sandbox history (it keeps the most recent events only)", id), true, "list recent events with firestore_simulator_events")
		}
		return failure("NO_DENIAL", "no denied request in the sandbox history", true, "make the request that fails first")
	}
	if !isDenial(ev) {
		return failure("NOT_A_DENIAL", fmt.Sprintf("event %s is a %s event (verdict %q), not a denied request", ev.ID, ev.Kind, verdictOf(ev)), true, "pass the id of a request event whose verdict is deny")
	}
	r := ev.Request
	out := map[string]any{"eventId": ev.ID, "service": ev.Service, "method": ev.Method, "path": ev.Path, "identity": ev.Identity, "verdict": r.Verdict}
	var failingText []string
	if d := r.Decision; d != nil {
		out["reason"] = d.Reason
		out["notes"] = d.Notes
		out["evaluated"] = d.Evaluated
		for _, st := range d.Failing {
			if st.Error != "" {
				failingText = append(failingText, fmt.Sprintf("%s → error: %s", st.Text, st.Error))
			} else {
				failingText = append(failingText, fmt.Sprintf("%s → %s", st.Text, st.Value))
			}
		}
	}
	if failingText == nil {
		failingText = []string{}
	}
	out["failingExpressions"] = failingText
	if r.Rule != nil {
		out["decidingRule"] = r.Rule
	}
	fix := suggestFix(fixInfoOfEvent(r), ev.Method, ev.Path, ev.Identity.Lens == event.LensUser)
	out["suggestedFix"] = fix
	summary := fmt.Sprintf("%s %s denied", ev.Method, ev.Path)
	if r.Rule != nil {
		summary += fmt.Sprintf(" by the rule at line %d (%s)", r.Rule.Line, r.Rule.Condition)
	}
	return okResult(summary+"; fix: "+fix, out)
}

func (s *Server) inspect(limit int) *result {
	eng, err := s.engine()
	if err != nil {
		return engineFailure(err, "inspect")
	}
	out := map[string]any{}
	rulesInfo := map[string]any{"loaded": false}
	if g, ok := eng.Rules().(*firestore.RulesGate); ok && g != nil {
		f := g.Ruleset().File()
		res := lint.Lint(f, lint.Options{Service: lint.Firestore})
		errs := countErrors(res.Diagnostics)
		rulesInfo = map[string]any{"loaded": true, "source": f.Text, "sourceBytes": len(f.Text), "lintErrors": errs, "lintWarnings": len(res.Diagnostics) - errs}
	}
	out["rules"] = rulesInfo
	counts := map[string]int{}
	total := 0
	prefix := s.dbName().Documents() + "/"
	for _, d := range eng.Dump(s.dbName()) {
		rel := strings.TrimPrefix(d.Name, prefix)
		root, _, _ := strings.Cut(rel, "/")
		counts[root]++
		total++
	}
	out["documentsByCollection"] = counts
	out["documentCount"] = total
	var requests, denials []map[string]any
	hist := s.history()
	for i := len(hist) - 1; i >= 0 && (len(requests) < limit || len(denials) < limit); i-- {
		e := hist[i]
		v := verdictOf(&e)
		if v == "" {
			continue
		}
		row := map[string]any{"id": e.ID, "at": e.At.UTC().Format(time.RFC3339Nano), "service": e.Service, "method": e.Method, "path": e.Path,
			"verdict": v, "identity": e.Identity, "actor": e.Actor}
		if d := e.Request.Decision; d != nil && d.Reason != "" {
			row["reason"] = d.Reason
		}
		if len(requests) < limit {
			requests = append(requests, row)
		}
		if v == event.Deny && len(denials) < limit {
			denials = append(denials, row)
		}
	}
	if requests == nil {
		requests = []map[string]any{}
	}
	if denials == nil {
		denials = []map[string]any{}
	}
	out["recentRequests"], out["recentDenials"] = requests, denials
	cols := make([]string, 0, len(counts))
	for c := range counts {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	return okResult(fmt.Sprintf("%d document(s) in %d root collection(s); rules loaded: %v; %d recent denial(s)", total, len(cols), rulesInfo["loaded"], len(denials)), out)
}

// simCase is kept for documentation of the case shape in descriptions.
var _ = sim.Allow
