package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// A running session's file is a fixture followed by lines the recorder
// appends, one JSON object per line, so a write costs what changed and
// never the whole state:
//
//	{"schema":"pyric.verify.fixture.v1",...,"events":[],"services":{...}}
//	{"event":{...}}                                  one more event
//	{"service":"firestore","key":["documents","c/d"],"value":{...}}
//	                                                 a record's value now (no value: deleted)
//	{"service":"messaging","state":{...}}            a service's whole state now
//	{"service":"firestore","rules":{...}}            the rules in force now
//	{"description":"..."}                            the description now
//	{"flush":"end"}                                  the end of one flush's lines
//
// Decode folds the lines into the fixture they describe. The lines are
// appended in one write each flush, which ends with the flush-end line; a
// process killed in the middle of that write leaves part of the flush,
// which is ignored whole (an event without the records it wrote would
// describe a state that never was): the file holds the session up to the
// previous flush. A file with no flush-end line at all (written before
// they were) keeps every whole line, as it did then.

// flushEnd is the line that ends each flush's lines.
const flushEnd = flushEndLine + "\n"

const flushEndLine = `{"flush":"end"}`

// wholeFlushes cuts tail after its last flush-end line, when it has one:
// what follows is the part of a flush a kill interrupted.
func wholeFlushes(tail []byte) []byte {
	for rest := tail; ; {
		i := bytes.LastIndex(rest, []byte(flushEndLine))
		if i < 0 {
			return tail
		}
		end := i + len(flushEndLine)
		if (i == 0 || rest[i-1] == '\n') && (end == len(rest) || rest[end] == '\n' || rest[end] == '\r') {
			return tail[:end]
		}
		rest = rest[:i] // inside another line (a string's content)
	}
}

// logLine is one appended line.
type logLine struct {
	Event       json.RawMessage `json:"event,omitempty"`
	Service     string          `json:"service,omitempty"`
	Key         []string        `json:"key,omitempty"`
	Value       json.RawMessage `json:"value,omitempty"`
	State       json.RawMessage `json:"state,omitempty"`
	Rules       *Rules          `json:"rules,omitempty"`
	Description *string         `json:"description,omitempty"`
	Flush       string          `json:"flush,omitempty"` // "end": a flush-end line
}

// splitLog splits data into its first JSON value and the lines after it.
// ok is false when data does not start with a whole JSON value.
func splitLog(data []byte) (base, tail []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, nil, false
	}
	end := int(dec.InputOffset())
	return data[:end], data[end:], true
}

