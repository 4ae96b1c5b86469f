package messaging

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// ServiceName is the engine's key in the sandbox.
const ServiceName = "messaging"

// Limits that bound the engine's memory; every one answers with a precise
// error rather than growing without bound.
const (
	// MaxTopicsPerToken is production's limit: "An app instance can be
	// subscribed to no more than 2000 topics."
	MaxTopicsPerToken = 2000
	// MaxBatchTokens is production's limit on one batchAdd/batchRemove:
	// "each request is limited to 1000 app instances".
	MaxBatchTokens = 1000
	// DefaultMaxMessages is how many accepted messages a project keeps in
	// its inbox before the oldest are dropped.
	DefaultMaxMessages = 1000
	// DefaultMaxDeliveries bounds the deliveries (message × token) a
	// project's inbox holds, so large topic fan-outs cannot grow it
	// without bound; the oldest messages go first.
	DefaultMaxDeliveries = 200000
	// DefaultMaxTokens bounds the registry (every project's tokens).
	DefaultMaxTokens = 100000
	// DefaultMaxTotalMessages bounds the messages kept across projects, so
	// sends to ever new project ids cannot grow memory without bound.
	DefaultMaxTotalMessages = 10000
	// Production's per-device rate for Android: "up to 240 messages/minute
	// and 5,000 messages/hour to a single device".
	deviceRatePerMinute = 240
	deviceRatePerHour   = 5000
)

// Options tune an engine beyond its Env.
type Options struct {
	// MaxMessages bounds each project's inbox; 0 means DefaultMaxMessages.
	MaxMessages int
	// MaxDeliveries bounds each project's deliveries; 0 means
	// DefaultMaxDeliveries. The newest message is always kept.
	MaxDeliveries int
	// MaxTokens bounds the registry; 0 means DefaultMaxTokens.
	MaxTokens int
	// MaxTotalMessages bounds the messages of every project together (the
	// oldest go first); 0 means DefaultMaxTotalMessages.
	MaxTotalMessages int
	// NoDeviceRateLimit turns off the Android per-device rate limit
	// (QUOTA_EXCEEDED), for load tests.
	NoDeviceRateLimit bool
}

