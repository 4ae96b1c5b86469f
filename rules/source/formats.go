package source

import (
	"encoding/json"
	"io"
)

// WriteText prints every diagnostic with Render.
func WriteText(w io.Writer, f *File, ds Diagnostics) error {
	for _, d := range ds {
		if _, err := io.WriteString(w, Render(f, d)); err != nil {
			return err
		}
	}
	return nil
}

// jsonDiagnostic is the JSON form of a diagnostic used by every lint command.
type jsonDiagnostic struct {
	Code      string `json:"code"`
	Severity  string `json:"severity"`
	Message   string `json:"message"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Fix       string `json:"fix,omitempty"`
}

// WriteJSON prints {"diagnostics": [...], "metrics": metrics}. metrics may be
// nil, which prints an empty object.
func WriteJSON(w io.Writer, ds Diagnostics, metrics any) error {
	out := struct {
		Diagnostics []jsonDiagnostic `json:"diagnostics"`
		Metrics     any              `json:"metrics"`
	}{Diagnostics: []jsonDiagnostic{}, Metrics: metrics}
	if metrics == nil {
		out.Metrics = struct{}{}
	}
	for _, d := range ds {
		out.Diagnostics = append(out.Diagnostics, jsonDiagnostic{
			Code: d.Code, Severity: d.Severity.String(), Message: d.Message,
			Line: d.Span.Start.Line, Column: d.Span.Start.Column,
			EndLine: d.Span.End.Line, EndColumn: d.Span.End.Column, Fix: d.Fix,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// Tool describes the program that produced diagnostics, for SARIF.
type Tool struct {
	Name    string
	Version string
	URI     string
	// Rules maps each code the tool can emit to a short description.
	Rules map[string]string
}

// WriteSARIF prints the diagnostics as a SARIF 2.1.0 log with one run, for
// code-scanning tools. artifact is the file's path as the tool should report it.
func WriteSARIF(w io.Writer, tool Tool, artifact string, ds Diagnostics) error {
	type msg struct {
		Text string `json:"text"`
	}
	type region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
		EndLine     int `json:"endLine,omitempty"`
		EndColumn   int `json:"endColumn,omitempty"`
	}
	type physical struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region *region `json:"region,omitempty"`
	}
	type location struct {
		PhysicalLocation physical `json:"physicalLocation"`
	}
	type fix struct {
		Description msg `json:"description"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		Level     string     `json:"level"`
		Message   msg        `json:"message"`
		Locations []location `json:"locations"`
		Fixes     []fix      `json:"fixes,omitempty"`
	}
	type rule struct {
		ID               string `json:"id"`
		ShortDescription msg    `json:"shortDescription"`
	}
	type driver struct {
		Name           string `json:"name"`
		Version        string `json:"version,omitempty"`
		InformationURI string `json:"informationUri,omitempty"`
		Rules          []rule `json:"rules"`
	}
	type run struct {
		Tool struct {
			Driver driver `json:"driver"`
		} `json:"tool"`
		Results []result `json:"results"`
	}
	var r run
	r.Tool.Driver = driver{Name: tool.Name, Version: tool.Version, InformationURI: tool.URI, Rules: []rule{}}
	seen := map[string]bool{}
	for _, d := range ds {
		if seen[d.Code] {
			continue
		}
		seen[d.Code] = true
		desc := tool.Rules[d.Code]
		if desc == "" {
			desc = d.Code
		}
		r.Tool.Driver.Rules = append(r.Tool.Driver.Rules, rule{ID: d.Code, ShortDescription: msg{desc}})
	}
	r.Results = []result{}
	for _, d := range ds {
		level := "error"
		switch d.Severity {
		case Warning:
			level = "warning"
		case Info:
			level = "note"
		}
		var loc location
		loc.PhysicalLocation.ArtifactLocation.URI = artifact
		if d.Span.Start.IsValid() {
			rg := &region{StartLine: d.Span.Start.Line, StartColumn: d.Span.Start.Column}
			if d.Span.End.IsValid() {
				rg.EndLine, rg.EndColumn = d.Span.End.Line, d.Span.End.Column
			}
			loc.PhysicalLocation.Region = rg
		}
		res := result{RuleID: d.Code, Level: level, Message: msg{d.Message}, Locations: []location{loc}}
		if d.Fix != "" {
			res.Fixes = []fix{{Description: msg{d.Fix}}}
		}
		r.Results = append(r.Results, res)
	}
	log := struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []run  `json:"runs"`
	}{"https://json.schemastore.org/sarif-2.1.0.json", "2.1.0", []run{r}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}
