package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Input is what a simulator reads: {"source": rules, "testCases": [...]},
// with "rules" accepted as an alias of "source". C is the service's case.
type Input[C any] struct {
	Source    string `json:"source"`
	Rules     string `json:"rules"`
	TestCases []C    `json:"testCases"`
}

// ParseInput decodes simulator input, keeping JSON numbers exact
// (json.Number) so an integral number can become an int and a fractional
// one a float.
func ParseInput[C any](b []byte) (*Input[C], error) {
	var in Input[C]
	if err := Decode(b, &in); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	if in.Source == "" {
		in.Source = in.Rules
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
