package firestore

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/pyric/pyric/event"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/sandbox/service"
)

// DeriveCases implements service.CaseDeriver: the session's client
// Firestore requests as `pyric firestore rules simulate` cases.
func (s *Service) DeriveCases(sess *service.Session, rulesSource string) (any, int, int, error) {
	c := deriveCases(sess.Events, rulesSource)
	return c, len(c.TestCases), len(c.Unsupported), nil
}

// deriveCases writes every client Firestore request of a session
// (listener targets and admin requests excepted) as a simulator case whose
// expectation is the captured verdict. Requests whose rules read other
// documents with get()/exists() are derived without function mocks and a
// warning says so.
func deriveCases(events []event.Event, rulesSource string) *service.Cases[fsrules.Case] {
	out := service.NewCases[fsrules.Case](rulesSource)
	mocksWarned := false
	for i := range events {
		ev := &events[i]
		if ev.Service != "firestore" || ev.Kind != event.KindRequest || service.Bypassed(ev) || ev.Origin == event.OriginListener {
			continue
		}
		switch ev.Verdict {
		case event.Allow, event.Deny:
		case event.Unsupported:
			out.Unsupported = append(out.Unsupported, ev.ID)
			continue
		default:
			continue
		}
		if ev.Method == "list" {
			out.Unsupported = append(out.Unsupported, ev.ID)
			continue
		}
		exp, _ := service.CaseExpectation(ev.Verdict)
		c := fsrules.Case{Description: service.CaseDescription(ev), Expectation: exp,
			Method: ev.Method, Path: ev.Path, RequestTime: ev.At.UTC().Format(time.RFC3339Nano)}
		exists := ev.Seen != nil && ev.Seen.Before != nil && ev.Seen.Before.Exists
		if c.Method == "set" {
			c.Method = "create"
			if exists {
				c.Method = "update"
			}
		}
		if ev.Identity.Lens == event.LensUser {
			c.Auth, _ = json.Marshal(map[string]any{"uid": ev.Identity.UID, "token": simForm(ev.Identity.Token)})
		}
		if exists {
			c.Resource, _ = json.Marshal(simForm(ev.Seen.Before.Data))
		}
		if (c.Method == "create" || c.Method == "update") && ev.Seen != nil && ev.Seen.Data != nil {
			data := map[string]any{}
			if c.Method == "update" && exists {
				if m, ok := ev.Seen.Before.Data.(map[string]any); ok {
					for k, v := range m {
						data[k] = v
					}
				}
			}
			if m, ok := ev.Seen.Data.(map[string]any); ok {
				for k, v := range m {
					data[k] = v
				}
			}
			c.Data, _ = json.Marshal(simForm(data))
		}
		if ev.Decision != nil && ev.Decision.Lookups > 0 && !mocksWarned {
			out.Warnings = append(out.Warnings, "READ_MOCKS_OMITTED: some requests read other documents with get()/exists(); their cases carry no function mocks")
			mocksWarned = true
		}
		out.Add(ev, c)
	}
	return out
}

// simForm converts the sandbox's JSON form to the simulator's: timestamps
// as ISO-8601 values, sentinel markers as the simulator's serverTimestamp.
func simForm(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["__sentinel"].(string); ok && len(x) == 1 {
			if s == string(event.ServerTimestamp) {
				return map[string]any{"__type": "serverTimestamp"}
			}
			return nil
		}
		if t, _ := x["__type"].(string); t == "timestamp" {
			sec, _ := toInt(x["seconds"])
			ns, _ := toInt(x["nanos"])
			return map[string]any{"__type": "timestamp", "value": time.Unix(sec, ns).UTC().Format(time.RFC3339Nano)}
		}
		if t, _ := x["__type"].(string); t == "reference" {
			return map[string]any{"__type": "reference", "value": x["path"]}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = simForm(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = simForm(e)
		}
		return out
	}
	return v
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	case float64:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		return i, err == nil
	}
	return 0, false
}
