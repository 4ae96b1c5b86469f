package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/verify"
)

// Bounds of the files pyric_verify_fixture reads.
const (
	MaxFixtureBytes = 256 << 20
	MaxRulesBytes   = 4 << 20
)

type verifyIn struct {
	Fixture        string   `json:"fixture,omitempty" jsonschema:"path of a captured session (schema pyric.verify.fixture.v1, e.g. .pyric/last-session.json); omit to verify the running server's capture"`
	Rules          string   `json:"rules,omitempty" jsonschema:"candidate firestore.rules source text; omit (with rulesPath) to replay against the rules captured in the fixture"`
	RulesPath      string   `json:"rulesPath,omitempty" jsonschema:"path of a candidate firestore.rules file (instead of rules)"`
	Services       []string `json:"services,omitempty" jsonschema:"services to verify; only firestore is replayed (the default)"`
	CaseDerivation bool     `json:"caseDerivation,omitempty" jsonschema:"instead of verifying, return the session as firestore_simulate_rules input (source, testCases), as pyric verify --derive-cases does"`
}

func (s *Server) addVerifyTools() {
	addTool(s, "pyric_verify_fixture", "Replay a captured session (a fixture file, or the running server's capture) against candidate Firestore rules and report what would break: requests now denied or now allowed, documents whose final state drifts, and requests the replay cannot decide. data is exactly `pyric verify --format json`: {ok, services: {firestore: {ok, checkedEvents, divergences}}}.",
		func(ctx context.Context, in *verifyIn, _ []byte) *result { return s.verifyFixture(in) })
}

func (s *Server) verifyFixture(in *verifyIn) *result {
	for _, svc := range in.Services {
		if svc != "firestore" {
			return failure("UNSUPPORTED_SERVICE", fmt.Sprintf("services: %q sessions are not replayed yet; only firestore is verified", svc), true, "drop it from services (or omit services)")
		}
	}
	if in.Rules != "" && in.RulesPath != "" {
		return invalid("give rules or rulesPath, not both")
	}
	var candidate *source.File
	switch {
	case in.Rules != "":
		candidate = source.NewFile("candidate.rules", in.Rules)
	case in.RulesPath != "":
		b, bad := readBounded("rulesPath", in.RulesPath, MaxRulesBytes, "RULES_NOT_FOUND")
		if bad != nil {
			return bad
		}
		candidate = source.NewFile(in.RulesPath, string(b))
	}
	f, bad := s.fixture(in.Fixture)
	if bad != nil {
		return bad
	}
	if in.CaseDerivation {
		src := ""
		if candidate != nil {
			src = candidate.Text
		} else if sd := f.Services["firestore"]; sd != nil && sd.Rules != nil {
			src = sd.Rules.Source
		}
		d := verify.DeriveCases(f, src)
		return okResult(fmt.Sprintf("%d simulator case(s) derived from %d event(s); %d event(s) unsupported", len(d.TestCases), len(f.Events), len(d.Unsupported)), d)
	}
	res, err := verify.Run(f, verify.Options{FirestoreRules: candidate})
	if err != nil {
		var re *verify.RulesError
		if errors.As(err, &re) {
			r := failure("RULES_INVALID", err.Error(), true, "fix the candidate rules (firestore_lint_rules shows every diagnostic) and call again")
			r.data = map[string]any{"diagnostics": re.Diags}
			return r
		}
		return failure("FIXTURE_INVALID", err.Error(), false, "capture the session again")
	}
	checked, divergences := 0, 0
	for _, sr := range res.Services {
		checked += sr.CheckedEvents
		divergences += len(sr.Divergences)
	}
	summary := fmt.Sprintf("ok: %d request(s) re-decided, no divergence", checked)
	if !res.OK {
		summary = fmt.Sprintf("FAILED: %d divergence(s) over %d request(s) re-decided", divergences, checked)
	}
	// A divergence is a finding, not a failed call: ok mirrors the
	// verdict and data carries it either way.
	return &result{ok: res.OK, summary: summary, data: res}
}

// fixture loads the fixture at path, or the running server's capture.
func (s *Server) fixture(path string) (*capture.Fixture, *result) {
	if path == "" {
		if s.opts.Capture == nil {
			return nil, failure("NO_CAPTURE", "no fixture given and this server records no capture", true, "pass fixture (the path of a captured session, e.g. .pyric/last-session.json), or run pyric serve with capture on")
		}
		f, err := s.opts.Capture()
		if err != nil {
			return nil, failure("CAPTURE_FAILED", fmt.Sprintf("the running server's capture: %v", err), false, "pass a fixture path instead")
		}
		return f, nil
	}
	data, bad := readBounded("fixture", path, MaxFixtureBytes, "FIXTURE_NOT_FOUND")
	if bad != nil {
		return nil, bad
	}
	f, err := capture.Decode(data)
	if err != nil {
		return nil, failure("FIXTURE_INVALID", fmt.Sprintf("fixture %s: %v", path, err), true, "give a file written by pyric serve's capture (schema "+capture.Schema+")")
	}
	return f, nil
}

// readBounded reads a regular file of at most limit bytes (no device,
// FIFO or directory: those could block or never end).
func readBounded(arg, path string, limit int64, missing string) ([]byte, *result) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, failure(missing, fmt.Sprintf("%s: %v", arg, err), true, "give the path of a readable file")
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, invalid("%s: %s is not a regular file", arg, path)
	}
	if st.Size() > limit {
		return nil, invalid("%s: %s is larger than %d bytes", arg, path, limit)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, failure(missing, fmt.Sprintf("%s: %v", arg, err), true, "give the path of a readable file")
	}
	if int64(len(data)) > limit {
		return nil, invalid("%s: %s is larger than %d bytes", arg, path, limit)
	}
	return data, nil
}
