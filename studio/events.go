package studio

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/explain"
)

// filter selects events for /api/events and the stream.
type filter struct {
	service, verdict, uid, path, kind string
	// cause keeps only what the event of this id caused: the function
	// runs a write caused (invocations' causeEventId) and, when it is an
	// invocation, the writes the function made (their actor.invocation
	// is invocation), so following cause walks write → trigger → writes.
	cause      string
	invocation string
	studio     bool // include the Studio's own requests
}

// resolveCause completes a cause filter: when the cause is an
// invocation's event, its writes are what it caused.
func (s *Studio) resolveCause(f *filter) {
	if f.cause == "" {
		return
	}
	seq, err := parseSeq(f.cause)
	if err != nil || seq == 0 {
		return
	}
	if got := s.sb.Events().Since(seq-1, 1); len(got) == 1 && got[0].Seq == seq && got[0].Invocation != nil {
		f.invocation = got[0].Invocation.InvocationID
	}
}

func parseFilter(r *http.Request) (filter, error) {
	q := r.URL.Query()
	f := filter{service: q.Get("service"), verdict: q.Get("verdict"), uid: q.Get("uid"), path: q.Get("path"), kind: q.Get("kind"), cause: q.Get("cause")}
	switch v := q.Get("studio"); v {
	case "", "0", "false":
	case "1", "true":
		f.studio = true
	default:
		return f, fmt.Errorf("studio must be true or false, not %q", v)
	}
	switch event.Verdict(f.verdict) {
	case "", event.Allow, event.Deny, event.Bypassed, event.Unsupported, event.Error:
	default:
		return f, fmt.Errorf("verdict must be one of allow, deny, bypassed, unsupported, error, not %q", f.verdict)
	}
	return f, nil
}

// match reports whether e passes the filter. Gap markers always pass.
func (f filter) match(e *event.Event) bool {
	if e.Kind == event.KindGap {
		return true
	}
	if !f.studio && e.Actor.Kind == event.ActorStudio {
		return false
	}
	if f.service != "" && e.Service != f.service {
		return false
	}
	if f.kind != "" && string(e.Kind) != f.kind {
		return false
	}
	if f.verdict != "" && (e.Request == nil || string(e.Request.Verdict) != f.verdict) {
		return false
	}
	if f.cause != "" && (e.Invocation == nil || e.Invocation.CauseEventID != f.cause) && !f.madeBy(e) {
		return false
	}
	if f.uid != "" && e.Identity.UID != f.uid {
		return false
	}
	if f.path != "" && e.Path != f.path && !strings.HasPrefix(e.Path, strings.TrimSuffix(f.path, "/")+"/") {
		return false
	}
	return true
}

// madeBy reports whether e is a write of the filter's cause invocation.
func (f filter) madeBy(e *event.Event) bool {
	return f.invocation != "" && e.Actor.Invocation == f.invocation && (e.Kind == event.KindCommit || e.Kind == event.KindMutation)
}

// Limits of /api/events.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

func parseSeq(s string) (uint64, error) {
	s = strings.TrimPrefix(s, "evt-")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not an event id: %q (want evt-N or N)", s)
	}
	return n, nil
}

// eventsPage is the body of GET /api/events.
type eventsPage struct {
	Schema string        `json:"schema"`
	Events []event.Event `json:"events"`
	// Next is the cursor for the next page (after=Next): the last event
	// examined, matched or not.
	Next uint64 `json:"next"`
	// Latest is the bus's newest sequence number.
	Latest uint64 `json:"latest"`
	// Oldest is the oldest kept event's sequence number (0: none kept);
	// after < Oldest-1 means events were dropped from the history.
	Oldest uint64 `json:"oldest"`
}

