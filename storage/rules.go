package storage

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/explain"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/coverage"
	"github.com/pyric/pyric/rules/live"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	srules "github.com/pyric/pyric/rules/storage"
)

// Rules are the engine's live storage.rules (rules/live): one scope, the
// rules every client request is decided by.
type Rules = live.Rules[*srules.Ruleset, *coverage.Coverage]

// CompileError is returned for storage.rules that do not compile; the
// previous rules stay live.
type CompileError = live.CompileError

func newRules(e *Engine) *Rules {
	return live.New(live.Options[*srules.Ruleset, *coverage.Coverage]{
		DefaultName: "storage.rules",
		Compile: func(f *source.File) (*srules.Ruleset, source.Diagnostics, bool) {
			rs, diags := srules.Compile(f)
			return rs, diags, rs != nil
		},
		NewCoverage: srules.NewCoverage,
		Changed: func() {
			if name, _, loaded := e.live.Base(); loaded {
				e.emitRulesLoaded(name)
			}
		},
	})
}

// LiveRules returns the engine's live rules: `pyric serve` hot-reloads
// them, the Studio reads their coverage.
func (e *Engine) LiveRules() *Rules { return e.live }

// SetRules compiles storage.rules source and, when it compiles, makes it
// the rules every client request is decided by. It returns every
// diagnostic (warnings included); on a compile error the previous rules
// stay live and the error is a *CompileError.
func (e *Engine) SetRules(name, text string) (source.Diagnostics, error) {
	return e.live.Set(name, text)
}

// Rules returns the live rules' file name and source, and whether any are
// loaded.
func (e *Engine) Rules() (name, text string, loaded bool) { return e.live.Base() }

// noRulesNote is the explanation of a denial without rules: loud, so
// nobody mistakes it for a rules verdict.
const noRulesNote = "no storage.rules are loaded: every client request is denied (admin requests bypass rules)"

// decision is a rules verdict on one request.
type decision struct {
	allowed bool
	// by says what decided: "admin", "token", "rules" or "no-rules".
	by     string
	d      *srules.Decision
	reason string
}

// decide asks the rules about one request. Admin bypasses them; a request
// carrying a valid download token for a get is granted as production
// grants it.
func (e *Engine) decide(who identity.Identity, method, bkt, path string, resource, incoming *Object) decision {
	if who.IsAdmin() {
		return decision{allowed: true, by: "admin", reason: "admin bypasses rules"}
	}
	lr := e.live.BaseRuleset()
	e.rulesMu.RLock()
	fs := e.firestore
	e.rulesMu.RUnlock()
	if lr == nil {
		return decision{by: "no-rules", reason: noRulesNote}
	}
	req := &srules.Request{
		Method: method, Bucket: bkt, Path: path, Time: e.env.Now(),
		Resource: resource.rules(), Firestore: fs, NoTrace: true,
	}
	if e.live.Counting() {
		req.Coverage = lr.Coverage("")
	}
	if method == srules.Create || method == srules.Update {
		req.Incoming = incoming.rules()
	}
	if who.Kind == identity.User {
		req.Auth = &srules.Auth{UID: who.UID, Token: who.Token}
	}
	d := lr.Compiled.Decide(req)
	if !d.Allowed() {
		// A denial is decided again with sub-expression traces so its
		// explanation is complete.
		req.NoTrace, req.Coverage = false, nil
		d = lr.Compiled.Decide(req)
	}
	return decision{allowed: d.Allowed(), by: "rules", d: d, reason: ReasonOf(d, method)}
}

// ReasonOf says in one line why the rules decided a request as they did
// (the explanation events and denials carry; verify uses it for a replay).
func ReasonOf(d *srules.Decision, method string) string {
	if d.Deciding >= 0 && d.Deciding < len(d.Trace) {
		r := d.Trace[d.Deciding]
		verb := "allowed"
		if d.Outcome != sim.Allow {
			verb = "denied"
		}
		s := fmt.Sprintf("%s by allow %s at L%d in match %s", verb, strings.Join(r.Operations, ", "), r.Line, r.MatchPath)
		if r.Message != "" {
			s += ": " + r.Message
		}
		return s
	}
	s := "no allow rule grants '" + method + "'"
	if len(d.Notes) > 0 {
		s += ": " + strings.Join(d.Notes, "; ")
	}
	return s
}

// denied is the error a denied request returns.
func (dec decision) err() error {
	if dec.allowed {
		return nil
	}
	msg := "Permission denied. " + dec.reason
	if d := dec.d; d != nil {
		// Then why, as the Firestore denial says it: each failing
		// sub-expression with its values.
		exp := sim.Explain("storage", dec.reason, d.Trace, d.Deciding, d.Notes, d.Expressions, d.Lookups)
		for _, l := range explain.Lines(exp.Decision, exp.Trace) {
			msg += "\n" + l
		}
	}
	return &Error{Code: PermissionDenied, Message: msg}
}
