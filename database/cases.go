package database

// The service.CaseDeriver capability: every client request of a session
// becomes a `pyric database rules simulate` case whose expectation is the
// recorded verdict.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/sandbox/service"
)

// DeriveCases implements service.CaseDeriver.
func (d *Database) DeriveCases(s *service.Session, rulesSource string) (any, int, int, error) {
	c, err := deriveCases(s, rulesSource)
	if err != nil {
		return nil, 0, 0, err
	}
	return c, len(c.TestCases), len(c.Unsupported), nil
}

// SimulateCase is one `pyric database rules simulate` case.
type SimulateCase struct {
	Description string         `json:"description"`
	Expectation string         `json:"expectation"`
	Operation   string         `json:"operation"` // read or write
	Path        string         `json:"path"`
	Auth        *rtdb.AuthJSON `json:"auth"`
	// Data is the whole namespace before the request; NewData the value
	// a write sets at Path (server values resolved).
	Data    json.RawMessage `json:"data"`
	NewData any             `json:"newData"`
	Now     string          `json:"now"`
	// Query is a read's query as the rules saw it (query.* names).
	Query any `json:"query,omitempty"`
}

// deriveCases writes every client Realtime Database request of the
// session (reads, listens, writes; admin requests excepted) as a simulator
// case, with the namespace's data as the session had it at that moment.
// A multi-location update of several paths has no case form (the
// simulator writes one location) and is listed as unsupported.
func deriveCases(s *service.Session, rulesSource string) (*service.Cases[SimulateCase], error) {
	out := service.NewCases[SimulateCase](rulesSource)
	var captured *SessionState
	if raw := s.States[serviceName]; len(raw) > 0 {
		var err error
		if captured, err = DecodeSessionState(raw, "fixture.services.database.state"); err != nil {
			return nil, err
		}
	}
	trees, err := InitialTrees(s.Events, captured, func(ns string) string {
		if strings.HasSuffix(ns, "-default-rtdb") {
			return ""
		}
		return ns
	}, func(ns string) string { return ns })
	if err != nil {
		return nil, err
	}
	multiNS := false
events:
	for i := range s.Events {
		ev := &s.Events[i]
		if ev.Kind == event.KindBoundary {
			if ev.Boundary != nil && ev.Boundary.Boundary == event.Reset {
				trees = map[string]any{}
			}
			continue
		}
		if ev.Service != "database" {
			continue
		}
		ns, keys, err := EventKeys(ev.Path)
		if err != nil {
			return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].path", i), Msg: err.Error()}
		}
		if ev.Kind == event.KindCommit {
			after, err := Normalize(ev.Commit.After, nil, 0)
			if err != nil {
				return nil, &service.SessionError{Path: fmt.Sprintf("fixture.events[%d].after", i), Msg: err.Error()}
			}
			trees[ns] = SetTree(trees[ns], keys, after)
			continue
		}
		if ev.Kind != event.KindRequest || service.Bypassed(ev) || ev.Origin == event.OriginListener {
			continue
		}
		exp, ok := service.CaseExpectation(ev.Verdict)
		if !ok {
			if ev.Verdict == event.Unsupported {
				out.Unsupported = append(out.Unsupported, ev.ID)
			}
			continue
		}
		if ns != "" {
			multiNS = true
		}
		c := SimulateCase{Description: service.CaseDescription(ev), Expectation: exp,
			Operation: "read", Path: "/" + strings.Join(keys, "/"), Now: ev.At.UTC().Format(time.RFC3339Nano)}
		if ev.Identity.Lens == event.LensUser {
			c.Auth = &rtdb.AuthJSON{UID: ev.Identity.UID, Token: ev.Identity.Token}
		}
		if !IsWriteMethod(ev.Method) && ev.Seen != nil && ev.Seen.Query != nil {
			c.Query = ev.Seen.Query
		}
		if IsWriteMethod(ev.Method) {
			c.Operation = "write"
			var raw any
			switch {
			case ev.Seen == nil:
				out.Unsupported = append(out.Unsupported, ev.ID)
				continue
			case ev.Seen.Updates != nil:
				if len(ev.Seen.Updates) != 1 {
					out.Unsupported = append(out.Unsupported, ev.ID)
					continue
				}
				for rel, v := range ev.Seen.Updates {
					sub, err := ParsePath(rel)
					if err != nil {
						out.Unsupported = append(out.Unsupported, ev.ID)
						continue events
					}
					keys = append(append([]string(nil), keys...), sub...)
					c.Path, raw = "/"+strings.Join(keys, "/"), v
				}
			default:
				raw = ev.Seen.Data
			}
			nd, err := Normalize(raw, TreeAt(trees[ns], keys), ev.At.UnixMilli())
			if err != nil {
				out.Unsupported = append(out.Unsupported, ev.ID)
				continue events
			}
			c.NewData = nd
		}
		data := trees[ns]
		if data == nil {
			data = map[string]any{}
		}
		if c.Data, err = json.Marshal(data); err != nil {
			return nil, err
		}
		out.Add(ev, c)
	}
	if multiNS {
		out.Warnings = append(out.Warnings, "NAMESPACES: the session used several namespaces; every case is decided by the one rules source")
	}
	return out, nil
}
