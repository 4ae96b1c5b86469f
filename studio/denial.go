package studio

import (
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/explain"
)

// denial is what the Studio adds to a denial of its own call in the app
// lens: the request's event (the page links the rules inspector to it)
// and the failing sub-expressions with their values.
type denial struct {
	Event       string   `json:"event"`
	Explanation []string `json:"explanation,omitempty"`
}

// denialSince finds the event of a denial the Studio's own call just
// received: the first deny of service made through the Studio after seq
// before. Engines emit a request's event before they return, so it is in
// the history when the call fails; nil when it is not (dropped, or the
// call failed otherwise).
func (s *Studio) denialSince(before uint64, service string) *denial {
	for _, e := range s.sb.Events().Since(before, 256) {
		if e.Kind == event.KindRequest && e.Service == service && e.Actor.Kind == event.ActorStudio && e.Request != nil && e.Request.Verdict == event.Deny {
			return &denial{Event: e.ID, Explanation: explain.Lines(e.Request.Decision, e.Request.Trace)}
		}
	}
	return nil
}

// recentDenial is the id of the newest denial of method on path the
// Studio made to service, among the last events ("" when none): the
// event of a denial the engine reported without a sequence number.
func (s *Studio) recentDenial(service, method, path string) string {
	bus := s.sb.Events()
	from := bus.Seq()
	from -= min(from, 256)
	evs := bus.Since(from, 256)
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.Kind == event.KindRequest && e.Service == service && e.Actor.Kind == event.ActorStudio && e.Request != nil &&
			e.Request.Verdict == event.Deny && e.Method == method && e.Path == path {
			return e.ID
		}
	}
	return ""
}
