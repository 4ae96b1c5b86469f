package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/verify"
)

func init() {
	register(command{
		path:    "verify",
		args:    "[--fixture F] --rules CANDIDATE [--database-rules F] [--storage-rules F] [--format text|json|junit] [--derive-cases FILE [--service firestore|database|storage]]",
		summary: "replay a captured session against candidate rules and report what would break",
		run:     runVerify,
	})
}

// defaultFixture is where `pyric serve` captures by default.
var defaultFixture = filepath.Join(".pyric", "last-session.json")

func runVerify(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("verify", stdio)
	fixture := fs.String("fixture", defaultFixture, "the captured session (schema pyric.verify.fixture.v1)")
	rulesPath := fs.String("rules", "", "candidate firestore.rules (default: the rules captured in the fixture)")
	dbRules := fs.String("database-rules", "", "candidate database.rules.json (default: the rules captured in the fixture)")
	stRules := fs.String("storage-rules", "", "candidate storage.rules (default: the rules captured in the fixture)")
	format := fs.String("format", "text", "output format: text, json or junit")
	derive := fs.String("derive-cases", "", "write the session as `pyric <service> rules simulate` input to this file (- for stdout) instead of verifying")
	service := fs.String("service", "firestore", "the service whose cases --derive-cases writes: firestore, database or storage")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) > 0 {
		fmt.Fprintf(stdio.Err, "pyric verify: unexpected argument %q\n", pos[0])
		return exitError
	}
	switch *format {
	case "text", "json", "junit":
	default:
		fmt.Fprintf(stdio.Err, "pyric verify: --format %q: must be text, json or junit\n", *format)
		return exitError
	}
	data, err := os.ReadFile(*fixture)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric verify: %v\n", err)
		return exitError
	}
	f, err := capture.DecodeWith(data, backend.Services(&backend.Options{}))
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric verify: %s: %v\n", *fixture, err)
		return exitError
	}
	opts := verify.Options{Registrations: backend.Services(&backend.Options{}), Candidates: map[string]*source.File{}}
	for _, c := range []struct{ path, service string }{{*rulesPath, "firestore"}, {*dbRules, "database"}, {*stRules, "storage"}} {
		if c.path == "" {
			continue
		}
		file, err := readSource(c.path)
		if err != nil {
			fmt.Fprintf(stdio.Err, "pyric verify: %v\n", err)
			return exitError
		}
		opts.Candidates[c.service] = file
	}
	if *derive != "" {
		out, err := deriveCases(f, *service, opts)
		if err != nil {
			fmt.Fprintf(stdio.Err, "pyric verify: %v\n", err)
			return exitError
		}
		if *derive == "-" {
			stdio.Out.Write(out)
			return exitOK
		}
		if err := capture.WriteFileAtomic(*derive, out); err != nil {
			fmt.Fprintf(stdio.Err, "pyric verify: %v\n", err)
			return exitError
		}
		return exitOK
	}
	res, err := verify.Run(f, opts)
	if err != nil {
		var re *verify.RulesError
		if errors.As(err, &re) {
			fmt.Fprintf(stdio.Err, "pyric verify: %v\n", err)
		} else {
			fmt.Fprintf(stdio.Err, "pyric verify: %s: %v\n", *fixture, err)
		}
		return exitError
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		enc.Encode(res)
	case "junit":
		writeJUnit(stdio.Out, res)
	default:
		writeVerifyText(stdio.Out, res)
	}
	if !res.OK {
		return exitFailure
	}
	return exitOK
}

// deriveCases is one service's session as its simulator's input: the
// candidate rules given for it, else the captured ones.
func deriveCases(f *capture.Fixture, service string, opts verify.Options) ([]byte, error) {
	v, _, _, err := verify.DeriveService(f, service, opts)
	if errors.Is(err, verify.ErrUnknownService) {
		return nil, fmt.Errorf("--service: %w", err)
	}
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	return append(out, '\n'), err
}

func writeVerifyText(w io.Writer, res *verify.Result) {
	for _, name := range sortedKeys(res.Services) {
		s := res.Services[name]
		status := "ok"
		if !s.OK {
			status = "FAILED"
		}
		fmt.Fprintf(w, "%s: %s (%d requests re-decided, %d divergences)\n", name, status, s.CheckedEvents, len(s.Divergences))
		for _, d := range s.Divergences {
			switch d.Kind {
			case verify.StateDrift, verify.ExpectedDrift:
				fmt.Fprintf(w, "  %s %s: captured %s, replayed %s", d.Kind, d.Path, jsonText(d.Before), jsonText(d.After))
				if d.Drift != "" {
					fmt.Fprintf(w, " (%s)", d.Drift)
				}
				fmt.Fprintln(w)
			default:
				uid := d.UID
				if uid == "" {
					uid = "-"
				}
				fmt.Fprintf(w, "  %s %s %s %s uid=%s: %v -> %v\n", d.Kind, d.EventID, d.Method, d.Path, uid, d.Before, d.After)
			}
			if d.Explanation != "" {
				fmt.Fprintf(w, "    %s\n", d.Explanation)
			}
		}
	}
	if res.OK {
		fmt.Fprintln(w, "verify: ok")
	} else {
		fmt.Fprintln(w, "verify: FAILED")
	}
}

func jsonText(v any) string {
	if v == nil {
		return "(absent)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Class   string        `xml:"classname,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func writeJUnit(w io.Writer, res *verify.Result) {
	var out junitSuites
	for _, name := range sortedKeys(res.Services) {
		s := res.Services[name]
		suite := junitSuite{Name: "pyric verify " + name}
		suite.Cases = append(suite.Cases, junitCase{Name: fmt.Sprintf("%d requests re-decided", s.CheckedEvents), Class: name})
		for _, d := range s.Divergences {
			c := junitCase{Name: fmt.Sprintf("%s %s %s", d.Kind, d.Method, d.Path), Class: name}
			if d.Kind != verify.ExpectedDrift {
				c.Failure = &junitFailure{Message: d.Explanation, Type: d.Kind,
					Text: fmt.Sprintf("event %s uid %s: %s -> %s", d.EventID, d.UID, jsonText(d.Before), jsonText(d.After))}
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, c)
		}
		suite.Tests = len(suite.Cases)
		out.Suites = append(out.Suites, suite)
	}
	io.WriteString(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	enc.Encode(out)
	io.WriteString(w, "\n")
}
