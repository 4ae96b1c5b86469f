// Package capture records a pyric session as a verify fixture
// (schema pyric.verify.fixture.v1): the session's events and, per
// service, the rules source in force and the final state. A Recorder
// subscribes to the sandbox's event bus and appends to the fixture file
// shortly after every change what changed — the events, the records
// (documents) and service states they changed — rewriting it whole
// (temp file + rename) only at start and when the appended lines
// outgrow it, so the file on disk always loads and, after a kill, holds
// the session up to the last flush (the next Start keeps it beside the
// new one). Decode
// validates a fixture with precise errors, each service checking what it
// recorded (service.SessionChecker), so capture names no service;
// SaveNamed and AdminHandler
// keep a session as a named fixture to commit.
package capture

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// Schema is the fixture schema this package writes and reads.
const Schema = "pyric.verify.fixture.v1"

// Rules formats of the services.
const (
	FormatFirestore = "firestore.rules"
	FormatStorage   = "storage.rules"
	FormatDatabase  = "rtdb.rules.json"
)

// rulesFormat is the format of the rules of a service: the one it names
// (service.RulesFormatter), else its rules file's name
// (service.LiveRules.RulesFileName); "" for a service without rules or
// none at all.
func rulesFormat(s service.Service) string {
	if f, ok := s.(service.RulesFormatter); ok {
		return f.RulesFormat()
	}
	if rl, ok := s.(service.LiveRules); ok {
		return rl.RulesFileName()
	}
	return ""
}

// Fixture is a captured session.
type Fixture struct {
	Schema      string                  `json:"schema"`
	Description string                  `json:"description,omitempty"`
	CreatedAt   string                  `json:"createdAt,omitempty"`
	CapturedBy  string                  `json:"capturedBy,omitempty"`
	Events      []event.Event           `json:"events"`
	Services    map[string]*ServiceData `json:"services"`
}

// ServiceData is one service's rules and final state.
type ServiceData struct {
	Rules *Rules `json:"rules,omitempty"`
	// State is the service's snapshot state (the sandbox snapshot's
	// per-service JSON; Firestore's is {"documents": {path: fields}}).
	State json.RawMessage `json:"state,omitempty"`
}

// Rules is a rules source as captured.
type Rules struct {
	Format string `json:"format"`
	Name   string `json:"name,omitempty"`
	Source string `json:"source,omitempty"`
	// JSON is the RTDB rules document (format rtdb.rules.json).
	JSON json.RawMessage `json:"json,omitempty"`
}

// Error is a fixture that does not follow the schema.
type Error struct {
	Path string // where in the fixture, e.g. fixture.events[3].kind
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "invalid fixture: " + e.Msg
	}
	return "invalid fixture: " + e.Path + " " + e.Msg
}

// ErrInvalid matches every *Error with errors.Is.
var ErrInvalid = errors.New("invalid fixture")

// Is reports ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

var validKinds = map[event.Kind]bool{event.KindRequest: true, event.KindCommit: true, event.KindListener: true,
	event.KindMutation: true, event.KindBoundary: true, event.KindInvocation: true}

var validVerdicts = map[event.Verdict]bool{event.Allow: true, event.Deny: true, event.Bypassed: true,
	event.Unsupported: true, event.Error: true}

// Services finds, by name, a service whose recorded data Decode checks
// (service.SessionChecker), or returns nil for a service it does not
// know. A sandbox's Service method is one; DecodeWith makes one of
// registrations.
type Services func(name string) service.Service

func (s Services) find(name string) service.Service {
	if s == nil {
		return nil
	}
	return s(name)
}

