package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

func init() {
	register(command{
		path:    "database rules lint",
		args:    "PATH [--format text|json|sarif]",
		summary: "lint Realtime Database rules (database.rules.json)",
		run:     runDatabaseRulesLint,
	})
	register(command{
		path:    "database rules simulate",
		args:    "--stdin [--format text|json]",
		summary: "run Realtime Database rules test cases read from stdin",
		run:     runDatabaseRulesSimulate,
	})
	register(command{
		path:    "database rules validate",
		args:    "PATH",
		summary: "check that Realtime Database rules compile",
		run:     runDatabaseRulesValidate,
	})
}

// rtdbTool describes the RTDB rules checker for SARIF output.
var rtdbTool = source.Tool{Name: "pyric database rules lint", Rules: rtdb.Codes}

func runDatabaseRulesLint(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("database rules lint", stdio)
	format := formatFlag(fs, stdio, "text, json or sarif")
	pos, ok := parseFlags(fs, args)
	if !ok {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(stdio.Err, "usage: pyric database rules lint PATH [--format text|json|sarif]")
		return exitError
	}
	f, err := readSource(pos[0])
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric: %v\n", err)
		return exitError
	}
	res := rtdb.Lint(f)
	code := writeLint(stdio, *format, f, res.Diagnostics, res.Metrics, rtdbTool)
	if res.Unparseable {
		// Not JSON at all: nothing could be checked.
		return exitError
	}
	return code
}

func runDatabaseRulesValidate(_ context.Context, args []string, stdio Stdio) int {
	return runValidate("database", func(f *source.File) source.Diagnostics {
		_, diags := rtdb.Compile(f)
		return diags
	}, args, stdio)
}

// simulateInput is what `database rules simulate --stdin` reads.
type simulateInput struct {
	Source    json.RawMessage   `json:"source"`
	Rules     json.RawMessage   `json:"rules"` // alias of source
	TestCases []json.RawMessage `json:"testCases"`
}

// simulateCase is one test case of the input.
type simulateCase struct {
	Description string          `json:"description"`
	Expectation string          `json:"expectation"`
	Operation   string          `json:"operation"`
	Path        *string         `json:"path"`
	Auth        json.RawMessage `json:"auth"`
	Data        any             `json:"data"`
	NewData     any             `json:"newData"`
	Now         json.RawMessage `json:"now"` // ISO-8601 string or epoch milliseconds
}

type simulateAuth struct {
	UID      string         `json:"uid"`
	Provider string         `json:"provider"`
	Token    map[string]any `json:"token"`
}

func runDatabaseRulesSimulate(_ context.Context, args []string, stdio Stdio) int {
	return runSimulate(simulation{service: "database", load: func(b []byte) (*source.File, source.Diagnostics, func() (*sim.Report, error), *sim.Error) {
		file, cases, e := decodeSimulateInput(b)
		if e != nil {
			return nil, nil, nil, e
		}
		rs, diags := rtdb.Compile(file)
		if rs == nil {
			return file, diags, nil, nil
		}
		return file, diags, func() (*sim.Report, error) { return rs.Simulate(cases), nil }, nil
	}}, args, stdio)
}

// decodeSimulateInput reads the rules and cases, reporting the first
// problem as an INVALID_INPUT error naming the field.
func decodeSimulateInput(b []byte) (*source.File, []rtdb.Case, *sim.Error) {
	bad := inputError
	var in simulateInput
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&in); err != nil {
		return nil, nil, bad("standard input is not a JSON object: %v", err)
	}
	raw := in.Source
	if len(raw) == 0 || string(raw) == "null" {
		raw = in.Rules
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, bad(`missing "source": the text of database.rules.json`)
	}
	var text string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, nil, bad(`"source": %v`, err)
		}
	} else if raw[0] == '{' {
		text = string(raw) // the rules tree given as JSON itself
	} else {
		return nil, nil, bad(`"source" must be the rules file as a string`)
	}
	if in.TestCases == nil {
		return nil, nil, bad(`missing "testCases": a list of cases`)
	}
	var cases []rtdb.Case
	for i, rawCase := range in.TestCases {
		c, err := decodeSimulateCase(rawCase)
		if err != "" {
			return nil, nil, bad("testCases[%d]%s", i, err)
		}
		cases = append(cases, c)
	}
	return source.NewFile("database.rules.json", text), cases, nil
}

// decodeSimulateCase returns the case or a problem starting with the field
// path (".operation: ...").
func decodeSimulateCase(raw json.RawMessage) (rtdb.Case, string) {
	var sc simulateCase
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&sc); err != nil {
		return rtdb.Case{}, ": " + err.Error()
	}
	c := rtdb.Case{Description: sc.Description, Data: sc.Data, NewData: sc.NewData}
	switch strings.ToUpper(sc.Expectation) {
	case "ALLOW":
		c.Expectation = sim.Allow
	case "DENY":
		c.Expectation = sim.Deny
	default:
		return c, fmt.Sprintf(".expectation: want ALLOW or DENY, got %q", sc.Expectation)
	}
	switch sc.Operation {
	case "read":
		c.Operation = rtdb.Read
	case "write":
		c.Operation = rtdb.Write
	default:
		return c, fmt.Sprintf(".operation: want read or write, got %q", sc.Operation)
	}
	if sc.Path == nil {
		return c, `.path: missing, e.g. "/users/alice"`
	}
	c.Path = *sc.Path
	if len(sc.Auth) > 0 && string(sc.Auth) != "null" {
		var a simulateAuth
		ad := json.NewDecoder(bytes.NewReader(sc.Auth))
		ad.UseNumber()
		if err := ad.Decode(&a); err != nil {
			return c, ".auth: want null or {uid, provider, token}: " + err.Error()
		}
		c.Auth = &rtdb.Auth{UID: a.UID, Provider: a.Provider, Token: tokenClaims(a)}
	}
	if len(sc.Now) > 0 && string(sc.Now) != "null" {
		var ms json.Number
		var iso string
		switch {
		case json.Unmarshal(sc.Now, &iso) == nil:
			t, err := time.Parse(time.RFC3339Nano, iso)
			if err != nil {
				return c, ".now: want an ISO-8601 time or epoch milliseconds: " + err.Error()
			}
			c.Now = t
		case json.Unmarshal(sc.Now, &ms) == nil:
			n, err := ms.Int64()
			if err != nil {
				return c, ".now: want whole epoch milliseconds"
			}
			c.Now = time.UnixMilli(n)
		default:
			return c, ".now: want an ISO-8601 time or epoch milliseconds"
		}
	}
	return c, ""
}

// tokenClaims fills the claims every Firebase ID token carries when the
// case leaves them out: sub (the uid) and firebase.sign_in_provider.
func tokenClaims(a simulateAuth) map[string]any {
	t := a.Token
	if t == nil {
		t = map[string]any{}
	}
	if _, ok := t["sub"]; !ok && a.UID != "" {
		t["sub"] = a.UID
	}
	if a.Provider != "" {
		fb, ok := t["firebase"].(map[string]any)
		if !ok && t["firebase"] == nil {
			fb = map[string]any{}
			t["firebase"] = fb
		}
		if fb != nil {
			if _, ok := fb["sign_in_provider"]; !ok {
				fb["sign_in_provider"] = a.Provider
			}
		}
	}
	return t
}
