package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// Name is the service's name in the sandbox.
const Name = "ai"

// Backends a call can arrive through.
const (
	BackendGoogleAI = "googleai" // Gemini Developer API shapes
	BackendVertexAI = "vertexai" // Vertex AI / Agent Platform shapes
)

// Options configure the engine.
type Options struct {
	// ScriptFile, when set, is loaded into the default project's script
	// when the engine starts, replacing what was persisted.
	ScriptFile string
	// APIKeys, when non-empty, are the only API keys accepted; any other
	// key gets production's API_KEY_INVALID 400. Empty accepts every
	// non-empty key, as the Firebase emulators do.
	APIKeys []string
	// Models are extra model names served besides the gemini-* and gemma-*
	// families (tuned or custom names).
	Models []string
	// OpenAI, when set, answers unscripted calls by forwarding them to an
	// OpenAI-compatible endpoint instead of synthesizing (off by default).
	OpenAI *OpenAIOptions
	// MaxCalls bounds the call log of all projects together (the oldest
	// calls are dropped); 0 means 1000.
	MaxCalls int
}

// Call is one request as a transport decoded it.
type Call struct {
	Project  string
	Location string // empty on the Google AI backend
	Backend  string // BackendGoogleAI or BackendVertexAI
	Model    string // short name: "gemini-2.5-flash"
	// Service is the API the caller addressed, named in API-key errors
	// ("firebasevertexai.googleapis.com", "generativelanguage.googleapis.com").
	Service string
	APIKey  string
	// OAuth reports an Authorization bearer token (Vertex AI clients send
	// one instead of an API key).
	OAuth bool
	Auth  identity.Identity
	Body  []byte
}

// Engine is the AI Logic service.
type Engine struct {
	env    service.Env
	opts   Options
	keys   map[string]bool
	models map[string]bool
	openai *openAI

	mu       sync.Mutex
	projects map[string]*projectState
	seq      int64
}

type projectState struct {
	Script []Entry       `json:"script"`
	Calls  []*CallRecord `json:"calls"`
}

// CallRecord is one entry of the call log: what was asked and answered.
type CallRecord struct {
	Seq              int64           `json:"seq"`
	At               time.Time       `json:"at"`
	Project          string          `json:"project"`
	Backend          string          `json:"backend"`
	Location         string          `json:"location,omitempty"`
	Model            string          `json:"model"`
	Method           string          `json:"method"`
	Prompt           string          `json:"prompt"`
	Answer           string          `json:"answer"`
	FunctionCalls    []string        `json:"functionCalls,omitempty"`
	Source           string          `json:"source"` // synthesized | script | openai
	Entry            string          `json:"entry,omitempty"`
	PromptTokens     int             `json:"promptTokens"`
	CandidatesTokens int             `json:"candidatesTokens"`
	TotalTokens      int             `json:"totalTokens"`
	Status           int             `json:"status"`
	Error            string          `json:"error,omitempty"`
	Request          json.RawMessage `json:"request,omitempty"`
	Response         json.RawMessage `json:"response,omitempty"`
	Truncated        bool            `json:"truncated,omitempty"`
}

// maxLoggedBytes bounds the request and response a call record keeps.
const maxLoggedBytes = 32 << 10