// Decode parses and validates a fixture; services check what they
// recorded (nil: only the checks every service shares, so a service
// whose commits are not records, like the Realtime Database's, is
// refused).
func Decode(data []byte, services Services) (*Fixture, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, &Error{Msg: "is empty"}
	}
	if data[0] != '{' {
		return nil, &Error{Msg: "must be a JSON object"}
	}
	if base, tail, ok := splitLog(data); ok && len(bytes.TrimSpace(tail)) > 0 {
		// A running session's file: the lines appended to it fold into
		// the fixture they describe.
		folded, err := foldLog(base, tail)
		if err != nil {
			return nil, err
		}
		data = folded
	}
	// A first pass into raw parts, so structural mistakes name the field.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Msg: "is not valid JSON: " + jsonErr(err, data)}
	}
	var schema string
	if s, ok := raw["schema"]; !ok || json.Unmarshal(s, &schema) != nil || schema != Schema {
		return nil, &Error{Path: "fixture.schema", Msg: fmt.Sprintf("must be %q", Schema)}
	}
	ev, ok := raw["events"]
	if !ok || len(ev) == 0 || ev[0] != '[' {
		return nil, &Error{Path: "fixture.events", Msg: "must be an array"}
	}
	var rawEvents []json.RawMessage
	if err := json.Unmarshal(ev, &rawEvents); err != nil {
		return nil, &Error{Path: "fixture.events", Msg: "must be an array: " + err.Error()}
	}
	f := &Fixture{Schema: schema, Events: make([]event.Event, 0, len(rawEvents)), Services: map[string]*ServiceData{}}
	for _, k := range []string{"description", "createdAt", "capturedBy"} {
		if v, ok := raw[k]; ok {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, &Error{Path: "fixture." + k, Msg: "must be a string"}
			}
			switch k {
			case "description":
				f.Description = s
			case "createdAt":
				f.CreatedAt = s
			default:
				f.CapturedBy = s
			}
		}
	}
	var lastSeq uint64
	for i, r := range rawEvents {
		at := fmt.Sprintf("fixture.events[%d]", i)
		if len(r) == 0 || r[0] != '{' {
			return nil, &Error{Path: at, Msg: "must be an object"}
		}
		var e event.Event
		if err := unmarshalNumbers(r, &e); err != nil {
			return nil, &Error{Path: at, Msg: "does not follow the event schema: " + err.Error()}
		}
		if err := validateEvent(&e, at, services); err != nil {
			return nil, err
		}
		if e.Seq != 0 {
			if e.Seq <= lastSeq {
				return nil, &Error{Path: at + ".seq", Msg: fmt.Sprintf("must increase (%d after %d)", e.Seq, lastSeq)}
			}
			lastSeq = e.Seq
		}
		f.Events = append(f.Events, e)
	}
	if sv, ok := raw["services"]; ok && string(sv) != "null" {
		if sv[0] != '{' {
			return nil, &Error{Path: "fixture.services", Msg: "must be an object"}
		}
		var svcs map[string]json.RawMessage
		if err := json.Unmarshal(sv, &svcs); err != nil {
			return nil, &Error{Path: "fixture.services", Msg: "must be an object: " + err.Error()}
		}
		for name, r := range svcs {
			at := "fixture.services." + name
			if len(r) == 0 || r[0] != '{' {
				return nil, &Error{Path: at, Msg: "must be an object"}
			}
			var sd ServiceData
			if err := json.Unmarshal(r, &sd); err != nil {
				return nil, &Error{Path: at, Msg: "must be {rules?, state?}: " + err.Error()}
			}
			if sd.Rules != nil {
				if err := validateRules(name, rulesFormat(services.find(name)), sd.Rules, at+".rules"); err != nil {
					return nil, err
				}
			}
			if c, ok := services.find(name).(service.SessionChecker); ok && len(sd.State) > 0 && string(sd.State) != "null" {
				if err := c.CheckCapturedState(sd.State, at+".state"); err != nil {
					return nil, sessionError(err)
				}
			}
			f.Services[name] = &sd
		}
	}
	return f, nil
}

// validateRules checks the rules a fixture records for service svc, whose
// format is want ("": any).
func validateRules(svc, want string, r *Rules, at string) error {
	if r.Format == "" {
		return &Error{Path: at + ".format", Msg: "is missing"}
	}
	if want != "" && r.Format != want {
		return &Error{Path: at + ".format", Msg: fmt.Sprintf("must be %q for %s, not %q", want, svc, r.Format)}
	}
	if r.Format == FormatDatabase && r.Source == "" && len(r.JSON) == 0 {
		return &Error{Path: at, Msg: "must carry json or source"}
	}
	return nil
}

