package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Input is what a simulator reads: {"source": rules, "testCases": [...]},
// with "rules" accepted as an alias of "source". C is the service's case.
//
// The Firebase Rules Test API's own request shape is accepted too, so
// suites written for the hosted API run offline unchanged:
//
//	{"source": {"files": [{"name": "firestore.rules", "content": "..."}]},
//	 "testSuite": {"testCases": [{"expectation": "ALLOW",
//	   "request": {"auth": {...}, "method": "get", "path": "/databases/(default)/documents/users/a", "time": "..."},
//	   "resource": {"data": {...}},
//	   "functionMocks": [{"function": "get", "args": [{"exactValue": "/databases/..."}], "result": {"value": {"data": {...}}}}]}]}}
//
// Its cases are converted by the service's case type (TestAPICase.Convert
// through the FromTestAPI method).
type Input[C any] struct {
	Source    string `json:"source"`
	Rules     string `json:"rules"`
	TestCases []C    `json:"testCases"`
	// Name is the rules file's name when the input named it (the Test
	// API's source.files[0].name).
	Name string `json:"-"`
}

// TestAPICase is one test case of the Rules Test API
// (projects.test's testSuite.testCases[]).
type TestAPICase struct {
	Expectation string `json:"expectation"`
	Request     struct {
		Auth     json.RawMessage `json:"auth"`
		Method   string          `json:"method"`
		Path     string          `json:"path"`
		Time     json.RawMessage `json:"time"`
		Resource json.RawMessage `json:"resource"`
	} `json:"request"`
	Resource      json.RawMessage `json:"resource"`
	FunctionMocks []TestAPIMock   `json:"functionMocks"`
}

// TestAPIMock is a Rules Test API function mock.
type TestAPIMock struct {
	Function string `json:"function"`
	Args     []struct {
		ExactValue json.RawMessage `json:"exactValue"`
		AnyValue   json.RawMessage `json:"anyValue"`
	} `json:"args"`
	Result struct {
		Value     json.RawMessage `json:"value"`
		Undefined json.RawMessage `json:"undefined"`
	} `json:"result"`
}

// MockPath returns the mock's single exact path argument.
func (m TestAPIMock) MockPath() (string, error) {
	if len(m.Args) != 1 {
		return "", fmt.Errorf("args: %s mocks take exactly one argument, got %d", m.Function, len(m.Args))
	}
	if !Present(m.Args[0].ExactValue) {
		return "", fmt.Errorf("args[0]: only exactValue arguments are supported offline (anyValue matches any path)")
	}
	var p string
	if err := json.Unmarshal(m.Args[0].ExactValue, &p); err != nil {
		return "", fmt.Errorf("args[0].exactValue: a path string is required")
	}
	return p, nil
}

// MockResult returns the mock's result value; a mock whose result is
// undefined (the function fails) is not supported offline.
func (m TestAPIMock) MockResult() (json.RawMessage, error) {
	if !Present(m.Result.Value) {
		return nil, fmt.Errorf("result: only value results are supported offline")
	}
	return m.Result.Value, nil
}

// Time returns request.time as an ISO-8601 string ("" when absent). The
// Test API gives a Timestamp as a string, or a Value wrapping one
// ({"timestampValue": "..."}).
func (c TestAPICase) Time() (string, error) {
	if !Present(c.Request.Time) {
		return "", nil
	}
	var s string
	if json.Unmarshal(c.Request.Time, &s) == nil {
		return s, nil
	}
	var v struct {
		TimestampValue string `json:"timestampValue"`
	}
	if json.Unmarshal(c.Request.Time, &v) == nil && v.TimestampValue != "" {
		return v.TimestampValue, nil
	}
	return "", fmt.Errorf("request.time: must be an ISO-8601 timestamp")
}

// fromTestAPI is implemented by a service's case type.
type fromTestAPI interface {
	FromTestAPI(TestAPICase) error
}

// ParseInput decodes simulator input, keeping JSON numbers exact
// (json.Number) so an integral number can become an int and a fractional
// one a float.
func ParseInput[C any](b []byte) (*Input[C], error) {
	var raw struct {
		Source    json.RawMessage `json:"source"`
		Rules     string          `json:"rules"`
		TestCases []C             `json:"testCases"`
		TestSuite *struct {
			TestCases []json.RawMessage `json:"testCases"`
		} `json:"testSuite"`
	}
	if err := Decode(b, &raw); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	in := Input[C]{Rules: raw.Rules, TestCases: raw.TestCases}
	if Present(raw.Source) {
		if err := json.Unmarshal(raw.Source, &in.Source); err != nil {
			var files struct {
				Files []struct {
					Name    string `json:"name"`
					Content string `json:"content"`
				} `json:"files"`
			}
			if err := json.Unmarshal(raw.Source, &files); err != nil || len(files.Files) == 0 {
				return nil, fmt.Errorf("source: must be the rules text or {\"files\": [{\"name\", \"content\"}]}")
			}
			if len(files.Files) > 1 {
				return nil, fmt.Errorf("source.files: one rules file is supported, got %d", len(files.Files))
			}
			in.Source, in.Name = files.Files[0].Content, files.Files[0].Name
		}
	}
	if in.Source == "" {
		in.Source = in.Rules
	}
	if raw.TestSuite != nil {
		if in.TestCases != nil {
			return nil, fmt.Errorf("input has both testCases and testSuite; give one")
		}
		in.TestCases = make([]C, len(raw.TestSuite.TestCases))
		for i, rc := range raw.TestSuite.TestCases {
			var tc TestAPICase
			if err := Decode(rc, &tc); err != nil {
				return nil, fmt.Errorf("testSuite.testCases[%d]: %v", i, err)
			}
			conv, ok := any(&in.TestCases[i]).(fromTestAPI)
			if !ok {
				return nil, fmt.Errorf("this simulator does not read the Rules Test API's testSuite shape")
			}
			if err := conv.FromTestAPI(tc); err != nil {
				return nil, fmt.Errorf("testSuite.testCases[%d].%v", i, err)
			}
		}
	}
	if in.TestCases == nil {
		return nil, fmt.Errorf("input has no testCases array")
	}
	return &in, nil
}

// Run prepares every case first — a malformed one is an error naming it
// (testCases[i].field: problem) and no case runs — then runs each and
// collects the report. A case without a description is named "case N".
func Run[C any](cases []C, prepare func(c *C) (run func() Case, err error)) (*Report, error) {
	runs := make([]func() Case, len(cases))
	for i := range cases {
		run, err := prepare(&cases[i])
		if err != nil {
			return nil, fmt.Errorf("testCases[%d].%v", i, err)
		}
		runs[i] = run
	}
	rep := &Report{Results: []Case{}}
	for i, run := range runs {
		c := run()
		if c.Description == "" {
			c.Description = fmt.Sprintf("case %d", i+1)
		}
		rep.Add(c)
	}
	return rep, nil
}

// Decode decodes JSON into v keeping numbers exact (json.Number).
func Decode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// Present reports whether a case field was given: neither absent nor null.
func Present(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s != "" && s != "null"
}
