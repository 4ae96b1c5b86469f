package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// Service is the event service name of this engine.
const Service = "auth"

// Event ops this engine emits (kind service_mutation).
const (
	OpUserCreate = "user_create"
	OpUserUpdate = "user_update"
	OpUserDelete = "user_delete"
	OpUsersClear = "users_clear"
	OpSignIn     = "sign_in"
	OpSignOut    = "sign_out"
	// OpCodeSent is an SMS code "sent" (sign-in or a second factor).
	OpCodeSent = "verification_code_sent"
)

// Options configure an Engine.
type Options struct {
	// Clock is the time source; nil means time.Now.
	Clock func() time.Time
	// IDs is the randomness behind user ids, salts, OOB codes and tenant
	// ids; nil means crypto/rand. Pass a seeded reader (math/rand/v2
	// ChaCha8) for deterministic runs.
	IDs io.Reader
	// Events receives one service_mutation event per change; nil discards.
	Events event.Emitter
	// BlockingClient makes the calls to blocking functions (the
	// functionUri of blockingFunctions.triggers in the project config);
	// nil means http.DefaultClient.
	BlockingClient *http.Client
	// BlockingTimeout bounds one blocking function call; 0 means
	// DefaultBlockingTimeout.
	BlockingTimeout time.Duration
	// Log, when set, makes the engine durable: every mutation appends the
	// records it changed to the log (one Append) before it returns. Open
	// loads what the log already holds; New does not read it.
	Log service.Log
	// Outbox, with Log, holds the change events a consumer must see even
	// across a crash (the Cloud Functions' user triggers) in the same
	// append as the mutation's records (service.Outbox.Hold).
	Outbox service.Outbox
}

// core is what every flow stands on: the account store (projects, their
// spaces and the journal that makes a mutation durable), the clock and id
// source, events, and the steps several flows share (scopes, tokens,
// blocking functions, OOB codes).
type core struct {
	mu       sync.Mutex
	now      func() time.Time
	ids      io.Reader
	events   event.Emitter
	log      service.Log
	outbox   service.Outbox
	j        *journal
	seq      sequencer
	projects map[string]*project

	blockClient  *http.Client
	blockTimeout time.Duration
	block        blocker
	// blockingReady, when set, is closed once the blocking functions are
	// registered (AwaitBlockingFunctions); until then an operation that
	// finds none configured waits for it.
	blockingReady <-chan struct{}
	// end is what begin returns (endFunc).
	end func(*error)
}

// New returns an empty engine.
func New(opts Options) *Engine {
	e := newEngine(&core{now: opts.Clock, ids: opts.IDs, events: opts.Events, log: opts.Log, outbox: opts.Outbox,
		j: &journal{durable: opts.Log != nil}, projects: map[string]*project{},
		blockClient: opts.BlockingClient, blockTimeout: opts.BlockingTimeout})
	e.end = e.endFunc()
	if e.now == nil {
		e.now = time.Now
	}
	if e.ids == nil {
		e.ids = rand.Reader
	}
	if e.events == nil {
		e.events = event.Discard
	}
	return e
}