func (s *Studio) events(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	s.resolveCause(&f)
	after, err := parseSeq(r.URL.Query().Get("after"))
	if err != nil {
		fail(w, http.StatusBadRequest, "after: "+err.Error())
		return
	}
	limit := defaultLimit
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxLimit {
			fail(w, http.StatusBadRequest, fmt.Sprintf("limit must be an integer from 1 to %d, not %q", maxLimit, l))
			return
		}
		limit = n
	}
	bus := s.sb.Events()
	page := eventsPage{Schema: event.Schema, Events: []event.Event{}, Next: after, Latest: bus.Seq()}
	if first := bus.Since(0, 1); len(first) > 0 {
		page.Oldest = first[0].Seq
	}
	// Scan in chunks so a selective filter never copies the whole history
	// at once, and stop at limit matches.
	for len(page.Events) < limit {
		chunk := bus.Since(page.Next, 512)
		if len(chunk) == 0 {
			break
		}
		for i := range chunk {
			page.Next = chunk[i].Seq
			if f.match(&chunk[i]) {
				page.Events = append(page.Events, chunk[i])
				if len(page.Events) == limit {
					break
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Studio) eventByID(w http.ResponseWriter, r *http.Request) {
	e, ok := s.findEvent(w, r.PathValue("id"))
	if !ok {
		return
	}
	out := map[string]any{"schema": event.Schema, "event": e}
	if e.Request != nil {
		// The failing sub-expressions as package explain renders them
		// everywhere (the client's error, the log line): the page shows
		// these lines and renders none itself.
		if x := explain.Lines(e.Request.Decision, e.Request.Trace); len(x) > 0 {
			out["explanation"] = x
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Studio) findEvent(w http.ResponseWriter, id string) (event.Event, bool) {
	seq, err := parseSeq(id)
	if err != nil || seq == 0 {
		fail(w, http.StatusBadRequest, "not an event id: "+quote(id))
		return event.Event{}, false
	}
	got := s.sb.Events().Since(seq-1, 1)
	if len(got) == 0 || got[0].Seq != seq {
		fail(w, http.StatusNotFound, "event "+id+" is not in the history (it may have been dropped: the history is bounded)")
		return event.Event{}, false
	}
	return got[0], true
}

// Stream tuning.
const (
	streamBuffer = 1024
	heartbeat    = 15 * time.Second
)

// stream serves Server-Sent Events: the kept events after Last-Event-ID
// (or ?after=), then live ones. Each message's data is one event in the
// typed schema with id evt-N; a subscriber that fell behind receives a gap
// event ({"kind":"gap","missed":N}) in place of the events it missed. The
// bus never waits for this handler: a slow client only loses events.
func (s *Studio) stream(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	s.resolveCause(&f)
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("after")
	}
	after, err := parseSeq(from)
	if err != nil {
		fail(w, http.StatusBadRequest, "Last-Event-ID: "+err.Error())
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "streaming unsupported by this connection")
		return
	}
	bus := s.sb.Events()
	sub := bus.Subscribe(streamBuffer)
	defer sub.Close()
	if from == "" {
		after = bus.Seq() // a fresh stream starts now
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\n\n")
	enc := sseEncoder{w: w}

	// Replay the history after the cursor; say how many were dropped from
	// the history if the cursor is older than it.
	last := after
	for {
		chunk := bus.Since(last, 512)
		if len(chunk) == 0 {
			break
		}
		if chunk[0].Seq > last+1 && last == after {
			enc.gap(chunk[0].Seq - last - 1)
		}
		for i := range chunk {
			last = chunk[i].Seq
			if f.match(&chunk[i]) {
				if err := enc.event(&chunk[i]); err != nil {
					return
				}
			}
		}
	}
	fl.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case e, ok := <-sub.Events():
			if !ok {
				return
			}
			if e.Kind != event.KindGap {
				if e.Seq <= last {
					continue // already replayed
				}
				last = e.Seq
			}
			if !f.match(&e) {
				continue
			}
			if err := enc.event(&e); err != nil {
				return
			}
			// Drain what is already queued before flushing once.
			for n := len(sub.Events()); n > 0; n-- {
				e, ok := <-sub.Events()
				if !ok {
					return
				}
				if e.Kind != event.KindGap {
					if e.Seq <= last {
						continue
					}
					last = e.Seq
				}
				if f.match(&e) {
					if err := enc.event(&e); err != nil {
						return
					}
				}
			}
			fl.Flush()
		}
	}
}

type sseEncoder struct {
	w   http.ResponseWriter
	buf []byte
}

func (s *sseEncoder) event(e *event.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	s.buf = s.buf[:0]
	if e.Kind != event.KindGap && e.ID != "" {
		s.buf = append(s.buf, "id: "...)
		s.buf = append(s.buf, e.ID...)
		s.buf = append(s.buf, '\n')
	}
	s.buf = append(s.buf, "data: "...)
	s.buf = append(s.buf, b...) // JSON has no raw newlines
	s.buf = append(s.buf, "\n\n"...)
	_, err = s.w.Write(s.buf)
	return err
}

func (s *sseEncoder) gap(missed uint64) {
	_ = s.event(&event.Event{Kind: event.KindGap, Gap: &event.Gap{Missed: missed}})
}
