// Package mcp is Pyric's Model Context Protocol server for coding agents,
// built on the official Go SDK: tools to read and write Firestore data as
// any identity, run the rules simulator (execute, batch, declarative
// transactions with $expr, undo/redo), explain denials, simulate and lint
// rules, browse the rules standard library, simulate RTDB access,
// discover a database's schema, crawl the Realtime Database's structure and
// verify a captured session against candidate rules; resources for the rules sources and the
// recent events. Every tool answers with the envelope {ok, summary, data};
// failures carry data.error {code, message, recoverable, hint}. It runs over
// stdio (pyric mcp) or streamable HTTP (Handler, mounted at /mcp).
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/discover"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
)

// Options configure a Server.
type Options struct {
	// Name and Version identify the server to clients.
	Name, Version string
	// RTDB returns the Realtime Database rules source and data that
	// rtdb_simulate_access uses when the call brings none; nil (or an
	// empty source) means no RTDB rules are loaded.
	RTDB func() (rules string, data any)
	// Sessions keeps paused discover walks (nil: a store with the default
	// limits).
	Sessions *discover.SessionStore
	// Capture returns the running server's captured session, which
	// pyric_verify_fixture verifies when the call names no fixture file
	// (e.g. capture.FromSandbox of the serving sandbox); nil: calls must
	// name a fixture.
	Capture func() (*capture.Fixture, error)
	// Policy is the origin and host policy Handler applies (nil: loopback
	// origins and hosts only), as on every pyric port.
	Policy *server.Policy
	// Registrations are the services pyric_verify_fixture replays with
	// (verify.Options.Registrations, e.g. backend.Services); nil: the
	// tool answers that verification is unavailable.
	Registrations []service.Registration
	// FunctionsURL returns the functions port's URL (http://host:port),
	// which functions_list shows in each function's URL; nil: none shown.
	FunctionsURL func() string
}

// Server is the MCP server of one sandbox.
type Server struct {
	sb       *sandbox.Sandbox
	opts     Options
	mcp      *sdk.Server
	sessions *discover.SessionStore

	mu   sync.Mutex
	undo []change
	redo []change

	handlers map[string]sdk.ToolHandler // by tool name, for in-process callers and fuzzing
}

// NewServer builds the MCP server for sb with every tool and resource.
func NewServer(sb *sandbox.Sandbox, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "pyric"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{sb: sb, opts: opts, sessions: opts.Sessions, handlers: map[string]sdk.ToolHandler{}}
	if s.sessions == nil {
		s.sessions = discover.NewSessionStore(discover.SessionOptions{})
	}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version}, &sdk.ServerOptions{
		Instructions: "Pyric: a local Firebase backend. Tools act on the running sandbox. Data tools act as admin unless `as` names a user ({uid, claims}), and then Security Rules decide. Simulator tools take an explicit `auth` ({uid, token} or null for signed out). Every result is {ok, summary, data}; on failure data.error has a code and says whether the call can be corrected and retried (recoverable).",
	})
	s.addFirestoreTools()
	s.addSimulatorTools()
	s.addRulesTools()
	s.addDiscoverTools()
	s.addRTDBTools()
	s.addVerifyTools()
	s.addPubSubTools()
	s.addFunctionsTools()
	s.addFunctionsRunTools()
	s.addResources()
	return s
}

// MCP returns the SDK server (to run it on any transport).
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Run serves one client over t (e.g. &sdk.StdioTransport{}) until it
// disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error { return s.mcp.Run(ctx, t) }

// HTTPSessionTimeout closes streamable HTTP sessions idle this long, so
// clients that vanish without closing hold no memory.
const HTTPSessionTimeout = 30 * time.Minute

// Handler serves MCP over streamable HTTP; mount it at /mcp. Origin and
// Host are validated by Options.Policy (the SDK's own DNS-rebinding
// protection stays on too), and a request's body and JSON-RPC batch are
// bounded (MaxRequestBytes, MaxBatchCalls).
func (s *Server) Handler() http.Handler {
	return guardHTTP(s.opts.Policy, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp },
		&sdk.StreamableHTTPOptions{SessionTimeout: HTTPSessionTimeout}))
}

// LazyHandler is the Handler of the server NewServer(sb, opts) builds
// when the first request arrives, not before: deriving every tool's
// schema by reflection costs tens of milliseconds that a start (pyric
// serve, whose ports serve once it is done) need not wait for.
func LazyHandler(sb *sandbox.Sandbox, opts Options) http.Handler {
	var once sync.Once
	var h http.Handler
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { h = NewServer(sb, opts).Handler() })
		h.ServeHTTP(w, r)
	})
}

// Envelope is every tool's result.
type Envelope struct {
	OK      bool   `json:"ok"`
	Summary string `json:"summary"`
	Data    any    `json:"data,omitempty"`
}

// ToolError is data.error of a failed call.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Recoverable says the caller can fix the input (or the state) and
	// call again; false means retrying the same call will not help.
	Recoverable bool   `json:"recoverable"`
	Hint        string `json:"hint,omitempty"`
}

// result is what a tool handler returns.
type result struct {
	ok      bool
	summary string
	data    any
	err     *ToolError
	who     *identity.Identity // the identity acted as, for the event
}

func okResult(summary string, data any) *result {
	return &result{ok: true, summary: summary, data: data}
}

func failure(code, msg string, recoverable bool, hint string) *result {
	return &result{summary: msg, err: &ToolError{Code: code, Message: msg, Recoverable: recoverable, Hint: hint}}
}

