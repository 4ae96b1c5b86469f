package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// What every Replayer and Rerunner reads of a recorded event the same
// way, so that each service's replay and the Studio's re-run agree on who
// asked and how a new decision reads.

// LinkWindow bounds how far after a request a replay looks for the
// changes it made (its commits, mutations): the engine emits them right
// after the request, and other services' events interleave only by a few.
const LinkWindow = 256

// SessionError is a recorded session a Replayer cannot read: an event or
// state that is not what its format says. Path says where, in the terms
// of a capture fixture ("fixture.events[3].path").
type SessionError struct {
	Path string
	Msg  string
}

func (e *SessionError) Error() string {
	if e.Path == "" {
		return "invalid session: " + e.Msg
	}
	return "invalid session: " + e.Path + " " + e.Msg
}

// Bypassed reports whether a recorded event ran with admin rights (the
// admin lens, an admin origin, or a request the rules did not judge):
// the rules did not decide it, so a replay does not re-decide it.
func Bypassed(ev *event.Event) bool {
	return ev.Identity.Lens == event.LensAdmin || ev.Identity.Admin || ev.Origin == event.OriginAdmin ||
		(ev.Request != nil && ev.Verdict == event.Bypassed)
}

// RulesDecided reports whether a recorded event is a client request the
// rules decided (allowed, denied, or found unsupported): one a replay
// re-decides. Admin requests (Bypassed) and requests that failed besides
// the rules are not.
func RulesDecided(ev *event.Event) bool {
	if ev.Kind != event.KindRequest || Bypassed(ev) {
		return false
	}
	switch ev.Verdict {
	case event.Allow, event.Deny, event.Unsupported:
		return true
	}
	return false
}

// Who is the identity a recorded event decided as.
func Who(ev *event.Event) identity.Identity {
	switch ev.Identity.Lens {
	case event.LensAdmin:
		return identity.Identity{Kind: identity.Admin}
	case event.LensUser:
		return identity.Identity{Kind: identity.User, UID: ev.Identity.UID, Token: ev.Identity.Token}
	}
	return identity.Identity{Kind: identity.Unauthenticated}
}

// Explain renders a request event's decision on one line, as a
// divergence explains its new verdict: the reason, the deciding rule,
// then the failing sub-expressions (the error's message when the event
// has none of them).
func Explain(ev *event.Event) string {
	r := ev.Request
	if r == nil {
		return ""
	}
	var parts []string
	if r.Decision != nil && r.Decision.Reason != "" {
		parts = append(parts, r.Decision.Reason)
	}
	if r.Rule != nil && r.Rule.Condition != "" {
		parts = append(parts, fmt.Sprintf("rule %s at line %d", r.Rule.Condition, r.Rule.Line))
	}
	if r.Decision != nil {
		var fails []string
		for _, s := range r.Decision.Failing {
			t := s.Text
			if s.Error != "" {
				t += " errored: " + s.Error
			} else if s.Value != "" {
				t += " is " + s.Value
			}
			fails = append(fails, t)
		}
		if len(fails) > 0 {
			parts = append(parts, "failing: "+strings.Join(fails, "; "))
		}
	}
	if len(parts) == 0 && ev.Err != nil {
		parts = append(parts, ev.Err.Message)
	}
	return strings.Join(parts, "; ")
}

// ExplainDecision is Explain of a decision that is not an event's: the
// rule and decision a service's rules explanation renders to.
func ExplainDecision(rule *event.Rule, d *event.Explanation) string {
	return Explain(&event.Event{Request: &event.Request{Rule: rule, Decision: d}})
}

// UnionKeys is every key of a or b, sorted: the order in which a replay
// diffs two keyed states (the replayed one against the recorded one).
func UnionKeys[A, B any](a map[string]A, b map[string]B) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, dup := a[k]; !dup {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// SameJSON reports whether a and b encode to the same JSON: how a replay
// compares a replayed value with a recorded one whose numbers and maps
// came through a JSON round trip.
func SameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