// New creates the engine, restoring what env.Bucket holds and loading
// Options.ScriptFile.
func New(env service.Env, opts Options) (*Engine, error) {
	if env.Project == "" {
		env.Project = service.DefaultProject
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Events == nil {
		env.Events = event.Discard
	}
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = 1000
	}
	e := &Engine{env: env, opts: opts, keys: map[string]bool{}, models: map[string]bool{}, projects: map[string]*projectState{}}
	for _, k := range opts.APIKeys {
		e.keys[k] = true
	}
	for _, m := range opts.Models {
		e.models[strings.TrimPrefix(m, "models/")] = true
	}
	if opts.OpenAI != nil {
		o, err := newOpenAI(*opts.OpenAI)
		if err != nil {
			return nil, err
		}
		e.openai = o
	}
	if err := e.load(); err != nil {
		return nil, err
	}
	if opts.ScriptFile != "" {
		if err := e.LoadScriptFile(env.Project, opts.ScriptFile); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Factory returns the service.Factory of an engine with opts.
func Factory(opts Options) service.Factory {
	return func(env service.Env) (service.Service, error) { return New(env, opts) }
}

// Registration is how the engine joins a sandbox
// (sandbox.Options.Services); sandbox.Lookup[*ai.Engine] finds it again.
func Registration(opts Options) service.Registration {
	return service.Registration{Name: Name, New: Factory(opts)}
}

// Name implements service.Service.
func (e *Engine) Name() string { return Name }

// DefaultProject is the sandbox's project.
func (e *Engine) DefaultProject() string { return e.env.Project }

func (e *Engine) project(p string) *projectState {
	ps := e.projects[p]
	if ps == nil {
		ps = &projectState{}
		e.projects[p] = ps
	}
	return ps
}

// LoadScriptFile replaces a project's script with a script file.
func (e *Engine) LoadScriptFile(project, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("ai script: %w", err)
	}
	entries, err := DecodeScript(data)
	if err != nil {
		return fmt.Errorf("ai script %s: %w", path, err)
	}
	return e.SetScript(project, entries)
}

// SetScript replaces a project's script.
func (e *Engine) SetScript(project string, entries []Entry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.persistScript(project, entries); err != nil {
		return err
	}
	e.project(project).Script = append([]Entry(nil), entries...)
	e.emitScript(project, OpScriptSet, len(entries))
	return nil
}

// AppendScript adds entries at the end of a project's script.
func (e *Engine) AppendScript(project string, entries []Entry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.project(project)
	if len(ps.Script)+len(entries) > MaxScriptEntries {
		return fmt.Errorf("%w: the script would hold more than %d entries", ErrInvalidScript, MaxScriptEntries)
	}
	next := append(append([]Entry(nil), ps.Script...), entries...)
	if err := e.persistScript(project, next); err != nil {
		return err
	}
	ps.Script = next
	e.emitScript(project, OpScriptAppend, len(entries))
	return nil
}

// Script returns a project's remaining script entries.
func (e *Engine) Script(project string) []Entry {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.projects[project]
	if ps == nil {
		return []Entry{}
	}
	return append([]Entry{}, ps.Script...)
}

// Calls returns a project's call log, oldest first.
func (e *Engine) Calls(project string) []CallRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []CallRecord{}
	ps := e.projects[project]
	if ps == nil {
		return out
	}
	for _, c := range ps.Calls {
		out = append(out, *c)
	}
	return out
}

// Clear forgets a project's script and call log.
func (e *Engine) Clear(project string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.persistClear(project); err != nil {
		return err
	}
	delete(e.projects, project)
	e.emitScript(project, OpClear, 0)
	return nil
}

// Reset implements service.Service: every project's script and calls go.
func (e *Engine) Reset() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.projects = map[string]*projectState{}
	e.seq = 0
	return nil
}

type snapshot struct {
	Seq      int64                    `json:"seq"`
	Projects map[string]*projectState `json:"projects"`
}

// Snapshot implements service.Service: scripts and call logs.
func (e *Engine) Snapshot() (json.RawMessage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return json.Marshal(snapshot{Seq: e.seq, Projects: e.projects})
}

