package mcp

import (
	"fmt"
	"regexp"
	"strings"

	fs "github.com/pyric/pyric/firestore"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/sim"
)

// debugMessages renders a rules decision the way the simulator's
// debugMessages read: notes first, one line per evaluated rule, the
// deciding rule with its line and condition, the sub-expressions that
// failed, then the verdict.
func debugMessages(d fs.Decision) []string {
	fd, _ := d.Explanation.(*fsrules.Decision)
	var out []string
	if fd == nil {
		if d.Reason != "" {
			out = append(out, d.Reason)
		}
		return append(out, "Simulated: "+strings.ToUpper(d.Verdict.String()))
	}
	out = append(out, fd.Notes...)
	for i, r := range fd.Trace {
		line := fmt.Sprintf("Rule #%d (%s)", i, strings.Join(r.Operations, ","))
		switch r.Verdict {
		case sim.VerdictAllow:
			line += " → ALLOW"
		case sim.VerdictDeny:
			line += " → deny"
		case sim.VerdictUnsupported:
			line += " → unsupported: " + r.Message
		case sim.VerdictError:
			line += " → error: " + r.Message
		}
		if r.Line > 0 {
			line += fmt.Sprintf(" at line %d", r.Line)
		}
		out = append(out, line)
	}
	if r := decidingRule(fd); r != nil && fd.Outcome != sim.Allow {
		cond := r.Condition
		if cond == "" {
			cond = "(no condition)"
		}
		out = append(out, fmt.Sprintf("Deciding rule: line %d, match %s, allow %s: if %s", r.Line, r.MatchPath, strings.Join(r.Operations, ", "), cond))
		for _, e := range failing(r) {
			out = append(out, "  failed: "+e)
		}
	}
	if d.Reason != "" && fd.Outcome != sim.Allow {
		out = append(out, "Emulator message: "+d.Reason)
	}
	return append(out, "Simulated: "+string(fd.Outcome))
}

// decidingRule is the rule that decided: the allowing one, else the first
// that denied or erred, else the last evaluated.
func decidingRule(fd *fsrules.Decision) *sim.Rule {
	if fd.Deciding >= 0 && fd.Deciding < len(fd.Trace) {
		return &fd.Trace[fd.Deciding]
	}
	for i := range fd.Trace {
		if v := fd.Trace[i].Verdict; v == sim.VerdictDeny || v == sim.VerdictError {
			return &fd.Trace[i]
		}
	}
	if n := len(fd.Trace); n > 0 {
		return &fd.Trace[n-1]
	}
	return nil
}

// failing lists the evaluated sub-expressions that were false or errors,
// innermost last, as "source → value".
func failing(r *sim.Rule) []string {
	var out []string
	for _, e := range r.Expressions {
		if e.Skipped {
			continue
		}
		switch {
		case e.Error != "":
			out = append(out, fmt.Sprintf("%s → error: %s", e.Source, e.Error))
		case e.Value == "false":
			out = append(out, fmt.Sprintf("%s → false", e.Source))
		}
	}
	if len(out) == 0 && r.Message != "" {
		out = append(out, r.Message)
	}
	return out
}

var undefinedProp = regexp.MustCompile(`Property (\S+) is undefined on object`)

// suggestFix proposes the smallest change that would let the request
// through, from what the trace says went wrong.
func suggestFix(fd *fsrules.Decision, method, path string, authed bool) string {
	if fd == nil {
		return "load firestore.rules (firestore_simulator_create) — without rules every client request is denied"
	}
	if len(fd.Trace) == 0 {
		return fmt.Sprintf("no allow statement covers %s on /%s: add a match block for this path with `allow %s: if <condition>;`", method, path, method)
	}
	r := decidingRule(fd)
	text := r.Message + " " + r.Condition
	for _, e := range r.Expressions {
		text += " " + e.Error + " " + e.Source
	}
	if m := undefinedProp.FindStringSubmatch(text); m != nil {
		return fmt.Sprintf("the rule at line %d reads %s, which the document or request does not have: write that field, or guard it in the rule (e.g. `'%s' in resource.data && …`)", r.Line, m[1], m[1])
	}
	if !authed && strings.Contains(text, "request.auth") {
		return fmt.Sprintf("the request is signed out (request.auth is null) and the rule at line %d needs a signed-in user: act as a user ({uid, token}) or allow unauthenticated access deliberately", r.Line)
	}
	if strings.Contains(r.Condition, "request.auth.uid") {
		return fmt.Sprintf("the rule at line %d ties access to request.auth.uid: act as the user the rule expects (look at the path variables and the document's owner field), or change the rule if other users must be allowed", r.Line)
	}
	if strings.Contains(r.Condition, "request.resource.data") {
		return fmt.Sprintf("the data written fails the validation at line %d (%s): change the written fields to satisfy it, or relax the rule", r.Line, r.Condition)
	}
	return fmt.Sprintf("the condition at line %d (%s) is false for this request: change the request (identity, data) or the rule", r.Line, r.Condition)
}
