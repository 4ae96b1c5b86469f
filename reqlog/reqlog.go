// Package reqlog prints pyric serve's per-request log: one line for every
// denied request, with the service, method, path, caller, deciding rule
// and the failing sub-expressions with their values, as text for people
// or JSON lines for machines (--log-format json). It subscribes to the
// event bus, so it never slows an engine: if it falls behind it says how
// many events it missed.
package reqlog

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/explain"
)

// Options configure Run.
type Options struct {
	// JSON writes one JSON object per line instead of text.
	JSON bool
	// Quiet writes nothing (the serve --quiet flag).
	Quiet bool
	// Buffer is the subscription's buffer (default 1024).
	Buffer int
}

// Line is the JSON form of one log line.
type Line struct {
	Level    string   `json:"level"` // "deny", or "warn" for a gap
	Event    string   `json:"event,omitempty"`
	Service  string   `json:"service,omitempty"`
	Method   string   `json:"method,omitempty"`
	Path     string   `json:"path,omitempty"`
	UID      string   `json:"uid,omitempty"`
	Lens     string   `json:"lens,omitempty"`
	Via      string   `json:"via,omitempty"` // the tool that acted, when not the app
	Reason   string   `json:"reason,omitempty"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
	Failing  []string `json:"failing,omitempty"`
	Missed   uint64   `json:"missed,omitempty"`
	Message  string   `json:"message"`
	Verdict  string   `json:"verdict,omitempty"`
	Duration float64  `json:"durationMs,omitempty"`
}

// Start subscribes to bus now (so no later event is missed) and writes a
// line for each denied request from its own goroutine; stop ends it and
// waits for it.
func Start(bus *event.Bus, w io.Writer, opts Options) (stop func()) {
	if opts.Quiet {
		return func() {}
	}
	if opts.Buffer < 2 {
		opts.Buffer = 1024
	}
	// Only what gets a line is delivered: every other event (most of
	// them, an allowed request's and its commit's) would wake this
	// goroutine for nothing.
	sub := bus.SubscribeWhere(opts.Buffer, logged)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer sub.Close()
		for {
			select {
			case <-quit:
				return
			case e, ok := <-sub.Events():
				if !ok {
					return
				}
				if l, ok := Format(&e); ok {
					write(w, l, opts.JSON)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// logged reports whether a request event gets a log line: a denied or
// unsupported request (a gap marker gets one too; the bus makes those).
func logged(e *event.Event) bool {
	return e.Kind == event.KindRequest && e.Request != nil && (e.Verdict == event.Deny || e.Verdict == event.Unsupported)
}

// Format returns the log line for an event, if it gets one: denied and
// unsupported requests, and gap markers.
func Format(e *event.Event) (Line, bool) {
	if e.Kind == event.KindGap && e.Gap != nil {
		return Line{Level: "warn", Missed: e.Missed, Message: fmt.Sprintf("the log fell behind and missed %d events (see the Studio's Traffic)", e.Missed)}, true
	}
	if !logged(e) {
		return Line{}, false
	}
	l := Line{Level: "deny", Event: e.ID, Service: e.Service, Method: e.Method, Path: e.Path, UID: e.Identity.UID, Lens: string(e.Identity.Lens),
		Verdict: string(e.Verdict), Duration: e.DurationMs}
	if e.Actor.Kind != "" && e.Actor.Kind != event.ActorApp {
		l.Via = string(e.Actor.Kind)
	}
	if r := e.Rule; r != nil {
		l.Line, l.Column = r.Line, r.Column
	}
	if d := e.Decision; d != nil {
		l.Reason = d.Reason
		l.Failing = explain.Lines(d, e.Trace)
	}
	who := "unauthenticated"
	if l.UID != "" {
		who = "uid=" + l.UID
	}
	if l.Via != "" {
		who += " via " + l.Via
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s %s", strings.ToUpper(string(e.Verdict)), e.Service, e.Method, e.Path, who)
	if l.Line > 0 {
		fmt.Fprintf(&b, " rule L%d:%d", l.Line, l.Column)
	}
	switch {
	case len(l.Failing) > 0:
		b.WriteString(": " + strings.Join(l.Failing, "; "))
	case l.Reason != "":
		b.WriteString(": " + oneLine(l.Reason))
	}
	b.WriteString(" [" + e.ID + "]")
	l.Message = b.String()
	return l, true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func write(w io.Writer, l Line, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(l)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "pyric: %s\n", l.Message)
}
