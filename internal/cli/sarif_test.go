package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// sarifLog is the part of a SARIF 2.1.0 log the lint tests check.
type sarifLog struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID               string `json:"id"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID  string `json:"ruleId"`
			Level   string `json:"level"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine, StartColumn, EndLine, EndColumn int
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			Fixes []struct {
				Description struct {
					Text string `json:"text"`
				} `json:"description"`
			} `json:"fixes"`
		} `json:"results"`
	} `json:"runs"`
}

// decodeSARIF decodes out and checks it is a SARIF 2.1.0 log with one run.
func decodeSARIF(t *testing.T, out string) sarifLog {
	t.Helper()
	var log sarifLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("sarif is not JSON: %v\n%s", err, out)
	}
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif-2.1.0") || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF 2.1.0 log with one run: %s", out)
	}
	return log
}
