package mcp

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/sim"
)

// debugMessages renders a rules decision the way the simulator's
// debugMessages read: notes first, one line per evaluated rule, the
// deciding rule with its line and condition, the sub-expressions that
// failed, then the verdict.
func debugMessages(d firestore.AuthzDecision) []string {
	fd, _ := d.Explanation.(*fsrules.Decision)
	var out []string
	if fd == nil {
		if d.Reason != "" {
			out = append(out, d.Reason)
		}
		return append(out, "Simulated: "+strings.ToUpper(string(d.Verdict)))
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

// fixInfo is what suggestFix reads of a denial, from an engine decision
// or from a request event.
type fixInfo struct {
	noRules   bool // no rules engine decided (no rules loaded)
	noMatch   bool // no allow statement was evaluated
	line      int
	condition string
	texts     []string // messages, failing sub-expressions and their errors
}

func fixInfoOf(fd *fsrules.Decision) fixInfo {
	if fd == nil {
		return fixInfo{noRules: true}
	}
	r := decidingRule(fd)
	if r == nil {
		return fixInfo{noMatch: true}
	}
	fi := fixInfo{line: r.Line, condition: r.Condition, texts: []string{r.Message}}
	for _, e := range r.Expressions {
		fi.texts = append(fi.texts, e.Error, e.Source)
	}
	return fi
}

func fixInfoOfEvent(r *event.Request) fixInfo {
	if r == nil || r.Decision == nil || (r.Rule == nil && len(r.Decision.Evaluated) == 0 && r.Decision.Reason == firestore.NoRulesReason) {
		return fixInfo{noRules: true}
	}
	if r.Rule == nil && len(r.Decision.Evaluated) == 0 {
		return fixInfo{noMatch: true}
	}
	fi := fixInfo{}
	if r.Rule != nil {
		fi.line, fi.condition = r.Rule.Line, r.Rule.Condition
	}
	for _, ev := range r.Decision.Evaluated {
		if r.Rule != nil && ev.Line == r.Rule.Line {
			fi.texts = append(fi.texts, ev.Message)
		}
	}
	for _, st := range append(append([]event.Step{}, r.Decision.Failing...), r.Trace...) {
		fi.texts = append(fi.texts, st.Error, st.Text)
	}
	return fi
}

// suggestFix proposes the smallest change that would let the request
// through, from what the explanation says went wrong.
func suggestFix(fi fixInfo, method, path string, authed bool) string {
	if fi.noRules {
		return "no Firestore rules are loaded, so every client request is denied: load them (firestore_simulator_create, or firestore.rules next to pyric serve)"
	}
	if fi.noMatch {
		return fmt.Sprintf("no allow statement covers %s on /%s: add a match block for this path with `allow %s: if <condition>;`", method, path, method)
	}
	text := fi.condition + " " + strings.Join(fi.texts, " ")
	if m := undefinedProp.FindStringSubmatch(text); m != nil {
		return fmt.Sprintf("the rule at line %d reads %s, which the document or request does not have: write that field, or guard it in the rule (e.g. `'%s' in resource.data && …`)", fi.line, m[1], m[1])
	}
	if !authed && strings.Contains(text, "request.auth") {
		return fmt.Sprintf("the request is signed out (request.auth is null) and the rule at line %d needs a signed-in user: act as a user ({uid, token}) or allow unauthenticated access deliberately", fi.line)
	}
	if strings.Contains(fi.condition, "request.auth.uid") {
		return fmt.Sprintf("the rule at line %d ties access to request.auth.uid: act as the user the rule expects (look at the path variables and the document's owner field), or change the rule if other users must be allowed", fi.line)
	}
	if strings.Contains(fi.condition, "request.resource.data") {
		return fmt.Sprintf("the data written fails the validation at line %d (%s): change the written fields to satisfy it, or relax the rule", fi.line, fi.condition)
	}
	return fmt.Sprintf("the condition at line %d (%s) is false for this request: change the request (identity, data) or the rule", fi.line, fi.condition)
}
