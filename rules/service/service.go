// Package service holds what the Firestore and Storage rules bindings
// share: compiling a rules file for a service, request.auth as rules see
// it, deciding a request's matched allow statements, and the parts of a
// simulator case both services read the same way (method, expectation,
// requestTime, auth and the function-mock table). Each binding keeps only
// what is its own: paths, resources, lookups and their limits.
package service

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// Compile parses a rules file, checks it with opts (plus the service's own
// extra checks, which may be nil) and prepares it for evaluation. A file
// without a name is called defaultName. It returns every diagnostic,
// sorted; the program is nil when any diagnostic is an error.
func Compile(file *source.File, defaultName string, opts check.Options, extra func(*ast.Ruleset) source.Diagnostics) (*eval.Program, source.Diagnostics) {
	if file.Name == "" {
		file = source.NewFile(defaultName, file.Text)
	}
	rs, diags := parser.Parse(file)
	if !diags.HasErrors() {
		diags = append(diags, check.Check(rs, opts)...)
		if extra != nil {
			diags = append(diags, extra(rs)...)
		}
	}
	diags.Sort()
	if diags.HasErrors() {
		return nil, diags
	}
	return eval.NewProgram(rs), diags
}

// Auth is request.auth: the caller's uid and token claims.
type Auth struct {
	UID   string
	Token map[string]any
}

// AuthValue is request.auth for a request: a map (an *AuthRecord) with uid
// (when there is one) and token (empty when no claims are given); null for an
// unauthenticated request, or unbound (ok false) in Rules Test API mode,
// where reading an absent auth errors.
func AuthValue(a *Auth, testAPI bool) (v value.Value, ok bool) {
	if a == nil {
		if testAPI {
			return nil, false
		}
		return value.Null{}, true
	}
	r := &AuthRecord{}
	r.Reset(a)
	return r, true
}

// Decided is a request decided against its matched blocks.
type Decided struct {
	Verdicts eval.Verdicts
	// Notes are the decision's notes: the verdicts' notes, or why no
	// block matched.
	Notes       []string
	Attempts    []eval.Attempt
	Expressions int
	Run         *eval.Run // nil when no block matched
}

// Decide matches segs against the program and evaluates the allow
// statements that cover method in the environment env builds (called only
// when a block matched; its Program is p); display renders the path as a
// "No match block found" note names it. errorNotes may add service notes for
// an evaluation error. The first results are kept in scratch (nil:
// allocated), which must live as long as the Decided.
func Decide(p *eval.Program, segs []string, display func() string, method string, env func() *eval.Env, errorNotes func(*value.Error) []string, scratch *eval.Scratch) Decided {
	matched, attempts := p.MatchIn(segs, scratch)
	d := Decided{Attempts: attempts, Verdicts: eval.Verdicts{Outcome: sim.Deny, Deciding: -1}}
	if len(matched) == 0 {
		d.Notes = []string{fmt.Sprintf("No match block found for path '%s'", display())}
		return d
	}
	d.Run = eval.NewRun(env())
	d.Verdicts = d.Run.AllowsIn(matched, method, errorNotes, scratch)
	d.Notes = d.Verdicts.Notes
	d.Expressions = d.Run.Count()
	return d
}

// Methods of a request, in both services.
const (
	Get    = "get"
	List   = "list"
	Create = "create"
	Update = "update"
	Delete = "delete"
)

// CaseBasics validates a simulator case's method and expectation and
// resolves its request time (now when requestTime is empty). Errors name
// the field, as a simulator report shows them.
func CaseBasics(method, expectation, requestTime string, now time.Time) (string, time.Time, error) {
	m := strings.ToLower(method)
	switch m {
	case Get, List, Create, Update, Delete:
	case "read", "write":
		return "", time.Time{}, fmt.Errorf("method: %q is a rules umbrella, not a request; use get or list (read), create, update or delete (write)", method)
	default:
		return "", time.Time{}, fmt.Errorf("method: %q is not one of get, list, create, update, delete", method)
	}
	if expectation != "" {
		switch strings.ToUpper(expectation) {
		case "ALLOW", "DENY":
		default:
			return "", time.Time{}, fmt.Errorf("expectation: %q is not ALLOW or DENY", expectation)
		}
	}
	t := now
	if requestTime != "" {
		parsed, err := time.Parse(time.RFC3339Nano, requestTime)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("requestTime: %q is not ISO-8601 (e.g. 2026-01-02T03:04:05Z)", requestTime)
		}
		t = parsed
	}
	return m, t, nil
}

// CaseAuth decodes a simulator case's auth ({uid, token?}); nil when the
// case gives none. revive, when not nil, converts the token's typed
// markers (timestamps, …) before it is checked as a rules value.
func CaseAuth(raw json.RawMessage, revive func(map[string]any) (map[string]any, error)) (*Auth, error) {
	if !sim.Present(raw) {
		return nil, nil
	}
	var a struct {
		UID   string         `json:"uid"`
		Token map[string]any `json:"token"`
	}
	if err := sim.Decode(raw, &a); err != nil {
		return nil, fmt.Errorf("auth: must be {uid, token?}: %v", err)
	}
	if revive != nil {
		t, err := revive(a.Token)
		if err != nil {
			return nil, fmt.Errorf("auth.token: %v", err)
		}
		a.Token = t
	}
	if _, err := value.FromGo(a.Token); err != nil {
		return nil, fmt.Errorf("auth.token: %v", err)
	}
	return &Auth{UID: a.UID, Token: a.Token}, nil
}

// MockPath is a function mock's document path relative to the documents
// root: users/alice and /databases/(default)/documents/users/alice are the
// same document.
func MockPath(p string) string {
	p = strings.Trim(p, "/")
	return strings.TrimPrefix(p, "databases/(default)/documents/")
}

// Mocks are a simulator case's mocked documents for get() and exists()
// (Storage's firestore.get() and firestore.exists()).
type Mocks map[string]mockDoc

type mockDoc struct {
	data   value.Map
	exists bool
}

// Get mocks a document's get() result: it exists with data.
func (m Mocks) Get(path string, data value.Map) { m[path] = mockDoc{data: data, exists: true} }

// Exists mocks exists(): true does not override a get() mock of the same
// path (its data stays), false does.
func (m Mocks) Exists(path string, exists bool) {
	if _, has := m[path]; !has || !exists {
		m[path] = mockDoc{exists: exists, data: value.Map{}}
	}
}

// Lookup resolves a document from the mocks; notMocked is the error for a
// path no mock names.
func (m Mocks) Lookup(notMocked error) func(path string) (value.Map, bool, error) {
	return func(path string) (value.Map, bool, error) {
		d, ok := m[path]
		if !ok {
			return nil, false, notMocked
		}
		return d.data, d.exists, nil
	}
}

// MockExists decodes an exists mock's result.
func MockExists(raw json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("an exists mock's result must be true or false")
	}
	return b, nil
}
