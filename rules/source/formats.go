package source

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteText prints the first MaxTextDiagnostics diagnostics with Render,
// then "… and N more (E errors, W warnings)" for the rest.
func WriteText(w io.Writer, f *File, ds Diagnostics) error {
	return WriteTextLimit(w, f, ds, MaxTextDiagnostics)
}

// WriteTextLimit is WriteText with its own cap; max <= 0 prints all.
func WriteTextLimit(w io.Writer, f *File, ds Diagnostics, max int) error {
	shown, rest := pickShown(ds, max)
	for _, d := range shown {
		if _, err := io.WriteString(w, Render(f, d)); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		errs := 0
		for _, d := range rest {
			if d.Severity == Error {
				errs++
			}
		}
		if _, err := fmt.Fprintf(w, "… and %d more (%d errors, %d warnings or notes); --format json lists up to %d\n", len(rest), errs, len(rest)-errs, MaxMachineDiagnostics); err != nil {
			return err
		}
	}
	return nil
}

// pickShown keeps at most max diagnostics, the most severe first (an
// error is never hidden behind thousands of warnings), in their original
// order; rest are the others.
func pickShown(ds Diagnostics, max int) (shown, rest Diagnostics) {
	if max <= 0 || len(ds) <= max {
		return ds, nil
	}
	keep := make([]bool, len(ds))
	n := 0
	for sev := Error; sev >= Info && n < max; sev-- {
		for i, d := range ds {
			if d.Severity == sev && n < max {
				keep[i] = true
				n++
			}
		}
	}
	for i, d := range ds {
		if keep[i] {
			shown = append(shown, d)
		} else {
			rest = append(rest, d)
		}
	}
	return shown, rest
}

// capMachine keeps the first MaxMachineDiagnostics, reporting how many
// were left out.
func capMachine(ds Diagnostics) (Diagnostics, int) {
	shown, rest := pickShown(ds, MaxMachineDiagnostics)
	return shown, len(rest)
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
// nil, which prints an empty object. At most MaxMachineDiagnostics are
// listed; "omitted" counts the rest when there are more.
func WriteJSON(w io.Writer, ds Diagnostics, metrics any) error {
	ds, omitted := capMachine(ds)
	out := struct {
		Diagnostics []jsonDiagnostic `json:"diagnostics"`
		Omitted     int              `json:"omitted,omitempty"`
		Metrics     any              `json:"metrics"`
	}{Diagnostics: []jsonDiagnostic{}, Omitted: omitted, Metrics: metrics}
	if metrics == nil {
		out.Metrics = struct{}{}
	}
	for _, d := range ds {
		out.Diagnostics = append(out.Diagnostics, jsonDiagnostic{
			Code: d.Code, Severity: d.Severity.String(), Message: ClipText(d.Message, MaxMessageBytes),
			Line: d.Span.Start.Line, Column: d.Span.Start.Column,
			EndLine: d.Span.End.Line, EndColumn: d.Span.End.Column, Fix: ClipText(d.Fix, MaxMessageBytes),
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
// At most MaxMachineDiagnostics results are listed; the run's properties
// count the rest ("omittedResults").
func WriteSARIF(w io.Writer, tool Tool, artifact string, ds Diagnostics) error {
	ds, omitted := capMachine(ds)
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
		Results    []result       `json:"results"`
		Properties map[string]int `json:"properties,omitempty"`
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
	if omitted > 0 {
		r.Properties = map[string]int{"omittedResults": omitted}
	}
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
		res := result{RuleID: d.Code, Level: level, Message: msg{ClipText(d.Message, MaxMessageBytes)}, Locations: []location{loc}}
		if d.Fix != "" {
			res.Fixes = []fix{{Description: msg{ClipText(d.Fix, MaxMessageBytes)}}}
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