// Open returns an engine holding what opts.Log holds (an empty one when
// there is no log).
func Open(opts Options) (*Engine, error) {
	e := New(opts)
	if e.log != nil {
		if err := e.load(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// seededIDs is a deterministic randomness source derived from a seed
// string (the sandbox's first minted id), so a deterministic sandbox gets
// reproducible uids, salts and codes.
func seededIDs(seed string) io.Reader {
	return mrand.NewChaCha8(sha256.Sum256([]byte(seed)))
}

// Call says who performs an operation and where.
type Call struct {
	// Caller is Admin for "Authorization: Bearer owner" (privileged
	// operations: create with a chosen uid, custom claims, disabling, …);
	// any other identity is an API-key client.
	Caller identity.Identity
	// Project is the target project id (required).
	Project string
	// Tenant is the tenant id from the URL path, if any.
	Tenant string
	// BaseURL is where this server is reached ("http://127.0.0.1:9099"),
	// used to build OOB links.
	BaseURL string
}

func (c Call) admin() bool { return c.Caller.IsAdmin() }

func (e *core) project(id string) *project {
	p := e.projects[id]
	if p == nil {
		p = newProject(e.j, id)
		e.projects[id] = p
	}
	return p
}

// enabledScope is scopeFor for the calls a disabled project refuses
// (PROJECT_DISABLED).
func (e *core) enabledScope(c Call, bodyTenant, idToken string, refresh *RefreshToken) (scope, error) {
	sc, err := e.scopeFor(c, bodyTenant, idToken, refresh)
	if err != nil {
		return sc, err
	}
	return sc, sc.checkEnabled()
}

// scopeFor resolves the account space of a call. bodyTenant is the request
// body's tenantId; idToken and the decoded refresh token, when present,
// may name the tenant too, exactly as the emulator resolves it.
func (e *core) scopeFor(c Call, bodyTenant, idToken string, refresh *RefreshToken) (scope, error) {
	if c.Project == "" {
		return scope{}, badRequest("MISSING_PROJECT_ID")
	}
	t := c.Tenant
	if t != "" && bodyTenant != "" && t != bodyTenant {
		return scope{}, ErrTenantIDMismatch
	}
	if t == "" {
		t = bodyTenant
	}
	var decoded decodedJWT
	if idToken != "" {
		claims, err := decodeTokenClaims(idToken)
		decoded = decodedJWT{raw: idToken, claims: claims, err: err}
		if tt := claims.tenant; err == nil && tt != "" {
			if t != "" && tt != t {
				return scope{}, ErrTenantIDMismatch
			}
			t = tt
		}
	}
	if refresh != nil && refresh.TenantID != "" {
		if t != "" && refresh.TenantID != t {
			return scope{}, badRequest("TENANT_ID_MISMATCH: ((Refresh token tenant ID does not match target tenant ID.))")
		}
		t = refresh.TenantID
	}
	p := e.project(c.Project)
	if t == "" {
		return scope{project: p, space: p.space, idToken: decoded}, nil
	}
	tn := p.tenant(t)
	return scope{project: p, tenant: tn, space: tn.space, idToken: decoded}, nil
}

// ---- ids and time ----

const (
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	base64url = alnum + "_-"
)

func (e *core) randomString(n int, alphabet string) string {
	return e.prefixedRandom("", n, alphabet)
}

// prefixedRandom is prefix followed by randomString(n, alphabet), with
// no string concatenated after (a sign-up's salt).
func (e *core) prefixedRandom(prefix string, n int, alphabet string) string {
	buf := make([]byte, len(prefix)+n)
	copy(buf, prefix)
	r := buf[len(prefix):]
	if _, err := io.ReadFull(e.ids, r); err != nil {
		// A broken injected source must not take the server down; fall
		// back to the system's randomness.
		_, _ = io.ReadFull(rand.Reader, r)
	}
	for i, b := range r {
		r[i] = alphabet[int(b)%len(alphabet)]
	}
	return string(buf)
}

func (e *core) newLocalID(s *space) string {
	for {
		id := e.randomString(28, alnum)
		if s.get(id) == nil {
			return id
		}
	}
}

func (e *core) newSalt() string { return e.prefixedRandom("fakeSalt", 20, alnum) }

func (e *core) millis() string { return strconv.FormatInt(e.now().UnixMilli(), 10) }
func (e *core) seconds() string {
	return strconv.FormatInt(e.now().Unix(), 10)
}

// hashPassword is the emulator's password "hash" (firebase-tools' Auth
// emulator stores the same text): a sign-in compares it, it is no secret.
func hashPassword(password, salt string) string {
	return "fakeHash:salt=" + salt + ":password=" + password
}

// passwordMatches says hash == hashPassword(password, salt), without
// building the hash on every sign-in.
func passwordMatches(hash, password, salt string) bool {
	rest, ok := strings.CutPrefix(hash, "fakeHash:salt=")
	if !ok || !strings.HasPrefix(rest, salt) {
		return false
	}
	rest, ok = strings.CutPrefix(rest[len(salt):], ":password=")
	return ok && rest == password
}

// ---- events ----

// emit records a change to Auth's records as a mutation event. detail's
// keys are a closed set: "provider" (the sign-in provider), and one
// qualifier of the change ("import", "batch", "upgrade", or "reason": a
// password_reset, code_for_sign_in / code_for_mfa_enrollment /
// code_for_mfa_sign_in, mfa_enroll, mfa_withdraw, second_factor_phone /
// second_factor_totp).
func (e *core) emit(c Call, sc scope, op, path string, before, after *User, detail map[string]any) {
	provider, _ := detail["provider"].(string)
	note := ""
	for _, k := range []string{"import", "batch", "upgrade"} {
		if detail[k] == true {
			note = k
		}
	}
	if r, ok := detail["reason"].(string); ok {
		note = r
	}
	e.emitMutation(c, sc, op, path, before, after, provider, note)
}

// emitMutation is emit with detail's provider and qualifier (note) as
// they are, for callers with no detail map to build (every sign-in).
func (e *core) emitMutation(c Call, sc scope, op, path string, before, after *User, provider, note string) {
	m := &event.Mutation{Op: op, Project: sc.project.id, Tenant: sc.tenantID(), Provider: provider, Note: note}
	if before != nil {
		m.Previous = before.Redacted()
	}
	if after != nil {
		m.Current = after.Redacted()
	}
	ev := event.Event{Kind: event.KindMutation, Service: Service, Method: op, Path: path, Mutation: m}
	ev.Who(c.Caller)
	e.publish(ev)
}

// ---- persistence ----

// Snapshot is the persisted state of the engine: every project's config,
// accounts (with password hashes, so sign-in still works after a restore),
// pending OOB codes and tenants.
type Snapshot struct {
	Version  int                        `json:"version"`
	Projects map[string]ProjectSnapshot `json:"projects"`
	// Records are records in the log's layout, as a session capture
	// appends them one by one (capture.go), added over Projects.
	Records *RecordState `json:"records,omitempty"`
}

// ProjectSnapshot is one project in a Snapshot.
type ProjectSnapshot struct {
	Config  ProjectConfig             `json:"config"`
	Users   []*User                   `json:"users"`
	OOBs    []*OOBCode                `json:"oobCodes,omitempty"`
	Tenants map[string]TenantSnapshot `json:"tenants,omitempty"`
	spaceExtra
}

// TenantSnapshot is one tenant in a Snapshot.
type TenantSnapshot struct {
	Config Tenant     `json:"config"`
	Users  []*User    `json:"users"`
	OOBs   []*OOBCode `json:"oobCodes,omitempty"`
	spaceExtra
}

func snapSpace(s *space) ([]*User, []*OOBCode) {
	users := make([]*User, 0, len(s.users))
	for _, id := range s.sortedIDs() {
		users = append(users, s.users[id].clone())
	}
	oobs := make([]*OOBCode, len(s.oobs))
	for i, o := range s.oobs {
		c := *o
		oobs[i] = &c
	}
	return users, oobs
}

// State returns a deep copy of the state.
func (e *Engine) State() Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq.reconcile()
	out := Snapshot{Version: 1, Projects: map[string]ProjectSnapshot{}}
	for id, p := range e.projects {
		ps := ProjectSnapshot{Config: cloneConfig(p.config), spaceExtra: p.space.snapExtra()}
		ps.Users, ps.OOBs = snapSpace(p.space)
		if len(p.tenants) > 0 {
			ps.Tenants = map[string]TenantSnapshot{}
			for tid, t := range p.tenants {
				ts := TenantSnapshot{Config: cloneTenant(t.config), spaceExtra: t.space.snapExtra()}
				ts.Users, ts.OOBs = snapSpace(t.space)
				ps.Tenants[tid] = ts
			}
		}
		out.Projects[id] = ps
	}
	return out
}

// MarshalSnapshot is State encoded as JSON (what Snapshot returns).
func (e *Engine) MarshalSnapshot() ([]byte, error) { return json.Marshal(e.State()) }

// RestoreState replaces the whole state with s (clobber semantics: projects
// absent from s are dropped), writing it to the log when there is one.
// It emits one users_clear event per project it replaces. Invalid records
// are rejected before anything changes.
func (e *Engine) RestoreState(s Snapshot) error {
	if s.Version > 1 {
		return fmt.Errorf("auth: snapshot version %d is newer than this engine", s.Version)
	}
	projects := map[string]*project{}
	for id, ps := range s.Projects {
		if id == "" {
			return fmt.Errorf("auth: snapshot has a project without id")
		}
		p := newProject(e.j, id)
		p.config = cloneConfig(ps.Config)
		if err := fillSpace(p.space, ps.Users, ps.OOBs); err != nil {
			return fmt.Errorf("auth: project %s: %w", id, err)
		}
		p.space.fillExtra(ps.spaceExtra)
		for tid, ts := range ps.Tenants {
			if tid == "" {
				return fmt.Errorf("auth: project %s has a tenant without id", id)
			}
			t := &tenant{config: cloneTenant(ts.Config), space: newSpace(e.j, id, tid)}
			t.config.TenantID = tid
			if err := fillSpace(t.space, ts.Users, ts.OOBs); err != nil {
				return fmt.Errorf("auth: project %s tenant %s: %w", id, tid, err)
			}
			t.space.fillExtra(ts.spaceExtra)
			p.tenants[tid] = t
		}
		projects[id] = p
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.Records != nil {
		// Under the lock: adding a tenant journals it, and no mutation
		// may be open meanwhile.
		entries, err := s.Records.changes()
		if err == nil {
			err = decodeRecords(e.j, projects, entries)
		}
		if err != nil {
			return fmt.Errorf("auth: records: %w", err)
		}
		for _, p := range projects {
			p.reindex()
		}
	}
	if e.log != nil {
		changes, err := replaceAll(projects)
		if err == nil {
			err = e.log.Append(logSpace, changes)
		}
		if err != nil {
			return fmt.Errorf("auth: restore: %w", err)
		}
	}
	old := e.projects
	e.projects = projects
	var cleared journal
	for id := range old {
		cleared.events = append(cleared.events, event.Event{Kind: event.KindMutation, Service: Service, Method: OpUsersClear, Path: "*",
			Identity: event.IdentityOf(identity.AdminIdentity()), Actor: event.Actor{Kind: event.ActorSystem},
			Mutation: &event.Mutation{Op: OpUsersClear, Project: id, Note: "restore"}})
	}
	if !e.seq.busy() {
		for _, ev := range cleared.events {
			e.events.Emit(ev)
		}
		return nil
	}
	// Commits still pending emit their events first, as their changes
	// came first (sequence.go); they finish without the lock. Had one
	// failed, the log refused the restore's append above.
	_ = e.seq.finish(e.seq.add(nil, &cleared), e.events)
	return nil
}

// UnmarshalSnapshot is Restore.
func (e *Engine) UnmarshalSnapshot(b []byte) error { return e.Restore(b) }

func fillSpace(s *space, users []*User, oobs []*OOBCode) error {
	for _, u := range users {
		if u == nil || u.LocalID == "" {
			return fmt.Errorf("user without localId")
		}
		if s.users[u.LocalID] != nil {
			return fmt.Errorf("duplicate localId %q", u.LocalID)
		}
		s.users[u.LocalID] = u.clone()
	}
	s.reindex()
	for _, o := range oobs {
		if o == nil || o.OOBCode == "" {
			return fmt.Errorf("OOB code without code")
		}
		c := *o
		c.seq = s.oobSeq
		s.oobSeq++
		s.oobs = append(s.oobs, &c)
	}
	return nil
}

// replaceAll is the log changes that replace whatever the log holds with
// projects.
func replaceAll(projects map[string]*project) ([]service.LogChange, error) {
	var c changes
	for _, prefix := range []string{"c", "t", "s"} {
		c = append(c, service.LogChange{Key: prefix, Prefix: true})
	}
	for id, p := range projects {
		if err := c.put(configKey(id), p.config); err != nil {
			return nil, err
		}
		if err := p.space.writeAll(&c); err != nil {
			return nil, err
		}
		for tid, t := range p.tenants {
			if err := c.put(tenantKey(id, tid), t.config); err != nil {
				return nil, err
			}
			if err := t.space.writeAll(&c); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// changes collects log changes.
type changes []service.LogChange

// put adds the change that sets k to v's JSON encoding.
func (c *changes) put(k []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	*c = append(*c, service.LogChange{Key: string(k), Value: b})
	return nil
}

// writeAll puts every record of the space.
func (s *space) writeAll(c *changes) error {
	for id, u := range s.users {
		if err := c.put(userKey(s.project, s.tenant, id), u); err != nil {
			return err
		}
	}
	for _, o := range s.oobs {
		if err := c.put(oobKey(s.project, s.tenant, o.seq), o); err != nil {
			return err
		}
	}
	return s.writeExtraRecords(c.put)
}

func cloneConfig(c ProjectConfig) ProjectConfig {
	b, _ := json.Marshal(c)
	var out ProjectConfig
	_ = json.Unmarshal(b, &out)
	if out.BlockingFunctions == nil {
		out.BlockingFunctions = map[string]any{}
	}
	return out
}

func cloneTenant(t Tenant) Tenant {
	if t.MFAConfig != nil {
		m := *t.MFAConfig
		m.EnabledProviders = append([]string{}, m.EnabledProviders...)
		t.MFAConfig = &m
	}
	return t
}