// foldLog returns the single-object fixture that base followed by the
// appended lines in tail describes.
func foldLog(base, tail []byte) ([]byte, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(base, &raw); err != nil {
		return nil, &Error{Msg: "is not valid JSON: " + jsonErr(err, base)}
	}
	var events []json.RawMessage
	if ev, ok := raw["events"]; ok && len(ev) > 0 && ev[0] == '[' {
		if err := json.Unmarshal(ev, &events); err != nil {
			return nil, &Error{Path: "fixture.events", Msg: "must be an array: " + err.Error()}
		}
	}
	type svc struct {
		fields map[string]json.RawMessage // rules, state as the base has them
		state  *node                      // the state, once a line changed it
	}
	svcs := map[string]*svc{}
	if sv, ok := raw["services"]; ok && len(sv) > 0 && sv[0] == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sv, &m); err != nil {
			return nil, &Error{Path: "fixture.services", Msg: "must be an object: " + err.Error()}
		}
		for name, r := range m {
			s := &svc{fields: map[string]json.RawMessage{}}
			if len(r) > 0 && r[0] == '{' {
				if err := json.Unmarshal(r, &s.fields); err != nil {
					return nil, &Error{Path: "fixture.services." + name, Msg: "must be {rules?, state?}: " + err.Error()}
				}
			}
			svcs[name] = s
		}
	}
	service := func(name string) *svc {
		s := svcs[name]
		if s == nil {
			s = &svc{fields: map[string]json.RawMessage{}}
			svcs[name] = s
		}
		if s.state == nil {
			s.state = &node{raw: s.fields["state"]}
		}
		return s
	}
	lineNo := bytes.Count(base, []byte("\n")) + 1
	tail = wholeFlushes(tail)
	for len(tail) > 0 {
		line, rest, whole := bytes.Cut(tail, []byte("\n"))
		tail = rest
		at := fmt.Sprintf("fixture line %d", lineNo)
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l logLine
		if err := json.Unmarshal(line, &l); err != nil {
			if !whole {
				break // torn by a kill in the middle of the last write
			}
			return nil, &Error{Path: at, Msg: "is not valid JSON: " + jsonErr(err, line)}
		}
		switch {
		case l.Event != nil:
			events = append(events, l.Event)
		case l.Key != nil:
			if l.Service == "" {
				return nil, &Error{Path: at + ".service", Msg: "is missing on a record"}
			}
			v := l.Value
			if string(v) == "null" {
				v = nil
			}
			if err := service(l.Service).state.set(l.Key, v); err != nil {
				return nil, &Error{Path: at, Msg: err.Error()}
			}
		case l.State != nil:
			if l.Service == "" {
				return nil, &Error{Path: at + ".service", Msg: "is missing on a state"}
			}
			service(l.Service).state = &node{raw: l.State}
		case l.Rules != nil:
			if l.Service == "" {
				return nil, &Error{Path: at + ".service", Msg: "is missing on rules"}
			}
			r, err := json.Marshal(l.Rules)
			if err != nil {
				return nil, &Error{Path: at + ".rules", Msg: err.Error()}
			}
			service(l.Service).fields["rules"] = r
		case l.Description != nil:
			d, _ := json.Marshal(*l.Description)
			raw["description"] = d
		case l.Flush == "end":
		default:
			return nil, &Error{Path: at, Msg: "is none of event, record, state, rules, description"}
		}
	}
	var buf bytes.Buffer
	evs, err := json.Marshal(events)
	if err != nil {
		return nil, &Error{Path: "fixture.events", Msg: err.Error()}
	}
	if events == nil {
		evs = []byte("[]")
	}
	raw["events"] = evs
	out := map[string]json.RawMessage{}
	for name, s := range svcs {
		if s.state != nil {
			buf.Reset()
			s.state.encode(&buf)
			s.fields["state"] = bytes.Clone(buf.Bytes())
		}
		b, err := json.Marshal(s.fields)
		if err != nil {
			return nil, &Error{Path: "fixture.services." + name, Msg: err.Error()}
		}
		out[name] = b
	}
	sv, err := json.Marshal(out)
	if err != nil {
		return nil, &Error{Path: "fixture.services", Msg: err.Error()}
	}
	raw["services"] = sv
	return json.Marshal(raw)
}

// node is a JSON value some of whose members records replaced: raw until
// a record goes inside it, then its members (only the objects on a
// record's key are ever taken apart).
type node struct {
	raw  json.RawMessage
	kids map[string]*node
}

// set puts v (nil: removes the member) at key inside n.
func (n *node) set(key []string, v json.RawMessage) error {
	if len(key) == 0 {
		n.raw, n.kids = v, nil
		return nil
	}
	if n.kids == nil {
		raw := bytes.TrimSpace(n.raw)
		if len(raw) > 0 && raw[0] != '{' && string(raw) != "null" {
			// A record below a value that is not an object (a Realtime
			// Database location written below what was a leaf) replaces
			// it with an object holding the record, as that write did; a
			// removal there finds nothing to remove.
			if v == nil {
				return nil
			}
			raw = nil
		}
		n.kids = map[string]*node{}
		if len(raw) > 0 && string(raw) != "null" {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("a record's key %q goes inside a value that is not a valid object: %v", key[0], err)
			}
			for k, r := range m {
				n.kids[k] = &node{raw: r}
			}
		}
		n.raw = nil
	}
	if len(key) == 1 && v == nil {
		delete(n.kids, key[0])
		return nil
	}
	c := n.kids[key[0]]
	if c == nil {
		c = &node{}
		n.kids[key[0]] = c
	}
	return c.set(key[1:], v)
}

// encode writes n, members in key order.
func (n *node) encode(buf *bytes.Buffer) {
	if n.kids == nil {
		if len(n.raw) == 0 {
			buf.WriteString("null")
		} else {
			buf.Write(n.raw)
		}
		return
	}
	keys := make([]string, 0, len(n.kids))
	for k := range n.kids {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		n.kids[k].encode(buf)
	}
	buf.WriteByte('}')
}