func validateEvent(e *event.Event, at string, services Services) error {
	if e.Kind == "" {
		return &Error{Path: at + ".kind", Msg: "is missing"}
	}
	if !validKinds[e.Kind] {
		return &Error{Path: at + ".kind", Msg: fmt.Sprintf("%q is not an event kind (request, commit, listener, mutation, boundary, invocation)", e.Kind)}
	}
	switch e.Kind {
	case event.KindRequest:
		if e.Request == nil || e.Verdict == "" {
			return &Error{Path: at + ".verdict", Msg: "is missing on a request event"}
		}
		if !validVerdicts[e.Verdict] {
			return &Error{Path: at + ".verdict", Msg: fmt.Sprintf("%q is not a verdict (allow, deny, bypassed, unsupported, error)", e.Verdict)}
		}
		if e.Method == "" {
			return &Error{Path: at + ".method", Msg: "is missing on a request event"}
		}
	case event.KindInvocation:
		// A function's run: kept for the causal chain (write → trigger
		// → writes); verify replays only the writes.
		if e.Invocation == nil || e.Invocation.Function == "" {
			return &Error{Path: at + ".function", Msg: "is missing on an invocation event"}
		}
	case event.KindCommit:
		if e.Path == "" {
			return &Error{Path: at + ".path", Msg: "is missing on a commit event"}
		}
		if e.Commit == nil {
			e.Commit = &event.Commit{}
		}
		// The service says what its commits change (a Firestore
		// document, a Realtime Database location whose value may be any
		// JSON); by default a record: fields or null.
		check := service.CheckRecordCommit
		if c, ok := services.find(e.Service).(service.SessionChecker); ok {
			check = c.CheckCommit
		}
		if err := check(e.Commit, at); err != nil {
			return sessionError(err)
		}
	}
	switch e.Identity.Lens {
	case "", event.LensAdmin, event.LensUser, event.LensUnauthenticated:
	default:
		return &Error{Path: at + ".identity.lens", Msg: fmt.Sprintf("%q is not a lens (admin, user, unauthenticated)", e.Identity.Lens)}
	}
	if e.Identity.Lens == event.LensUser && e.Identity.UID == "" {
		return &Error{Path: at + ".identity.uid", Msg: "is missing for a user identity"}
	}
	return nil
}

// unmarshalNumbers decodes keeping numbers exact (json.Number), so
// integers stay integers beyond 2^53 and 1 stays distinct from 1.0.
func unmarshalNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// jsonErr renders a JSON syntax error with its line and column.
func jsonErr(err error, data []byte) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset)
		if off > len(data) {
			off = len(data)
		}
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := off - bytes.LastIndexByte(data[:off], '\n')
		return fmt.Sprintf("%v at line %d, column %d", err, line, col)
	}
	return err.Error()
}

// Encode writes a fixture as indented JSON.
func Encode(f *Fixture) ([]byte, error) {
	if f.Events == nil {
		f.Events = []event.Event{}
	}
	if f.Services == nil {
		f.Services = map[string]*ServiceData{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Encoded returns session's fixture encoded (Encode), for a reader that
// takes fixture files as bytes.
func Encoded(session func() (*Fixture, error)) func() ([]byte, error) {
	return func() ([]byte, error) {
		f, err := session()
		if err != nil {
			return nil, err
		}
		return Encode(f)
	}
}

// DecodeWith is Decode with the services of regs checking what they
// recorded: each service the fixture names is created in memory (no
// store, no events) when first needed and closed before DecodeWith
// returns; one that cannot be created gets the shared checks only.
func DecodeWith(data []byte, regs []service.Registration) (*Fixture, error) {
	made := map[string]service.Service{}
	defer func() {
		for _, svc := range made {
			if c, ok := svc.(service.Closer); ok {
				_ = c.Close()
			}
		}
	}()
	return Decode(data, func(name string) service.Service {
		if svc, ok := made[name]; ok {
			return svc
		}
		var svc service.Service
		for _, reg := range regs {
			if reg.Name == name {
				svc, _ = reg.New(service.Env{Project: service.DefaultProject, Now: time.Now, Events: event.Discard, Rand: rand.Reader})
				break
			}
		}
		made[name] = svc
		return svc
	})
}

// EventDecoder reads a fixture file's events (DecodeWith regs).
func EventDecoder(regs []service.Registration) func(data []byte) ([]event.Event, error) {
	return func(data []byte) ([]event.Event, error) {
		f, err := DecodeWith(data, regs)
		if err != nil {
			return nil, err
		}
		return f.Events, nil
	}
}

// sessionError is a service's check failing as a fixture error: a
// *service.SessionError names its place.
func sessionError(err error) error {
	var se *service.SessionError
	if errors.As(err, &se) {
		return &Error{Path: se.Path, Msg: se.Msg}
	}
	return &Error{Msg: err.Error()}
}