// Restore implements service.Service.
func (e *Engine) Restore(state json.RawMessage) error {
	var s snapshot
	if err := json.Unmarshal(state, &s); err != nil {
		return fmt.Errorf("ai restore: %w", err)
	}
	if s.Projects == nil {
		s.Projects = map[string]*projectState{}
	}
	for p, ps := range s.Projects {
		if ps == nil {
			s.Projects[p] = &projectState{}
			continue
		}
		for i := range ps.Script {
			if err := ps.Script[i].check(); err != nil {
				return fmt.Errorf("ai restore: project %s entry %d: %v", p, i, err)
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.persistAll(s); err != nil {
		return err
	}
	e.projects, e.seq = s.Projects, s.Seq
	return nil
}

// authorize checks the caller's credentials as production does before
// anything else.
func (e *Engine) authorize(c *Call) error {
	if c.APIKey == "" {
		if c.OAuth {
			return nil
		}
		return errNoCredentials()
	}
	if len(e.keys) > 0 && !e.keys[c.APIKey] {
		svc := c.Service
		if svc == "" {
			svc = "firebasevertexai.googleapis.com"
		}
		return errBadAPIKey(svc)
	}
	return nil
}

// prepare runs the checks every generate call shares and decides the
// scripted answers: one script entry per candidate asked for while the
// script has one (consumed and persisted before the call is answered);
// none means the synthesizer or upstream answers.
func (e *Engine) prepare(c *Call, method string) (*Request, []answer, error) {
	if err := e.authorize(c); err != nil {
		return nil, nil, err
	}
	c.Model = strings.TrimPrefix(c.Model, "models/")
	if err := e.checkModel(c.Model, method); err != nil {
		return nil, nil, err
	}
	r, err := DecodeRequest(c.Body)
	if err != nil {
		return nil, nil, err
	}
	if err := validate(r, c.Model, "GenerateContentRequest"); err != nil {
		return nil, nil, err
	}
	if err := checkCandidates(r, c.Model, c.Backend); err != nil {
		return nil, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.project(c.Project)
	script := ps.Script
	var as []answer
	for range candidateCount(r) {
		entry, rest, ok := pick(script, r, c.Model)
		if !ok {
			break
		}
		a := answerOf(entry)
		as = append(as, a)
		script = rest
		// A raw envelope first is the whole response (returned
		// verbatim), and an error fails the call: neither takes more.
		if a.err != nil || (len(as) == 1 && verbatim(as)) {
			break
		}
	}
	if len(script) != len(ps.Script) {
		if err := e.persistScript(c.Project, script); err != nil {
			return nil, nil, err
		}
		ps.Script = script
	}
	return r, as, nil
}

// verbatim reports whether the first scripted answer is a raw envelope,
// returned as it is whatever the request asked for.
func verbatim(as []answer) bool {
	return len(as) > 0 && (len(as[0].raw) > 0 || len(as[0].rawChunks) > 0)
}

// many answers a call asking for several candidates: the answers of
// every candidate (a scripted error among them fails the call, verbatim;
// a raw envelope past the first candidate gives its first candidate).
func (e *Engine) many(ctx context.Context, c *Call, r *Request, scripted []answer) ([]answer, error) {
	as, err := e.fill(ctx, r, c.Model, scripted, candidateCount(r))
	if err != nil {
		return nil, err
	}
	for i := range as {
		if as[i].err != nil {
			return nil, as[i].err
		}
		if i > 0 {
			as[i] = flatten(as[i])
		}
	}
	return as, nil
}

func (e *Engine) seedOf(c *Call) [32]byte {
	return digest(c.Model, c.Backend, string(c.Body))
}

// GenerateContent answers generateContent with the response body (the
// envelope, or a scripted raw envelope verbatim).
func (e *Engine) GenerateContent(ctx context.Context, c Call) ([]byte, error) {
	start := e.env.Now()
	rec := e.newRecord(&c, "generateContent")
	r, scripted, err := e.prepare(&c, "generateContent")
	if err != nil {
		return nil, e.fail(rec, &c, err, start)
	}
	if candidateCount(r) > 1 && !verbatim(scripted) {
		as, err := e.many(ctx, &c, r, scripted)
		if err != nil {
			return nil, e.fail(rec, &c, err, start)
		}
		body, _ := wireJSONIndent(newRenderer(c.Model, r, e.seedOf(&c)).unaryN(as))
		e.finish(rec, &c, r, combined(as), body, start)
		return body, nil
	}
	var a *answer
	if len(scripted) > 0 {
		a = &scripted[0]
	}
	if a == nil {
		if e.openai != nil {
			got, err := e.openai.generate(ctx, r, c.Model)
			if err != nil {
				return nil, e.fail(rec, &c, err, start)
			}
			a = &got
		} else {
			got := synthesize(r, 0)
			got.source = "synthesized"
			a = &got
		}
	}
	if a.err != nil {
		return nil, e.fail(rec, &c, a.err, start)
	}
	var body []byte
	switch {
	case len(a.raw) > 0:
		body = a.raw
	case len(a.rawChunks) > 0:
		body = mergeChunks(a.rawChunks)
	default:
		body, _ = wireJSONIndent(newRenderer(c.Model, r, e.seedOf(&c)).unary(*a))
	}
	e.finish(rec, &c, r, *a, body, start)
	return body, nil
}

// StreamGenerateContent answers streamGenerateContent: yield receives
// each chunk, a complete compact GenerateContentResponse. An error before
// the first chunk is the call's error; yield's error stops the stream.
func (e *Engine) StreamGenerateContent(ctx context.Context, c Call, yield func(chunk []byte) error) error {
	start := e.env.Now()
	rec := e.newRecord(&c, "streamGenerateContent")
	r, scripted, err := e.prepare(&c, "streamGenerateContent")
	if err != nil {
		return e.fail(rec, &c, err, start)
	}
	var frames [][]byte
	collect := func(b []byte) error {
		if len(frames) < 64 {
			frames = append(frames, b)
		}
		return yield(b)
	}
	st := &streamer{rd: newRenderer(c.Model, r, e.seedOf(&c)), yield: collect}
	if candidateCount(r) > 1 && !verbatim(scripted) {
		as, err := e.many(ctx, &c, r, scripted)
		if err != nil {
			return e.fail(rec, &c, err, start)
		}
		if err := st.multi(as); err != nil {
			return e.cancelled(rec, &c, err, start)
		}
		e.finish(rec, &c, r, combined(as), joinFrames(frames), start)
		return nil
	}
	var a *answer
	if len(scripted) > 0 {
		a = &scripted[0]
	}
	if a == nil && e.openai != nil {
		got, err := e.openai.stream(ctx, r, c.Model, st.text)
		var ae *Error
		if errors.As(err, &ae) {
			return e.fail(rec, &c, err, start)
		} else if err != nil {
			return e.cancelled(rec, &c, err, start)
		}
		if err := st.finish(got, ""); err != nil {
			return e.cancelled(rec, &c, err, start)
		}
		e.finish(rec, &c, r, got, joinFrames(frames), start)
		return nil
	}
	if a == nil {
		got := synthesize(r, 0)
		got.source = "synthesized"
		a = &got
	}
	if a.err != nil {
		return e.fail(rec, &c, a.err, start)
	}
	switch {
	case len(a.raw) > 0:
		err = collect(compactJSON(a.raw))
	case len(a.rawChunks) > 0:
		for _, ch := range a.rawChunks {
			if err = collect(compactJSON(ch)); err != nil {
				break
			}
		}
	default:
		ps := pieces(*a)
		last := ""
		if len(ps) > 0 && !st.rd.thinks {
			last, ps = ps[len(ps)-1], ps[:len(ps)-1]
		}
		for _, p := range ps {
			if err = st.text(p); err != nil {
				break
			}
		}
		if err == nil {
			err = st.finish(*a, last)
		}
	}
	if err != nil {
		return e.cancelled(rec, &c, err, start)
	}
	e.finish(rec, &c, r, *a, joinFrames(frames), start)
	return nil
}

// cancelled logs a stream the client stopped reading and returns the
// write error.
func (e *Engine) cancelled(rec *CallRecord, c *Call, err error, start time.Time) error {
	e.fail(rec, c, &Error{Code: 499, Status: "CANCELLED", Message: "The client stopped reading the stream: " + err.Error()}, start)
	return err
}

func joinFrames(frames [][]byte) []byte {
	b, _ := json.Marshal(func() []json.RawMessage {
		out := make([]json.RawMessage, len(frames))
		for i, f := range frames {
			out[i] = f
		}
		return out
	}())
	return b
}

// CountTokens answers countTokens.
func (e *Engine) CountTokens(ctx context.Context, c Call) ([]byte, error) {
	start := e.env.Now()
	rec := e.newRecord(&c, "countTokens")
	if err := e.authorize(&c); err != nil {
		return nil, e.fail(rec, &c, err, start)
	}
	c.Model = strings.TrimPrefix(c.Model, "models/")
	if err := e.checkModel(c.Model, "countTokens"); err != nil {
		return nil, e.fail(rec, &c, err, start)
	}
	r, err := DecodeCountTokens(c.Body)
	if err != nil {
		return nil, e.fail(rec, &c, err, start)
	}
	if err := validate(r, "", "CountTokensRequest"); err != nil {
		return nil, e.fail(rec, &c, err, start)
	}
	n := promptTokens(r)
	body, _ := wireJSONIndent(CountTokensResponse{TotalTokens: n,
		PromptTokensDetails: []ModalityCount{{Modality: "TEXT", TokenCount: n}}})
	rec.Prompt = excerpt(lastUserText(r), 2000)
	rec.PromptTokens, rec.TotalTokens = n, n
	rec.Source = "synthesized"
	rec.Status = 200
	rec.Response = body
	e.record(rec, &c, start)
	return body, nil
}

func (e *Engine) newRecord(c *Call, method string) *CallRecord {
	rec := &CallRecord{Project: c.Project, Backend: c.Backend, Location: c.Location,
		Model: strings.TrimPrefix(c.Model, "models/"), Method: method}
	if len(c.Body) <= maxLoggedBytes && json.Valid(c.Body) {
		rec.Request = compactJSON(c.Body)
	} else if len(c.Body) > 0 {
		rec.Truncated = true
	}
	return rec
}

func (e *Engine) fail(rec *CallRecord, c *Call, err error, start time.Time) error {
	ae := AsError(err)
	rec.Status = ae.HTTPStatus()
	rec.Error = ae.Message
	rec.Source = "error"
	if r, derr := DecodeRequest(c.Body); derr == nil {
		rec.Prompt = excerpt(lastUserText(r), 2000)
	}
	e.record(rec, c, start)
	return ae
}

func (e *Engine) finish(rec *CallRecord, c *Call, r *Request, a answer, body []byte, start time.Time) {
	rec.Prompt = excerpt(lastUserText(r), 2000)
	rec.Source, rec.Entry, rec.Status = a.source, a.name, 200
	var resp Response
	if len(a.raw) > 0 || len(a.rawChunks) > 0 {
		src := body
		if len(a.raw) > 0 {
			src = a.raw
		} else {
			src = mergeChunks(a.rawChunks)
		}
		if json.Unmarshal(src, &resp) == nil && len(resp.Candidates) > 0 && resp.Candidates[0].Content != nil {
			rec.Answer = resp.Candidates[0].Content.Text()
			for _, p := range resp.Candidates[0].Content.Parts {
				if p.FunctionCall != nil {
					rec.FunctionCalls = append(rec.FunctionCalls, p.FunctionCall.Name)
				}
			}
		}
		if resp.UsageMetadata != nil {
			rec.PromptTokens, rec.CandidatesTokens, rec.TotalTokens = resp.UsageMetadata.PromptTokenCount, resp.UsageMetadata.CandidatesTokenCount, resp.UsageMetadata.TotalTokenCount
		}
	} else {
		rec.Answer = a.text
		for _, fc := range a.calls {
			rec.FunctionCalls = append(rec.FunctionCalls, fc.Name)
		}
		rec.PromptTokens = promptTokens(r)
		if a.upPrompt > 0 {
			rec.PromptTokens = a.upPrompt
		}
		rec.CandidatesTokens = a.candidateTokens()
		rec.TotalTokens = rec.PromptTokens + rec.CandidatesTokens
	}
	if len(body) <= maxLoggedBytes {
		rec.Response = compactJSON(body)
	} else {
		rec.Truncated = true
	}
	e.record(rec, c, start)
}

// record appends a call to the log, persists it and emits its event. A
// failure to persist the log does not fail the call (the answer is not
// state), but the event says so.
func (e *Engine) record(rec *CallRecord, c *Call, start time.Time) {
	e.mu.Lock()
	e.seq++
	rec.Seq = e.seq
	rec.At = e.env.Now().UTC()
	ps := e.project(c.Project)
	ps.Calls = append(ps.Calls, rec)
	dropped := e.trimCalls()
	err := e.persistCall(c.Project, rec, dropped)
	e.mu.Unlock()
	note := ""
	if err != nil {
		note = "call log not persisted: " + err.Error()
	}
	e.emitCall(rec, c.Auth, float64(e.env.Now().Sub(start).Microseconds())/1000, note)
}

// callRef names a call record in the bucket.
type callRef struct {
	project string
	seq     int64
}

// trimCalls drops the oldest calls of any project until the log holds at
// most MaxCalls, so no sequence of requests (to however many projects)
// grows memory without bound. Projects left with nothing are forgotten.
func (e *Engine) trimCalls() []callRef {
	total := 0
	for _, ps := range e.projects {
		total += len(ps.Calls)
	}
	var dropped []callRef
	for total > e.opts.MaxCalls {
		oldest := ""
		for p, ps := range e.projects {
			if len(ps.Calls) > 0 && (oldest == "" || ps.Calls[0].Seq < e.projects[oldest].Calls[0].Seq) {
				oldest = p
			}
		}
		ps := e.projects[oldest]
		dropped = append(dropped, callRef{oldest, ps.Calls[0].Seq})
		ps.Calls = ps.Calls[1:]
		if len(ps.Calls) == 0 && len(ps.Script) == 0 {
			delete(e.projects, oldest)
		}
		total--
	}
	return dropped
}