// TokenInfo is a registration token in the registry.
type TokenInfo struct {
	Token    string   `json:"token"`
	Project  string   `json:"project"`
	Platform Platform `json:"platform"`
	// Instance is the caller's key for the app instance (a service-worker
	// registration); minting again with the same key returns the same
	// live token, as getToken does.
	Instance  string    `json:"instance,omitempty"`
	Topics    []string  `json:"topics,omitempty"`
	Deleted   bool      `json:"deleted,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	DeletedAt time.Time `json:"deletedAt,omitzero"`
}

// Sent is an accepted message and where it went.
type Sent struct {
	// Name is what messages:send returned: projects/<p>/messages/<id>.
	Name    string    `json:"name"`
	ID      string    `json:"id"`
	Project string    `json:"project"`
	SentAt  time.Time `json:"sentAt"`
	Message *Message  `json:"message"`
	// Tokens are the live tokens the message was delivered to, in order.
	Tokens []string `json:"tokens"`
}

// Delivery is one message as one token's app receives it.
type Delivery struct {
	Name    string         `json:"name"`
	Token   string         `json:"token"`
	SentAt  time.Time      `json:"sentAt"`
	Payload ClientPayload  `json:"payload"`
	Message *Message       `json:"message"`
	Via     map[string]any `json:"via"`
}

// ClientPayload is the MessagePayload the client SDK's onMessage /
// onBackgroundMessage receives: top-level data, from (the sender id),
// messageId and, for notification messages, notification.
type ClientPayload struct {
	From         string            `json:"from"`
	MessageID    string            `json:"messageId"`
	CollapseKey  string            `json:"collapseKey,omitempty"`
	Data         map[string]string `json:"data,omitempty"`
	Notification map[string]string `json:"notification,omitempty"`
	FcmOptions   map[string]string `json:"fcmOptions,omitempty"`
}

// TopicResult is one token's outcome in a batchAdd/batchRemove, in the
// instance-id service's words: "" for success, else INVALID_ARGUMENT
// (not a registration token), NOT_FOUND (deleted) or TOO_MANY_TOPICS.
type TopicResult struct {
	Error string `json:"error,omitempty"`
}

// Engine is the Cloud Messaging engine. It is safe for concurrent use.
type Engine struct {
	env  service.Env
	opts Options

	mu     sync.Mutex
	tokens map[string]*TokenInfo // by token, every project
	byInst map[string]string     // project\x00instance -> live token
	sent   map[string][]*Sent    // per project, oldest first
	lastID int64
	minted uint64
	rates  map[string]*rate

	watchMu  sync.Mutex
	watchers map[string]map[*Watcher]bool // project\x00token
}

type rate struct {
	minute   int64
	perMin   int
	hourBins [60]int
	binMin   [60]int64
}

// Registration joins the engine to a sandbox
// (sandbox.Options.Services / the backend's registrations).
var Registration = service.Registration{Name: ServiceName, New: New}

// New is the service.Factory of the engine with default Options.
func New(env service.Env) (service.Service, error) { return NewEngine(env, Options{}) }

// Factory returns a service.Factory building engines with opts.
func Factory(opts Options) service.Factory {
	return func(env service.Env) (service.Service, error) { return NewEngine(env, opts) }
}

// NewEngine creates an engine, restoring what env.Bucket holds.
func NewEngine(env service.Env, opts Options) (*Engine, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.NewID == nil {
		var n uint64
		var mu sync.Mutex
		env.NewID = func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("id%018d", n)
		}
	}
	if env.Events == nil {
		env.Events = event.Discard
	}
	if env.Project == "" {
		env.Project = "demo-project"
	}
	if opts.MaxMessages <= 0 {
		opts.MaxMessages = DefaultMaxMessages
	}
	if opts.MaxDeliveries <= 0 {
		opts.MaxDeliveries = DefaultMaxDeliveries
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.MaxTotalMessages <= 0 {
		opts.MaxTotalMessages = DefaultMaxTotalMessages
	}
	e := &Engine{env: env, opts: opts}
	e.clear()
	if env.Bucket != nil {
		if err := e.load(); err != nil {
			return nil, fmt.Errorf("messaging: restore: %w", err)
		}
	}
	return e, nil
}

func (e *Engine) clear() {
	e.tokens = map[string]*TokenInfo{}
	e.byInst = map[string]string{}
	e.sent = map[string][]*Sent{}
	e.rates = map[string]*rate{}
	e.lastID = 0
}

// Name implements service.Service.
func (e *Engine) Name() string { return ServiceName }

// DefaultProject is the sandbox's project.
func (e *Engine) DefaultProject() string { return e.env.Project }

// SenderID is the messaging sender id of a project, the "from" of every
// delivery: a stable 12-digit number derived from the project id (a real
// project's is its project number).
func SenderID(project string) string {
	h := fnv.New64a()
	h.Write([]byte(project))
	return fmt.Sprintf("%012d", h.Sum64()%1_000_000_000_000)
}

// MintRequest asks for a registration token.
type MintRequest struct {
	Platform Platform
	// Instance keys the app instance: minting again with the same key
	// returns its live token.
	Instance string
	// Token registers this exact token instead of minting one, for tests
	// that use fixed tokens; it must be URL-safe base64 and ':' only.
	Token string
}

// MintToken registers a token for the project and returns it.
func (e *Engine) MintToken(id identity.Identity, project string, req MintRequest) (*TokenInfo, error) {
	if req.Platform == "" {
		req.Platform = PlatformWeb
	}
	switch req.Platform {
	case PlatformWeb, PlatformAndroid, PlatformIOS:
	default:
		return nil, genericField("platform", "Unknown platform %q: expected web, android or ios", req.Platform)
	}
	if req.Token != "" && !wellFormedToken(req.Token) {
		return nil, genericField("token", "A registration token is 1 to 4096 characters of [A-Za-z0-9_:-]")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	instKey := project + "\x00" + req.Instance
	if req.Instance != "" && req.Token == "" {
		if tok, ok := e.byInst[instKey]; ok {
			t := e.tokens[tok]
			return copyToken(t), nil
		}
	}
	if req.Token != "" {
		if t, ok := e.tokens[req.Token]; ok {
			if t.Project != project {
				return nil, &Error{Kind: ErrPermissionDenied, Msg: fmt.Sprintf("Token is registered to project %q", t.Project)}
			}
			if !t.Deleted {
				return copyToken(t), nil
			}
		}
	}
	if len(e.tokens) >= e.opts.MaxTokens {
		return nil, &Error{Kind: ErrResourceExhausted, Msg: fmt.Sprintf("The registry holds the maximum of %d tokens; reset it first", e.opts.MaxTokens)}
	}
	tok := req.Token
	for tok == "" {
		e.minted++
		tok = mintToken(project, e.env.NewID(), e.minted)
		if _, dup := e.tokens[tok]; dup {
			tok = ""
		}
	}
	t := &TokenInfo{Token: tok, Project: project, Platform: req.Platform, Instance: req.Instance, CreatedAt: e.env.Now().UTC()}
	if err := e.persist(func(tx service.Tx) error { return putJSON(tx, tokenKey(t), t) }); err != nil {
		return nil, err
	}
	e.tokens[tok] = t
	if req.Instance != "" {
		e.byInst[instKey] = tok
	}
	e.emitToken(id, "token_mint", t)
	return copyToken(t), nil
}

// DeleteToken kills a token: it leaves its topics and later sends to it
// report UNREGISTERED.
func (e *Engine) DeleteToken(id identity.Identity, project, token string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.tokens[token]
	if !ok || t.Project != project {
		return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("No registration token %q in project %q", token, project)}
	}
	if t.Deleted {
		return nil
	}
	next := *t
	next.Deleted, next.Topics, next.DeletedAt = true, nil, e.env.Now().UTC()
	if err := e.persist(func(tx service.Tx) error { return putJSON(tx, tokenKey(&next), &next) }); err != nil {
		return err
	}
	*t = next
	if t.Instance != "" && e.byInst[project+"\x00"+t.Instance] == token {
		delete(e.byInst, project+"\x00"+t.Instance)
	}
	e.emitToken(id, "token_delete", t)
	e.closeWatchers(project + "\x00" + token)
	return nil
}

// Token returns a token's registry entry.
func (e *Engine) Token(project, token string) (*TokenInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.tokens[token]
	if !ok || t.Project != project {
		return nil, &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("No registration token %q in project %q", token, project)}
	}
	return copyToken(t), nil
}

// Tokens lists a project's tokens, oldest first.
func (e *Engine) Tokens(project string) []*TokenInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*TokenInfo
	for _, t := range e.tokens {
		if t.Project == project {
			out = append(out, copyToken(t))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].Token < out[j].Token
	})
	return out
}

// Topic is one topic of a project and its live subscribers.
type Topic struct {
	Name   string   `json:"name"`
	Tokens []string `json:"tokens"`
}

// Topics lists a project's topics with at least one live subscriber,
// sorted by name, each with its tokens sorted.
func (e *Engine) Topics(project string) []Topic {
	e.mu.Lock()
	byName := map[string][]string{}
	for _, t := range e.tokens {
		if t.Project != project || t.Deleted {
			continue
		}
		for _, name := range t.Topics {
			byName[name] = append(byName[name], t.Token)
		}
	}
	e.mu.Unlock()
	out := make([]Topic, 0, len(byName))
	for name, toks := range byName {
		slices.Sort(toks)
		out = append(out, Topic{Name: name, Tokens: toks})
	}
	slices.SortFunc(out, func(a, b Topic) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func copyToken(t *TokenInfo) *TokenInfo {
	c := *t
	c.Topics = slices.Clone(t.Topics)
	return &c
}

// Send validates and delivers one message, returning its name
// (projects/<p>/messages/<id>). With validateOnly nothing is delivered or
// stored and the name carries a fresh id all the same, as production's
// dry run does.
func (e *Engine) Send(id identity.Identity, project string, req *SendRequest) (string, error) {
	start := time.Now()
	name, s, err := e.send(project, req)
	var tokens []string
	if s != nil {
		tokens = s.Tokens
	}
	e.emitSend(id, project, req, name, tokens, err, time.Since(start))
	e.notify(s)
	return name, err
}

func (e *Engine) send(project string, req *SendRequest) (string, *Sent, error) {
	m := req.Message
	if m == nil {
		m = &Message{}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var platforms []Platform
	var target *TokenInfo
	if m.Token != "" || m.Fid != "" {
		tok := m.Token
		if tok == "" {
			tok = m.Fid
		}
		t, ok := e.tokens[tok]
		switch {
		case !ok:
			// A string the registry never issued cannot be decoded as a
			// registration token.
			if _, err := Validate(m, nil); err != nil && !isTargetError(err) {
				return "", nil, err
			}
			return "", nil, errInvalidToken()
		case t.Project != project:
			return "", nil, errSenderMismatch()
		}
		target = t
		platforms = []Platform{t.Platform}
	}
	cond, err := Validate(m, platforms)
	if err != nil {
		return "", nil, err
	}
	if target != nil && target.Deleted {
		return "", nil, errUnregistered()
	}
	now := e.env.Now().UTC()
	if target != nil && target.Platform == PlatformAndroid && !e.opts.NoDeviceRateLimit && !req.ValidateOnly {
		if !e.allow(target.Token, now) {
			return "", nil, errQuota("device " + target.Token)
		}
	}
	idNum := now.UnixMicro()
	if idNum <= e.lastID {
		idNum = e.lastID + 1
	}
	name := fmt.Sprintf("projects/%s/messages/%d", project, idNum)
	if req.ValidateOnly {
		e.lastID = idNum
		return name, nil, nil
	}
	var tokens []string
	switch {
	case target != nil:
		tokens = []string{target.Token}
	case m.Topic != "":
		tokens = e.fanout(project, func(t *TokenInfo) bool { _, ok := slices.BinarySearch(t.Topics, m.Topic); return ok })
	case cond != nil:
		tokens = e.fanout(project, func(t *TokenInfo) bool {
			return cond.Eval(func(topic string) bool { _, ok := slices.BinarySearch(t.Topics, topic); return ok })
		})
	}
	stored := *m
	stored.Name = name
	s := &Sent{Name: name, ID: fmt.Sprint(idNum), Project: project, SentAt: now, Message: &stored, Tokens: tokens}
	list := e.sent[project]
	var evict []*Sent
	over := max(0, len(list)+1-e.opts.MaxMessages)
	total := len(tokens)
	for _, old := range list[over:] {
		total += len(old.Tokens)
	}
	for over < len(list) && total > e.opts.MaxDeliveries {
		total -= len(list[over].Tokens)
		over++
	}
	evict = list[:over]
	// Across projects: drop the oldest messages of any other project while
	// the total would exceed the global bound.
	others := map[string]int{} // project -> messages dropped from its front
	total = e.totalSent() - len(evict) + 1
	for total > e.opts.MaxTotalMessages {
		oldest, oldestID := "", int64(0)
		for p, l := range e.sent {
			if p == project || others[p] >= len(l) {
				continue
			}
			id, _ := strconv.ParseInt(l[others[p]].ID, 10, 64)
			if oldest == "" || id < oldestID {
				oldest, oldestID = p, id
			}
		}
		if oldest == "" {
			break
		}
		evict = append(evict[:len(evict):len(evict)], e.sent[oldest][others[oldest]])
		others[oldest]++
		total--
	}
	if err := e.persist(func(tx service.Tx) error {
		for _, old := range evict {
			if err := tx.Delete(sentKey(old)); err != nil {
				return err
			}
		}
		if err := putJSON(tx, sentKey(s), s); err != nil {
			return err
		}
		return tx.Put([]byte(keyLastID), []byte(fmt.Sprint(idNum)))
	}); err != nil {
		return "", nil, err
	}
	e.lastID = idNum
	e.sent[project] = append(list[over:], s)
	for p, n := range others {
		if e.sent[p] = e.sent[p][n:]; len(e.sent[p]) == 0 {
			delete(e.sent, p)
		}
	}
	return name, s, nil
}

func (e *Engine) totalSent() int {
	n := 0
	for _, l := range e.sent {
		n += len(l)
	}
	return n
}

func isTargetError(err error) bool {
	me, ok := err.(*Error)
	return ok && len(me.Violations) == 1 && me.Violations[0].Field == "message"
}

// fanout lists the live tokens of a project matching pred, in token order
// so deliveries are deterministic.
func (e *Engine) fanout(project string, pred func(*TokenInfo) bool) []string {
	var out []string
	for tok, t := range e.tokens {
		if t.Project == project && !t.Deleted && pred(t) {
			out = append(out, tok)
		}
	}
	sort.Strings(out)
	return out
}

// allow counts one message to an Android device against production's
// per-device rate, in fixed one-minute windows of the sandbox clock.
func (e *Engine) allow(token string, now time.Time) bool {
	r := e.rates[token]
	if r == nil {
		r = &rate{}
		e.rates[token] = r
	}
	minute := now.Unix() / 60
	if r.minute != minute {
		r.minute, r.perMin = minute, 0
	}
	hour := 0
	for i, m := range r.binMin {
		if minute-m < 60 {
			hour += r.hourBins[i]
		}
	}
	if r.perMin >= deviceRatePerMinute || hour >= deviceRatePerHour {
		return false
	}
	r.perMin++
	bin := int(minute % 60)
	if r.binMin[bin] != minute {
		r.binMin[bin], r.hourBins[bin] = minute, 0
	}
	r.hourBins[bin]++
	return true
}

// Subscribe adds tokens to a topic (the instance-id batchAdd); results
// are in input order.
func (e *Engine) Subscribe(id identity.Identity, topic string, tokens []string) ([]TopicResult, error) {
	return e.topicOp(id, "subscribe", topic, tokens)
}

// Unsubscribe removes tokens from a topic (batchRemove).
func (e *Engine) Unsubscribe(id identity.Identity, topic string, tokens []string) ([]TopicResult, error) {
	return e.topicOp(id, "unsubscribe", topic, tokens)
}

// Instance-id result codes.
const (
	iidInvalidArgument = "INVALID_ARGUMENT"
	iidNotFound        = "NOT_FOUND"
	iidTooManyTopics   = "TOO_MANY_TOPICS"
)

func (e *Engine) topicOp(id identity.Identity, op, topic string, tokens []string) ([]TopicResult, error) {
	bare := strings.TrimPrefix(topic, "/topics/")
	if !ValidTopicName(bare) {
		return nil, &Error{Kind: ErrInvalidArgument, Msg: fmt.Sprintf("Invalid topic name %q", topic)}
	}
	if len(tokens) == 0 {
		return nil, &Error{Kind: ErrInvalidArgument, Msg: "No registration tokens given"}
	}
	if len(tokens) > MaxBatchTokens {
		return nil, &Error{Kind: ErrInvalidArgument, Msg: fmt.Sprintf("Too many registration tokens: %d, at most %d per request", len(tokens), MaxBatchTokens)}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	results := make([]TopicResult, len(tokens))
	changed := map[string]*TokenInfo{}
	for i, tok := range tokens {
		t := changed[tok]
		if t == nil {
			orig, ok := e.tokens[tok]
			if !ok {
				results[i].Error = iidInvalidArgument
				continue
			}
			t = copyToken(orig)
		}
		if t.Deleted {
			results[i].Error = iidNotFound
			continue
		}
		pos, has := slices.BinarySearch(t.Topics, bare)
		switch {
		case op == "subscribe" && !has:
			if len(t.Topics) >= MaxTopicsPerToken {
				results[i].Error = iidTooManyTopics
				continue
			}
			t.Topics = slices.Insert(t.Topics, pos, bare)
			changed[tok] = t
		case op == "unsubscribe" && has:
			t.Topics = slices.Delete(t.Topics, pos, pos+1)
			changed[tok] = t
		}
	}
	if len(changed) > 0 {
		if err := e.persist(func(tx service.Tx) error {
			for _, t := range changed {
				if err := putJSON(tx, tokenKey(t), t); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		for tok, t := range changed {
			e.tokens[tok] = t
		}
	}
	e.emitTopic(id, op, bare, tokens, results)
	return results, nil
}

// Messages lists a project's accepted messages, oldest first.
func (e *Engine) Messages(project string) []*Sent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.sent[project])
}

// Inbox lists what one token received, oldest first.
func (e *Engine) Inbox(project, token string) ([]*Delivery, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.tokens[token]
	if !ok || t.Project != project {
		return nil, &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("No registration token %q in project %q", token, project)}
	}
	out := []*Delivery{}
	for _, s := range e.sent[project] {
		if slices.Contains(s.Tokens, token) {
			out = append(out, deliveryOf(s, t))
		}
	}
	return out, nil
}

func deliveryOf(s *Sent, t *TokenInfo) *Delivery {
	m := s.Message
	via := map[string]any{}
	switch kind, value := m.target(); kind {
	case "topic":
		via["topic"] = value
	case "condition":
		via["condition"] = value
	default:
		via["token"] = value
	}
	return &Delivery{Name: s.Name, Token: t.Token, SentAt: s.SentAt, Message: m, Via: via,
		Payload: ClientPayloadFor(m, t.Platform, s.Project, s.Name)}
}

// ClientPayloadFor is what the platform's SDK hands the app: the
// platform's data and notification overrides applied to the message's.
func ClientPayloadFor(m *Message, p Platform, project, name string) ClientPayload {
	cp := ClientPayload{From: SenderID(project), MessageID: name[strings.LastIndexByte(name, '/')+1:]}
	data := m.Data
	notif := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			notif[k] = v
		}
	}
	if n := m.Notification; n != nil {
		set("title", n.Title)
		set("body", n.Body)
		set("image", n.Image)
	}
	if o := m.FcmOptions; o != nil && o.AnalyticsLabel != "" {
		cp.FcmOptions = map[string]string{"analyticsLabel": o.AnalyticsLabel}
	}
	switch p {
	case PlatformWeb:
		if w := m.Webpush; w != nil {
			if w.Data != nil {
				data = w.Data
			}
			for _, k := range []string{"title", "body", "image", "icon"} {
				if s, ok := w.Notification[k].(string); ok {
					set(k, s)
				}
			}
			if o := w.FcmOptions; o != nil {
				if cp.FcmOptions == nil {
					cp.FcmOptions = map[string]string{}
				}
				if o.Link != "" {
					cp.FcmOptions["link"] = o.Link
				}
				if o.AnalyticsLabel != "" {
					cp.FcmOptions["analyticsLabel"] = o.AnalyticsLabel
				}
			}
			if topic := w.Headers["Topic"]; topic != "" {
				cp.CollapseKey = topic
			}
		}
	case PlatformAndroid:
		if a := m.Android; a != nil {
			if a.Data != nil {
				data = a.Data
			}
			cp.CollapseKey = a.CollapseKey
			if an := a.Notification; an != nil {
				set("title", an.Title)
				set("body", an.Body)
				set("image", an.Image)
				set("icon", an.Icon)
			}
		}
	case PlatformIOS:
		if a := m.APNS; a != nil {
			if aps, ok := a.Payload["aps"].(map[string]any); ok {
				switch alert := aps["alert"].(type) {
				case string:
					set("body", alert)
				case map[string]any:
					if s, ok := alert["title"].(string); ok {
						set("title", s)
					}
					if s, ok := alert["body"].(string); ok {
						set("body", s)
					}
				}
			}
			cp.CollapseKey = a.Headers["apns-collapse-id"]
		}
	}
	if len(data) > 0 {
		cp.Data = data
	}
	if len(notif) > 0 {
		cp.Notification = notif
	}
	return cp
}

// ClearMessages drops a project's inbox (every token's deliveries).
func (e *Engine) ClearMessages(id identity.Identity, project string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	list := e.sent[project]
	if err := e.persist(func(tx service.Tx) error { return tx.DeletePrefix(sentPrefix(project)) }); err != nil {
		return err
	}
	delete(e.sent, project)
	e.emitClear(id, project, len(list))
	return nil
}

// Reset implements service.Service.
func (e *Engine) Reset() error {
	e.mu.Lock()
	e.clear()
	e.mu.Unlock()
	e.closeWatchers("")
	return nil
}

type snapshot struct {
	LastID   int64        `json:"lastId"`
	Tokens   []*TokenInfo `json:"tokens"`
	Messages []*Sent      `json:"messages"`
}

// Snapshot implements service.Service.
func (e *Engine) Snapshot() (json.RawMessage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := snapshot{LastID: e.lastID, Tokens: []*TokenInfo{}, Messages: []*Sent{}}
	for _, t := range e.tokens {
		s.Tokens = append(s.Tokens, t)
	}
	sort.Slice(s.Tokens, func(i, j int) bool { return s.Tokens[i].Token < s.Tokens[j].Token })
	projects := make([]string, 0, len(e.sent))
	for p := range e.sent {
		projects = append(projects, p)
	}
	sort.Strings(projects)
	for _, p := range projects {
		s.Messages = append(s.Messages, e.sent[p]...)
	}
	return json.Marshal(s)
}

// Restore implements service.Service.
func (e *Engine) Restore(state json.RawMessage) error {
	var s snapshot
	if err := json.Unmarshal(state, &s); err != nil {
		return fmt.Errorf("messaging: restore: %w", err)
	}
	for _, t := range s.Tokens {
		if t == nil || t.Token == "" || t.Project == "" {
			return fmt.Errorf("messaging: restore: a token without token or project")
		}
		slices.Sort(t.Topics)
	}
	for _, m := range s.Messages {
		if m == nil || m.Project == "" || m.Message == nil {
			return fmt.Errorf("messaging: restore: a message without project or body")
		}
	}
	if err := e.replace(&s); err != nil {
		return err
	}
	e.closeWatchers("") // watchers of the replaced state end
	return nil
}

func (e *Engine) replace(s *snapshot) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.persist(func(tx service.Tx) error {
		if err := tx.DeletePrefix(nil); err != nil {
			return err
		}
		for _, t := range s.Tokens {
			if err := putJSON(tx, tokenKey(t), t); err != nil {
				return err
			}
		}
		for _, m := range s.Messages {
			if err := putJSON(tx, sentKey(m), m); err != nil {
				return err
			}
		}
		return tx.Put([]byte(keyLastID), []byte(fmt.Sprint(s.LastID)))
	}); err != nil {
		return err
	}
	e.clear()
	e.lastID = s.LastID
	for _, t := range s.Tokens {
		e.index(t)
	}
	for _, m := range s.Messages {
		e.sent[m.Project] = append(e.sent[m.Project], m)
	}
	return nil
}

func (e *Engine) index(t *TokenInfo) {
	e.tokens[t.Token] = t
	if t.Instance != "" && !t.Deleted {
		e.byInst[t.Project+"\x00"+t.Instance] = t.Token
	}
}
