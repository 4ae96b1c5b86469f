package verify

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/sandbox/service"
)

// Cases is a session turned into simulator input (what `pyric <service>
// rules simulate --stdin` reads), with which event each case came from.
type Cases[C any] struct {
	Source      string        `json:"source"`
	TestCases   []C           `json:"testCases"`
	Derived     []DerivedCase `json:"derived"`
	Warnings    []string      `json:"warnings"`
	Unsupported []string      `json:"unsupportedEvents"`
}

// Derived is a Firestore session as `pyric firestore rules simulate` input.
type Derived = Cases[fsrules.Case]

// DerivedCase ties a case to its event.
type DerivedCase struct {
	EventID string `json:"eventId"`
	Index   int    `json:"index"`
}

// DeriveCases writes every client Firestore request of the fixture
// (listener targets and admin requests excepted) as a simulator case whose
// expectation is the captured verdict. Requests whose rules read other
// documents with get()/exists() are derived without function mocks and a
// warning says so.
func DeriveCases(f *capture.Fixture, rulesSource string) *Derived {
	out := &Derived{Source: rulesSource, TestCases: []fsrules.Case{}, Derived: []DerivedCase{}, Warnings: []string{}, Unsupported: []string{}}
	mocksWarned := false
	for i := range f.Events {
		ev := &f.Events[i]
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
		c := fsrules.Case{Description: fmt.Sprintf("%s %s %s (%s)", ev.ID, ev.Method, ev.Path, who(ev)),
			Expectation: map[event.Verdict]string{event.Allow: "ALLOW", event.Deny: "DENY"}[ev.Verdict],
			Method:      ev.Method, Path: ev.Path, RequestTime: ev.At.UTC().Format(time.RFC3339Nano)}
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
		out.Derived = append(out.Derived, DerivedCase{EventID: ev.ID, Index: len(out.TestCases)})
		out.TestCases = append(out.TestCases, c)
	}
	return out
}

func who(ev *event.Event) string {
	if ev.Identity.Lens == event.LensUser {
		return "uid " + ev.Identity.UID
	}
	return string(ev.Identity.Lens)
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
