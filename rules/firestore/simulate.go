package firestore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/service"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/value"
)

// Case is one simulator test case, in the Rules Test API's vocabulary (see
// the conformance README): method, path relative to the documents root,
// auth, data (request.resource.data), resource (the existing document's
// data; absent = the document does not exist), functionMocks and
// requestTime.
type Case struct {
	Description   string          `json:"description"`
	Expectation   string          `json:"expectation"`
	Method        string          `json:"method"`
	Path          string          `json:"path"`
	Auth          json.RawMessage `json:"auth,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
	Resource      json.RawMessage `json:"resource,omitempty"`
	FunctionMocks []FunctionMock  `json:"functionMocks,omitempty"`
	RequestTime   string          `json:"requestTime,omitempty"`
	Query         *CaseQuery      `json:"query,omitempty"`
}

// FunctionMock supplies a get() or exists() result for a path.
type FunctionMock struct {
	Function string          `json:"function"`
	Path     string          `json:"path"`
	Result   json.RawMessage `json:"result"`
}

// CaseQuery is request.query for a list case.
type CaseQuery struct {
	Limit   *int64          `json:"limit,omitempty"`
	Offset  int64           `json:"offset,omitempty"`
	OrderBy json.RawMessage `json:"orderBy,omitempty"`
}

// Input is what `pyric firestore rules simulate --stdin` reads.
type Input = sim.Input[Case]

// ParseInput decodes simulator input, keeping numbers exact.
func ParseInput(b []byte) (*Input, error) { return sim.ParseInput[Case](b) }

// Simulate runs every case against the ruleset with the Rules Test API's
// conventions, so verdicts are comparable with production's recorded ones.
// A malformed case is an error naming it (testCases[i].field: problem);
// no case runs then.
func (r *Ruleset) Simulate(cases []Case, now time.Time) (*sim.Report, error) {
	return sim.Run(cases, func(c *Case) (func() sim.Case, error) {
		req, err := c.request(now)
		if err != nil {
			return nil, err
		}
		return func() sim.Case {
			return r.Decide(req).Case(c.Description, sim.Outcome(strings.ToUpper(c.Expectation)))
		}, nil
	})
}

// request builds the Request a case describes.
func (c *Case) request(now time.Time) (*Request, error) {
	if c.Path == "" {
		return nil, fmt.Errorf("path: missing (a document path such as users/alice)")
	}
	method, t, err := service.CaseBasics(c.Method, c.Expectation, c.RequestTime, now)
	if err != nil {
		return nil, err
	}
	path := strings.Trim(c.Path, "/")
	path = strings.TrimPrefix(path, "databases/(default)/documents/")
	req := &Request{Method: method, Path: path, Time: t, TestAPI: true}
	auth, err := service.CaseAuth(c.Auth, func(tok map[string]any) (map[string]any, error) {
		v, err := revive(tok, t)
		m, _ := v.(map[string]any)
		return m, err
	})
	if err != nil {
		return nil, err
	}
	req.Auth = auth
	if sim.Present(c.Data) {
		m, err := docData(c.Data, t)
		if err != nil {
			return nil, fmt.Errorf("data: %v", err)
		}
		req.After = m
	}
	if sim.Present(c.Resource) {
		m, err := docData(c.Resource, t)
		if err != nil {
			return nil, fmt.Errorf("resource: %v", err)
		}
		req.Resource = &Doc{Path: path, Data: m}
	}
	if c.Query != nil {
		q := &Query{Limit: c.Query.Limit, Offset: c.Query.Offset, OrderBy: map[string]string{}}
		if sim.Present(c.Query.OrderBy) {
			var s string
			var m map[string]string
			switch {
			case json.Unmarshal(c.Query.OrderBy, &s) == nil:
				q.OrderBy[s] = "ASC"
			case json.Unmarshal(c.Query.OrderBy, &m) == nil:
				q.OrderBy = m
			default:
				return nil, fmt.Errorf("query.orderBy: must be a field name or a map of field to ASC/DESC")
			}
		}
		req.Query = q
	}
	mocks := service.Mocks{}
	for _, m := range c.FunctionMocks {
		p := service.MockPath(m.Path)
		switch m.Function {
		case "get":
			data, err := docData(m.Result, t)
			if err != nil {
				return nil, fmt.Errorf("functionMocks[%s].result: %v", m.Path, err)
			}
			mocks.Get(p, data)
		case "exists":
			b, err := service.MockExists(m.Result)
			if err != nil {
				return nil, fmt.Errorf("functionMocks[%s].result: %v", m.Path, err)
			}
			mocks.Exists(p, b)
		default:
			return nil, fmt.Errorf("functionMocks[%s].function: %q is not get or exists", m.Path, m.Function)
		}
	}
	req.Get = LookupFunc(mocks.Lookup(ErrNotMocked))
	return req, nil
}

func docData(raw json.RawMessage, now time.Time) (value.Map, error) {
	var m map[string]any
	if err := sim.Decode(raw, &m); err != nil {
		return nil, fmt.Errorf("must be a JSON object: %v", err)
	}
	revived, err := revive(m, now)
	if err != nil {
		return nil, err
	}
	v, err := value.FromGo(revived)
	if err != nil {
		return nil, err
	}
	out, _ := v.(value.Map)
	if out == nil {
		out = value.Map{}
	}
	return out, nil
}

// revive turns typed markers in JSON data into Go values: {"__type":
// "float", "value": 1} for a float with an integral value, "timestamp"
// (value: ISO-8601), "bytes" (base64), "latlng" (lat, lng), "path" /
// "reference" (value: a path), and "serverTimestamp" (the request time).
func revive(v any, now time.Time) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if t, ok := v["__type"].(string); ok {
			return reviveMarker(t, v, now)
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			r, err := revive(x, now)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", k, err)
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			r, err := revive(x, now)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %v", i, err)
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

func reviveMarker(t string, m map[string]any, now time.Time) (any, error) {
	switch t {
	case "float":
		n, ok := m["value"].(json.Number)
		if !ok {
			return nil, fmt.Errorf("float marker needs a numeric value")
		}
		f, err := n.Float64()
		if err != nil {
			return nil, err
		}
		return value.Float(f), nil
	case "timestamp":
		s, ok := m["value"].(string)
		if !ok {
			return nil, fmt.Errorf("timestamp marker needs an ISO-8601 value")
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, err
		}
		return ts, nil
	case "serverTimestamp":
		return now, nil
	case "bytes":
		s, _ := m["value"].(string)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("bytes marker: %v", err)
		}
		return b, nil
	case "latlng":
		lat, _ := m["lat"].(json.Number)
		lng, _ := m["lng"].(json.Number)
		la, err1 := lat.Float64()
		ln, err2 := lng.Float64()
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("latlng marker needs numeric lat and lng")
		}
		return value.LatLng{Lat: la, Lng: ln}, nil
	case "path", "reference":
		s, _ := m["value"].(string)
		return value.ParsePath(s), nil
	}
	return nil, fmt.Errorf("unknown __type marker %q", t)
}

// FromTestAPI fills the case from the Rules Test API's test case shape
// (request.auth/method/path/time, request.resource.data, resource.data,
// functionMocks with exactValue arguments and value results).
func (c *Case) FromTestAPI(tc sim.TestAPICase) error {
	c.Expectation, c.Method, c.Path, c.Auth = tc.Expectation, tc.Request.Method, tc.Request.Path, tc.Request.Auth
	t, err := tc.Time()
	if err != nil {
		return err
	}
	c.RequestTime = t
	if c.Data, err = dataOf(tc.Request.Resource); err != nil {
		return fmt.Errorf("request.resource: %v", err)
	}
	if c.Resource, err = dataOf(tc.Resource); err != nil {
		return fmt.Errorf("resource: %v", err)
	}
	for i, m := range tc.FunctionMocks {
		p, err := m.MockPath()
		if err != nil {
			return fmt.Errorf("functionMocks[%d].%v", i, err)
		}
		res, err := m.MockResult()
		if err != nil {
			return fmt.Errorf("functionMocks[%d].%v", i, err)
		}
		if m.Function == "get" {
			if res, err = dataOf(res); err != nil {
				return fmt.Errorf("functionMocks[%d].result.value: %v", i, err)
			}
		}
		c.FunctionMocks = append(c.FunctionMocks, FunctionMock{Function: m.Function, Path: p, Result: res})
	}
	return nil
}

// dataOf returns the data of a Test API resource ({"data": {...}}).
func dataOf(raw json.RawMessage) (json.RawMessage, error) {
	if !sim.Present(raw) {
		return nil, nil
	}
	var r struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("must be an object with data")
	}
	if !sim.Present(r.Data) {
		return json.RawMessage("{}"), nil
	}
	return r.Data, nil
}