func invalid(format string, args ...any) *result {
	return failure("INVALID_ARGUMENT", fmt.Sprintf(format, args...), true, "correct the argument and call again")
}

// addTool registers a tool whose input schema is inferred from In (field
// descriptions from jsonschema tags). Arguments are validated against the
// schema and decoded with exact numbers (json.Number) before h runs; h
// also gets the raw arguments.
func addTool[In any](s *Server, name, description string, h func(ctx context.Context, in *In, raw []byte) *result) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %s: %v", name, err))
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %s: %v", name, err))
	}
	tool := &sdk.Tool{Name: name, Description: description, InputSchema: schema}
	handler := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		raw := req.Params.Arguments
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			raw = json.RawMessage("{}")
		}
		var r *result
		var generic any
		if err := json.Unmarshal(raw, &generic); err != nil {
			r = invalid("arguments are not JSON: %v", err)
		} else if err := resolved.Validate(generic); err != nil {
			r = invalid("arguments: %v", err)
		} else {
			in := new(In)
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(in); err != nil {
				r = invalid("arguments: %v", err)
			} else {
				if ss := req.Session; ss != nil {
					if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
						ctx = withAgent(ctx, ip.ClientInfo.Name)
					}
				}
				r = s.safely(name, func() *result { return h(ctx, in, raw) })
			}
		}
		return s.finish(ctx, name, start, r), nil
	}
	s.handlers[name] = handler
	s.mcp.AddTool(tool, handler)
}

// safely runs a handler, turning a panic into an INTERNAL failure so one
// bad call never takes the server down.
func (s *Server) safely(name string, f func() *result) (r *result) {
	defer func() {
		if p := recover(); p != nil {
			r = failure("INTERNAL", fmt.Sprintf("%s failed unexpectedly: %v", name, p), false, "report this as a bug")
		}
	}()
	r = f()
	if r == nil {
		r = failure("INTERNAL", name+" returned nothing", false, "report this as a bug")
	}
	return r
}

func (s *Server) finish(ctx context.Context, name string, start time.Time, r *result) *sdk.CallToolResult {
	env := Envelope{OK: r.ok && r.err == nil, Summary: r.summary, Data: r.data}
	if r.err != nil {
		data := map[string]any{"error": r.err}
		if m, ok := r.data.(map[string]any); ok {
			for k, v := range m {
				if k != "error" {
					data[k] = v
				}
			}
		} else if r.data != nil {
			data["detail"] = r.data
		}
		env.Data = data
	}
	b, err := json.Marshal(env)
	if err != nil {
		env = Envelope{Summary: "result not encodable: " + err.Error(), Data: map[string]any{"error": &ToolError{Code: "INTERNAL", Message: err.Error()}}}
		b, _ = json.Marshal(env)
	}
	s.emitToolCall(ctx, name, r, time.Since(start))
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           r.err != nil,
	}
}

// As is the identity a data tool acts as. Absent means admin (rules
// bypassed); {uid, claims} is a signed-in user judged by Security Rules;
// {anonymous: true} is a signed-out client.
type As struct {
	UID       string         `json:"uid,omitempty" jsonschema:"the user id (request.auth.uid)"`
	Claims    map[string]any `json:"claims,omitempty" jsonschema:"ID token claims (request.auth.token), e.g. {\"admin\": true, \"email_verified\": true}"`
	Admin     bool           `json:"admin,omitempty" jsonschema:"act as admin (bypass rules); the default when as is absent"`
	Anonymous bool           `json:"anonymous,omitempty" jsonschema:"act as a signed-out client (request.auth == null)"`
}

func (a *As) identity(ctx context.Context) (identity.Identity, *result) {
	who, bad := a.lens()
	return asAgent(ctx, who), bad
}

func (a *As) lens() (identity.Identity, *result) {
	switch {
	case a == nil:
		return identity.AdminIdentity(), nil
	case a.Admin && (a.UID != "" || a.Anonymous):
		return identity.Identity{}, invalid("as: admin cannot be combined with uid or anonymous")
	case a.Admin:
		return identity.AdminIdentity(), nil
	case a.Anonymous && a.UID != "":
		return identity.Identity{}, invalid("as: anonymous cannot have a uid")
	case a.Anonymous:
		return identity.Anonymous(), nil
	case a.UID == "":
		return identity.Identity{}, invalid("as: give uid (with optional claims), admin: true or anonymous: true")
	}
	return identity.NewUser(a.UID, copyClaims(a.Claims, a.UID)), nil
}

// Auth is the simulator's request.auth: {uid, token} or null.
type Auth struct {
	UID   string         `json:"uid" jsonschema:"the user id (request.auth.uid)"`
	Token map[string]any `json:"token,omitempty" jsonschema:"token claims (request.auth.token)"`
}

func authIdentity(ctx context.Context, a *Auth) identity.Identity {
	if a == nil {
		return asAgent(ctx, identity.Anonymous())
	}
	return asAgent(ctx, identity.NewUser(a.UID, copyClaims(a.Token, a.UID)))
}

// copyClaims returns the claims with sub set, as a real ID token has.
func copyClaims(c map[string]any, uid string) map[string]any {
	out := make(map[string]any, len(c)+1)
	for k, v := range c {
		out[k] = v
	}
	if _, ok := out["sub"]; !ok && uid != "" {
		out["sub"] = uid
	}
	return out
}

func describeWho(who identity.Identity) string { return who.String() }

// relPath normalises a path argument: no leading or trailing slash.
func relPath(p string) string { return strings.Trim(strings.TrimSpace(p), "/") }
