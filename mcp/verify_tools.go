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
	Fixture           string   `json:"fixture,omitempty" jsonschema:"path of a captured session (schema pyric.verify.fixture.v1, e.g. .pyric/last-session.json); omit to verify the running server's capture"`
	Rules             string   `json:"rules,omitempty" jsonschema:"candidate firestore.rules source text; omit (with rulesPath) to replay against the rules captured in the fixture"`
	RulesPath         string   `json:"rulesPath,omitempty" jsonschema:"path of a candidate firestore.rules file (instead of rules)"`
	DatabaseRules     string   `json:"databaseRules,omitempty" jsonschema:"candidate database.rules.json text for the Realtime Database replay"`
	DatabaseRulesPath string   `json:"databaseRulesPath,omitempty" jsonschema:"path of a candidate database.rules.json (instead of databaseRules)"`
	StorageRules      string   `json:"storageRules,omitempty" jsonschema:"candidate storage.rules text for the Storage replay"`
	StorageRulesPath  string   `json:"storageRulesPath,omitempty" jsonschema:"path of a candidate storage.rules (instead of storageRules)"`
	Services          []string `json:"services,omitempty" jsonschema:"services to verify: firestore, database, storage (default: every service the session used); with caseDerivation, the first names whose cases to derive"`
	CaseDerivation    bool     `json:"caseDerivation,omitempty" jsonschema:"instead of verifying, return the session as its simulator's input (source, testCases), as pyric verify --derive-cases does"`
}

func (s *Server) addVerifyTools() {
	addTool(s, "pyric_verify_fixture", "Replay a captured session (a fixture file, or the running server's capture) against candidate Firestore, Realtime Database and Storage rules and report what would break: requests now denied or now allowed, documents, locations or objects whose final state drifts, and requests the replay cannot decide. data is exactly `pyric verify --format json`: {ok, services: {firestore|database|storage: {ok, checkedEvents, divergences}}}.",
		func(ctx context.Context, in *verifyIn, _ []byte) *result { return s.verifyFixture(in) })
}

func (s *Server) verifyFixture(in *verifyIn) *result {
	for _, svc := range in.Services {
		if svc != "firestore" && svc != "database" && svc != "storage" {
			return failure("UNSUPPORTED_SERVICE", fmt.Sprintf("services: %q is not a service verify replays (firestore, database, storage)", svc), true, "drop it from services (or omit services)")
		}
	}
	if len(s.opts.Registrations) == 0 {
		return failure("VERIFY_UNAVAILABLE", "this MCP server was started without the services verify replays with (mcp.Options.Registrations)", false, "start it with pyric mcp or pyric serve, which pass them")
	}
	opts := verify.Options{Services: in.Services, Registrations: s.opts.Registrations, Candidates: map[string]*source.File{}}
	for _, c := range []struct {
		text, path, textArg, pathArg, name string
		service                            string
	}{
		{in.Rules, in.RulesPath, "rules", "rulesPath", "candidate.rules", "firestore"},
		{in.DatabaseRules, in.DatabaseRulesPath, "databaseRules", "databaseRulesPath", "candidate.rules.json", "database"},
		{in.StorageRules, in.StorageRulesPath, "storageRules", "storageRulesPath", "candidate.storage.rules", "storage"},
	} {
		switch {
		case c.text != "" && c.path != "":
			return invalid("give %s or %s, not both", c.textArg, c.pathArg)
		case c.text != "":
			opts.Candidates[c.service] = source.NewFile(c.name, c.text)
		case c.path != "":
			b, bad := readBounded(c.pathArg, c.path, MaxRulesBytes, "RULES_NOT_FOUND")
			if bad != nil {
				return bad
			}
			opts.Candidates[c.service] = source.NewFile(c.path, string(b))
		}
	}
	f, bad := s.fixture(in.Fixture)
	if bad != nil {
		return bad
	}
	if in.CaseDerivation {
		svc := "firestore"
		if len(in.Services) > 0 {
			svc = in.Services[0]
		}
		if svc != "database" && svc != "storage" {
			svc = "firestore"
		}
		d, n, unsupported, err := verify.DeriveService(f, svc, opts)
		if err != nil {
			return failure("FIXTURE_INVALID", err.Error(), false, "capture the session again")
		}
		return okResult(fmt.Sprintf("%d %s simulator case(s) derived from %d event(s); %d event(s) unsupported", n, svc, len(f.Events), unsupported), d)
	}
	res, err := verify.Run(f, opts)
	if err != nil {
		var re *verify.RulesError
		if errors.As(err, &re) {
			r := failure("RULES_INVALID", err.Error(), true, "fix the candidate rules (the service's lint tool shows every diagnostic) and call again")
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
	f, err := capture.DecodeWith(data, s.opts.Registrations)
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
