// Package conformance loads the verdicts recorded from Google's production
// rules engines (copied unchanged from the shared conformance data into
// testdata/) so each engine's tests can assert them.
package conformance

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
)

//go:embed testdata/*.json
var files embed.FS

// Scenario is one recorded ruleset with its cases. Cases stay raw JSON: each
// engine decodes the fields its service uses (see the shared README).
type Scenario struct {
	ID        string            `json:"id"`
	Service   string            `json:"service"`
	Rationale string            `json:"rationale"`
	Rules     string            `json:"rules"`
	Cases     []json.RawMessage `json:"cases"`
}

// Case holds the fields every recorded case has.
type Case struct {
	Description           string          `json:"description"`
	Expectation           string          `json:"expectation"`
	Production            string          `json:"production"`
	ProductionDiagnostics json.RawMessage `json:"productionDiagnostics,omitempty"`
}

// Load returns the scenarios recorded for service: "firestore", "storage" or "rtdb".
func Load(service string) ([]Scenario, error) {
	b, err := files.ReadFile("testdata/" + service + ".json")
	if err != nil {
		return nil, fmt.Errorf("conformance: no data for service %q", service)
	}
	var out []Scenario
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("conformance: %s.json: %w", service, err)
	}
	return out, nil
}

// Decode decodes a raw case into v with numbers kept as json.Number, so an
// integral number can become an int and a fractional one a float, as the
// shared README prescribes.
func Decode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// Construct is one entry of rules-language.json.
type Construct struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`   // binding, function, method, operator, rule-kind, semantic
	Status       string `json:"status"` // accepted, rejected, unprobeable
	ReceiverType string `json:"receiverType,omitempty"`
	ProbeNote    string `json:"probeNote,omitempty"`
	Note         string `json:"note,omitempty"`
}

// Language returns every construct of the rules languages, keyed by service.
func Language() (map[string][]Construct, error) {
	b, err := files.ReadFile("testdata/rules-language.json")
	if err != nil {
		return nil, err
	}
	var out map[string][]Construct
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("conformance: rules-language.json: %w", err)
	}
	return out, nil
}

// EachCase calls fn with every case recorded for service, decoded (as
// Decode does) into a C, and its scenario, in the recorded order; it stops
// at the first error.
func EachCase[C any](service string, fn func(s Scenario, c C) error) error {
	scenarios, err := Load(service)
	if err != nil {
		return err
	}
	for _, s := range scenarios {
		for i, raw := range s.Cases {
			var c C
			if err := Decode(raw, &c); err != nil {
				return fmt.Errorf("conformance: %s case %d: %w", s.ID, i, err)
			}
			if err := fn(s, c); err != nil {
				return err
			}
		}
	}
	return nil
}
