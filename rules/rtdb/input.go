package rtdb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/sim"
)

// Input is the simulator's input, the same type Firestore's and Storage's
// simulators read: the rules source and the cases.
type Input = sim.Input[Case]

// ParseInput decodes `pyric database rules simulate` input:
// {"source": "<database.rules.json text>" | {the rules tree itself} |
// {"files": [{"name", "content"}]}, "testCases": [{"description",
// "expectation": "ALLOW"|"DENY", "operation": "read"|"write", "path",
// "auth": {"uid", "provider", "token"} | null, "data", "newData",
// "now": ISO-8601 | epoch ms, "query": {"orderByKey", "orderByPriority",
// "orderByValue": bool, "orderByChild": "path", "startAt", "endAt",
// "equalTo": value, "limitToFirst", "limitToLast": n}}]}. ("rules" is an
// alias of "source".) The
// error names the field at fault, e.g. `testCases[2].operation: want read
// or write, got "get"`.
func ParseInput(b []byte) (*Input, error) {
	var in struct {
		Source    json.RawMessage   `json:"source"`
		Rules     json.RawMessage   `json:"rules"`
		TestCases []json.RawMessage `json:"testCases"`
	}
	if err := sim.Decode(b, &in); err != nil {
		return nil, fmt.Errorf("input is not a JSON object: %v", err)
	}
	raw := in.Source
	if !sim.Present(raw) {
		raw = in.Rules
	}
	if !sim.Present(raw) {
		return nil, fmt.Errorf(`missing "source": the text of database.rules.json`)
	}
	out := &Input{Name: "database.rules.json"}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &out.Source); err != nil {
			return nil, fmt.Errorf(`"source": %v`, err)
		}
	case '{':
		var files struct {
			Files []struct {
				Name    string `json:"name"`
				Content string `json:"content"`
			} `json:"files"`
		}
		if json.Unmarshal(raw, &files) == nil && len(files.Files) > 0 {
			if len(files.Files) > 1 {
				return nil, fmt.Errorf("source.files: one rules file is supported, got %d", len(files.Files))
			}
			out.Source, out.Name = files.Files[0].Content, files.Files[0].Name
		} else {
			out.Source = string(raw) // the rules tree given as JSON itself
		}
	default:
		return nil, fmt.Errorf(`"source" must be the rules file as a string`)
	}
	if in.TestCases == nil {
		return nil, fmt.Errorf(`missing "testCases": a list of cases`)
	}
	for i, rc := range in.TestCases {
		c, err := decodeCase(rc)
		if err != "" {
			return nil, fmt.Errorf("testCases[%d]%s", i, err)
		}
		out.TestCases = append(out.TestCases, c)
	}
	return out, nil
}

// caseJSON is one case of the input.
type caseJSON struct {
	Description string          `json:"description"`
	Expectation string          `json:"expectation"`
	Operation   string          `json:"operation"`
	Path        *string         `json:"path"`
	Auth        json.RawMessage `json:"auth"`
	Data        any             `json:"data"`
	NewData     any             `json:"newData"`
	Now         json.RawMessage `json:"now"` // ISO-8601 string or epoch milliseconds
	Query       *queryJSON      `json:"query"`
}

// queryJSON is a read case's query, named as the rules name its members.
type queryJSON struct {
	OrderByKey      bool    `json:"orderByKey"`
	OrderByPriority bool    `json:"orderByPriority"`
	OrderByValue    bool    `json:"orderByValue"`
	OrderByChild    string  `json:"orderByChild"`
	StartAt         any     `json:"startAt"`
	EndAt           any     `json:"endAt"`
	EqualTo         any     `json:"equalTo"`
	LimitToFirst    float64 `json:"limitToFirst"`
	LimitToLast     float64 `json:"limitToLast"`
}

// AuthJSON is a case's auth: the uid, the sign-in provider and the token's
// claims.
type AuthJSON struct {
	UID      string         `json:"uid"`
	Provider string         `json:"provider"`
	Token    map[string]any `json:"token"`
}

// decodeCase returns the case or a problem starting with the field path
// (".operation: ...").
func decodeCase(raw json.RawMessage) (Case, string) {
	var sc caseJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&sc); err != nil {
		return Case{}, ": " + err.Error()
	}
	c := Case{Description: sc.Description, Data: sc.Data, NewData: sc.NewData}
	switch strings.ToUpper(sc.Expectation) {
	case "ALLOW":
		c.Expectation = sim.Allow
	case "DENY":
		c.Expectation = sim.Deny
	default:
		return c, fmt.Sprintf(".expectation: want ALLOW or DENY, got %q", sc.Expectation)
	}
	switch sc.Operation {
	case "read":
		c.Operation = Read
	case "write":
		c.Operation = Write
	default:
		return c, fmt.Sprintf(".operation: want read or write, got %q", sc.Operation)
	}
	if q := sc.Query; q != nil {
		if c.Operation != Read {
			return c, ".query: only a read has a query"
		}
		for name, n := range map[string]float64{"limitToFirst": q.LimitToFirst, "limitToLast": q.LimitToLast} {
			if n < 0 || n != float64(int(n)) {
				return c, fmt.Sprintf(".query.%s: want a positive whole number, got %v", name, n)
			}
		}
		c.Query = &Query{OrderByKey: q.OrderByKey, OrderByPriority: q.OrderByPriority, OrderByValue: q.OrderByValue,
			OrderByChild: q.OrderByChild, StartAt: q.StartAt, EndAt: q.EndAt, EqualTo: q.EqualTo,
			LimitToFirst: int(q.LimitToFirst), LimitToLast: int(q.LimitToLast)}
	}
	if sc.Path == nil {
		return c, `.path: missing, e.g. "/users/alice"`
	}
	c.Path = *sc.Path
	if sim.Present(sc.Auth) {
		var a AuthJSON
		ad := json.NewDecoder(bytes.NewReader(sc.Auth))
		ad.UseNumber()
		if err := ad.Decode(&a); err != nil {
			return c, ".auth: want null or {uid, provider, token}: " + err.Error()
		}
		c.Auth = a.Auth()
	}
	if sim.Present(sc.Now) {
		var ms json.Number
		var iso string
		switch {
		case json.Unmarshal(sc.Now, &iso) == nil:
			t, err := time.Parse(time.RFC3339Nano, iso)
			if err != nil {
				return c, ".now: want an ISO-8601 time or epoch milliseconds: " + err.Error()
			}
			c.Now = t
		case json.Unmarshal(sc.Now, &ms) == nil:
			n, err := ms.Int64()
			if err != nil {
				return c, ".now: want whole epoch milliseconds"
			}
			c.Now = time.UnixMilli(n)
		default:
			return c, ".now: want an ISO-8601 time or epoch milliseconds"
		}
	}
	return c, ""
}

// Auth is the rules' auth for a, with the claims every Firebase ID token
// carries filled in when a leaves them out: sub (the uid) and
// firebase.sign_in_provider.
func (a AuthJSON) Auth() *Auth {
	t := a.Token
	if t == nil {
		t = map[string]any{}
	}
	if _, ok := t["sub"]; !ok && a.UID != "" {
		t["sub"] = a.UID
	}
	if a.Provider != "" {
		fb, ok := t["firebase"].(map[string]any)
		if !ok && t["firebase"] == nil {
			fb = map[string]any{}
			t["firebase"] = fb
		}
		if fb != nil {
			if _, ok := fb["sign_in_provider"]; !ok {
				fb["sign_in_provider"] = a.Provider
			}
		}
	}
	return &Auth{UID: a.UID, Provider: a.Provider, Token: t}
}
