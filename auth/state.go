package auth

import (
	"encoding/json"
	"slices"
	"strings"
)

// OOBCode is one out-of-band message in the emulator outbox
// (GET /emulator/v1/projects/{p}/oobCodes).
type OOBCode struct {
	Email       string `json:"email"`
	NewEmail    string `json:"newEmail,omitempty"`
	RequestType string `json:"requestType"`
	OOBCode     string `json:"oobCode"`
	OOBLink     string `json:"oobLink"`
	seq         uint64 // its record's key in the space
}

// space holds the accounts of a project or of one of its tenants. Every
// change goes through its methods, which keep the indexes and tell the
// engine's journal what to persist and how to undo it.
type space struct {
	j       *journal
	project string // the keys of this space's records
	tenant  string
	users   map[string]*User
	byEmail map[string]string // canonical email -> localId
	phones  multiIndex        // phone number -> localIds
	fedIDs  multiIndex        // providerId NUL rawId -> localIds
	provEm  multiIndex        // a linked provider's email -> localIds
	initEm  multiIndex        // initialEmail -> localIds
	oobs    []*OOBCode        // insertion order, as the outbox lists them
	oobSeq  uint64            // the next OOB record's key
	codes   []*VerificationCode
	codeSeq uint64
	proofs  map[string]TemporaryProof
	// totp holds pending TOTP enrollments by session and enrolled TOTP
	// secrets by "uid NUL enrollmentId".
	totp map[string]TOTPRecord
	// idpConfigs are the OIDC and SAML provider configs, by kind and id.
	idpConfigs map[IdpKind]map[string]map[string]any
}

func newSpace(j *journal, project, tenant string) *space {
	return &space{j: j, project: project, tenant: tenant, users: map[string]*User{}, byEmail: map[string]string{},
		phones: multiIndex{}, fedIDs: multiIndex{}, provEm: multiIndex{}, initEm: multiIndex{}, proofs: map[string]TemporaryProof{}, totp: map[string]TOTPRecord{}}
}

// multiIndex maps a key to the accounts having it; lookups answer the
// smallest uid, as the emulator's scan in uid order does.
type multiIndex map[string][]string

func (m multiIndex) add(k, id string) {
	if i, ok := slices.BinarySearch(m[k], id); !ok {
		m[k] = slices.Insert(m[k], i, id)
	}
}

func (m multiIndex) del(k, id string) {
	if i, ok := slices.BinarySearch(m[k], id); ok {
		m[k] = slices.Delete(m[k], i, i+1)
		if len(m[k]) == 0 {
			delete(m, k)
		}
	}
}

func (m multiIndex) first(k string) string {
	if ids := m[k]; len(ids) > 0 {
		return ids[0]
	}
	return ""
}

func fedKey(providerID, rawID string) string { return providerID + "\x00" + rawID }

func (s *space) get(localID string) *User { return s.users[localID] }

func (s *space) byEmailAddr(email string) *User {
	if id, ok := s.byEmail[email]; ok {
		return s.users[id]
	}
	return nil
}

func (s *space) byInitialEmail(email string) *User {
	if email == "" {
		return nil
	}
	return s.users[s.initEm.first(email)]
}

func (s *space) byPhone(phone string) *User {
	if phone == "" {
		return nil
	}
	return s.users[s.phones.first(phone)]
}

func (s *space) byProviderRawID(providerID, rawID string) *User {
	return s.users[s.fedIDs.first(fedKey(providerID, rawID))]
}

// byEmailOrProviderEmail lists users whose email or a provider email matches.
func (s *space) byEmailOrProviderEmail(email string) []*User {
	var out []*User
	seen := map[string]bool{}
	if u := s.byEmailAddr(email); u != nil {
		out = append(out, u)
		seen[u.LocalID] = true
	}
	for _, id := range s.provEm[email] {
		if !seen[id] {
			out = append(out, s.users[id])
			seen[id] = true
		}
	}
	return out
}

func (s *space) sortedIDs() []string {
	ids := make([]string, 0, len(s.users))
	for id := range s.users {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// count is the number of accounts.
func (s *space) count() int { return len(s.users) }

// usersAfter copies the accounts whose uid sorts after after ("" for all),
// in uid order.
func (s *space) usersAfter(after string) []*User {
	out := []*User{}
	for _, id := range s.sortedIDs() {
		if after == "" || id > after {
			out = append(out, s.users[id].clone())
		}
	}
	return out
}

// eachUser calls fn with every account, in no particular order (fn must
// not change them).
func (s *space) eachUser(fn func(*User)) {
	for _, u := range s.users {
		fn(u)
	}
}

// outbox copies the OOB messages, oldest first.
func (s *space) outbox() []OOBCode {
	out := []OOBCode{}
	for _, o := range s.oobs {
		out = append(out, *o)
	}
	return out
}

// put stores u (a fresh copy the caller owns), keeps the email index and
// recomputes the derived password and phone providers, then applies the
// explicit provider deletions and upserts, as the emulator does on every
// account write.
func (s *space) put(u *User, upserts []ProviderUserInfo, deletes []string) *User {
	if old := s.users[u.LocalID]; old != nil && old.Email != "" && old.Email != u.Email {
		if s.byEmail[old.Email] == u.LocalID {
			setMap(s.j, s.byEmail, old.Email, "", true)
		}
	}
	if id, ok := s.byEmail[u.Email]; u.Email != "" && (!ok || id != u.LocalID) {
		setMap(s.j, s.byEmail, u.Email, u.LocalID, false)
	}
	// The derived providers join the caller's lists in arrays of the
	// stack's: a sign-in's put allocates none of them.
	var upArr [2]ProviderUserInfo
	var delArr [2]string
	upserts = append(upArr[:0], upserts...)
	deletes = append(delArr[:0], deletes...)
	if u.Email != "" && (u.PasswordHash != "" || u.EmailLinkSignin) {
		upserts = append(upserts, ProviderUserInfo{ProviderID: ProviderPassword, Email: u.Email, FederatedID: u.Email,
			RawID: u.Email, DisplayName: u.DisplayName, PhotoURL: u.PhotoURL})
	} else {
		deletes = append(deletes, ProviderPassword)
	}
	if u.PhoneNumber != "" {
		upserts = append(upserts, ProviderUserInfo{ProviderID: ProviderPhone, PhoneNumber: u.PhoneNumber, RawID: u.PhoneNumber})
	} else {
		deletes = append(deletes, ProviderPhone)
	}
	if !providersUnchanged(u.ProviderUserInfo, upserts, deletes) {
		u.ProviderUserInfo = applyProviders(u.ProviderUserInfo, upserts, deletes)
	}
	s.setUser(u.LocalID, u)
	return u
}

// applyProviders is the providers of an account after deletes (provider
// ids) and then upserts (replacing the first with the same id, else
// appended), in a new slice: nil stays nil when nothing is upserted.
func applyProviders(cur, upserts []ProviderUserInfo, deletes []string) []ProviderUserInfo {
	var out []ProviderUserInfo
	if cur != nil {
		out = cur[:0:0]
		for _, p := range cur {
			if !slices.Contains(deletes, p.ProviderID) {
				out = append(out, p)
			}
		}
	}
	for _, up := range upserts {
		if i := slices.IndexFunc(out, func(p ProviderUserInfo) bool { return p.ProviderID == up.ProviderID }); i >= 0 {
			out[i] = up
		} else {
			out = append(out, up)
		}
	}
	return out
}

// providersUnchanged says whether applyProviders would return providers
// equal to cur: none is deleted and each upsert finds its equal already
// there, as on every sign-in and refresh. cur is then kept as it is.
func providersUnchanged(cur, upserts []ProviderUserInfo, deletes []string) bool {
	if cur == nil {
		return len(upserts) == 0
	}
	for _, p := range cur {
		if slices.Contains(deletes, p.ProviderID) {
			return false
		}
	}
	for _, up := range upserts {
		i := slices.IndexFunc(cur, func(p ProviderUserInfo) bool { return p.ProviderID == up.ProviderID })
		if i < 0 || cur[i] != up {
			return false
		}
	}
	return true
}

// setUser replaces (or, with nil, deletes) an account, keeping the phone
// and federated-id indexes, and journals the record.
func (s *space) setUser(id string, u *User) {
	old := s.users[id]
	reindex := !sameIndexKeys(old, u)
	if reindex {
		s.unindex(old)
	}
	if u == nil {
		delete(s.users, id)
	} else {
		s.users[id] = u
	}
	if reindex {
		s.index(u)
	}
	s.j.recordUser(userKeyString(s.project, s.tenant, id), s, id, func() {
		s.unindex(s.users[id])
		if old == nil {
			delete(s.users, id)
		} else {
			s.users[id] = old
		}
		s.index(old)
	})
}

// sameIndexKeys says whether a and b, two versions of one account, have
// the same keys in the phone, initial-email and provider indexes, as a
// sign-in or a refresh leaves them (only timestamps change): then
// setUser leaves the indexes as they are.
func sameIndexKeys(a, b *User) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.PhoneNumber != b.PhoneNumber || a.InitialEmail != b.InitialEmail || len(a.ProviderUserInfo) != len(b.ProviderUserInfo) {
		return false
	}
	for i, p := range a.ProviderUserInfo {
		q := b.ProviderUserInfo[i]
		if p.ProviderID != q.ProviderID || p.RawID != q.RawID || p.Email != q.Email {
			return false
		}
	}
	return true
}

func (s *space) index(u *User) {
	if u == nil {
		return
	}
	if u.PhoneNumber != "" {
		s.phones.add(u.PhoneNumber, u.LocalID)
	}
	if u.InitialEmail != "" {
		s.initEm.add(u.InitialEmail, u.LocalID)
	}
	for _, p := range u.ProviderUserInfo {
		if p.ProviderID != "" && p.RawID != "" {
			s.fedIDs.add(fedKey(p.ProviderID, p.RawID), u.LocalID)
		}
		if p.Email != "" {
			s.provEm.add(p.Email, u.LocalID)
		}
	}
}

func (s *space) unindex(u *User) {
	if u == nil {
		return
	}
	if u.PhoneNumber != "" {
		s.phones.del(u.PhoneNumber, u.LocalID)
	}
	if u.InitialEmail != "" {
		s.initEm.del(u.InitialEmail, u.LocalID)
	}
	for _, p := range u.ProviderUserInfo {
		if p.ProviderID != "" && p.RawID != "" {
			s.fedIDs.del(fedKey(p.ProviderID, p.RawID), u.LocalID)
		}
		if p.Email != "" {
			s.provEm.del(p.Email, u.LocalID)
		}
	}
}

func (s *space) remove(u *User) {
	if u.Email != "" && s.byEmail[u.Email] == u.LocalID {
		setMap(s.j, s.byEmail, u.Email, "", true)
	}
	for _, m := range u.MFAInfo {
		if _, ok := s.totp[secretKey(u.LocalID, m.MFAEnrollmentID)]; ok {
			s.setTOTP(secretKey(u.LocalID, m.MFAEnrollmentID), nil)
		}
	}
	s.setUser(u.LocalID, nil)
}

func (s *space) clearUsers() {
	users, byEmail, phones, fedIDs, provEm, initEm := s.users, s.byEmail, s.phones, s.fedIDs, s.provEm, s.initEm
	s.users, s.byEmail, s.phones, s.fedIDs, s.provEm, s.initEm = map[string]*User{}, map[string]string{}, multiIndex{}, multiIndex{}, multiIndex{}, multiIndex{}
	s.j.recordPrefix(spaceKey(s.project, s.tenant, kindUser), func() {
		s.users, s.byEmail, s.phones, s.fedIDs, s.provEm, s.initEm = users, byEmail, phones, fedIDs, provEm, initEm
	})
}

func (s *space) oob(code string) *OOBCode {
	for _, o := range s.oobs {
		if o.OOBCode == code {
			return o
		}
	}
	return nil
}

// addOOB appends a message to the outbox.
func (s *space) addOOB(o *OOBCode) {
	old := s.oobs
	o.seq = s.oobSeq
	s.oobSeq++
	s.oobs = append(slices.Clip(old), o)
	c := *o
	s.j.record(oobKey(s.project, s.tenant, o.seq), func() ([]byte, error) { return json.Marshal(c) }, func() { s.oobs = old })
}

func (s *space) deleteOOB(code string) {
	old := s.oobs
	i := slices.IndexFunc(old, func(o *OOBCode) bool { return o.OOBCode == code })
	if i < 0 {
		return
	}
	s.oobs = slices.Delete(slices.Clone(old), i, i+1)
	s.j.record(oobKey(s.project, s.tenant, old[i].seq), func() ([]byte, error) { return nil, nil }, func() { s.oobs = old })
}

// reindex rebuilds the indexes after a restore.
func (s *space) reindex() {
	s.byEmail, s.phones, s.fedIDs, s.provEm, s.initEm = map[string]string{}, multiIndex{}, multiIndex{}, multiIndex{}, multiIndex{}
	for _, id := range s.sortedIDs() {
		u := s.users[id]
		if u.Email != "" {
			s.byEmail[u.Email] = id
		}
		s.index(u)
	}
}

// ProjectConfig is the project-level configuration (GET /v2/projects/{p}/config).
type ProjectConfig struct {
	SignIn             SignInConfig       `json:"signIn"`
	BlockingFunctions  map[string]any     `json:"blockingFunctions"`
	EmailPrivacyConfig EmailPrivacyConfig `json:"emailPrivacyConfig"`
	// MFA is the project's multi-factor config (admin SDKs'
	// ProjectConfig.MultiFactorConfig): TOTP is available once a provider
	// config enables it, as in production.
	MFA *ProjectMFAConfig `json:"mfa,omitempty"`
}

// ProjectMFAConfig is the v2 config's mfa object.
type ProjectMFAConfig struct {
	State            string              `json:"state,omitempty"`
	EnabledProviders []string            `json:"enabledProviders,omitempty"`
	ProviderConfigs  []MFAProviderConfig `json:"providerConfigs,omitempty"`
}

// MFAProviderConfig configures one second-factor kind (TOTP).
type MFAProviderConfig struct {
	State              string              `json:"state,omitempty"`
	TOTPProviderConfig *TOTPProviderConfig `json:"totpProviderConfig,omitempty"`
}

// TOTPProviderConfig is how many 30 s steps around now a TOTP code may be from.
type TOTPProviderConfig struct {
	AdjacentIntervals int `json:"adjacentIntervals,omitempty"`
}

// totp returns the enabled TOTP provider config, if any.
func (m *ProjectMFAConfig) totp() *MFAProviderConfig {
	if m == nil {
		return nil
	}
	for i, p := range m.ProviderConfigs {
		if p.TOTPProviderConfig != nil && p.State == "ENABLED" {
			return &m.ProviderConfigs[i]
		}
	}
	return nil
}

// SignInConfig says whether several accounts may share an email.
type SignInConfig struct {
	AllowDuplicateEmails bool `json:"allowDuplicateEmails"`
	// The sign-in methods (v2 config signIn.email / anonymous /
	// phoneNumber). Unset means enabled, as the emulator serves every
	// method; production refuses a disabled one.
	Email       *EmailSignIn `json:"email,omitempty"`
	Anonymous   *Toggle      `json:"anonymous,omitempty"`
	PhoneNumber *PhoneSignIn `json:"phoneNumber,omitempty"`
}

// EmailSignIn switches email/password and email-link sign-in.
type EmailSignIn struct {
	Enabled bool `json:"enabled"`
	// PasswordRequired false allows email-link sign-in too.
	PasswordRequired bool `json:"passwordRequired,omitempty"`
}

// Toggle is an enabled switch.
type Toggle struct {
	Enabled bool `json:"enabled"`
}

// PhoneSignIn switches phone sign-in; TestPhoneNumbers maps numbers to
// their fixed code (no code is "sent" for them).
type PhoneSignIn struct {
	Enabled          bool              `json:"enabled"`
	TestPhoneNumbers map[string]string `json:"testPhoneNumbers,omitempty"`
}

// EmailPrivacyConfig turns on email-enumeration protection
// (INVALID_LOGIN_CREDENTIALS instead of EMAIL_NOT_FOUND/INVALID_PASSWORD).
type EmailPrivacyConfig struct {
	EnableImprovedEmailPrivacy bool `json:"enableImprovedEmailPrivacy"`
}

// Tenant is a tenant's configuration (the /v2 tenants resource).
type Tenant struct {
	Name                  string     `json:"name,omitempty"`
	TenantID              string     `json:"tenantId"`
	DisplayName           string     `json:"displayName,omitempty"`
	AllowPasswordSignup   bool       `json:"allowPasswordSignup"`
	EnableEmailLinkSignin bool       `json:"enableEmailLinkSignin"`
	EnableAnonymousUser   bool       `json:"enableAnonymousUser"`
	DisableAuth           bool       `json:"disableAuth"`
	MFAConfig             *MFAConfig `json:"mfaConfig,omitempty"`
}

// MFAConfig is a tenant's multi-factor configuration (stored, not enforced).
type MFAConfig struct {
	State            string   `json:"state"`
	EnabledProviders []string `json:"enabledProviders"`
}

type tenant struct {
	config Tenant
	space  *space
}

type project struct {
	j       *journal
	id      string
	config  ProjectConfig
	space   *space
	tenants map[string]*tenant
}

func newProject(j *journal, id string) *project {
	return &project{j: j, id: id, space: newSpace(j, id, ""), tenants: map[string]*tenant{},
		config: ProjectConfig{BlockingFunctions: map[string]any{}}}
}

// tenant returns the tenant, creating it with everything enabled when it
// does not exist: the emulator serves any tenant id it is asked about.
func (p *project) tenant(id string) *tenant {
	t := p.tenants[id]
	if t == nil {
		t = p.addTenant(Tenant{TenantID: id, Name: "projects/" + p.id + "/tenants/" + id,
			AllowPasswordSignup: true, EnableAnonymousUser: true, EnableEmailLinkSignin: true,
			MFAConfig: &MFAConfig{State: "ENABLED", EnabledProviders: []string{"PHONE_SMS"}}})
	}
	return t
}

// addTenant stores a new tenant.
func (p *project) addTenant(cfg Tenant) *tenant {
	t := &tenant{config: cfg, space: newSpace(p.j, p.id, cfg.TenantID)}
	setMap(p.j, p.tenants, cfg.TenantID, t, false)
	p.touchTenant(t)
	return t
}

// touchTenant journals a tenant's config; call it before changing it.
func (p *project) touchTenant(t *tenant) {
	old := cloneTenant(t.config)
	id := t.config.TenantID
	p.j.record(tenantKey(p.id, id), func() ([]byte, error) {
		if p.tenants[id] != t {
			return nil, nil
		}
		return json.Marshal(t.config)
	}, func() { t.config = old })
}

// deleteTenant removes a tenant with everything it holds.
func (p *project) deleteTenant(id string) {
	if p.tenants[id] == nil {
		return
	}
	setMap(p.j, p.tenants, id, nil, true)
	p.j.record(tenantKey(p.id, id), func() ([]byte, error) { return nil, nil }, nil)
	p.j.recordPrefix(spacePrefix(p.id, id), nil)
}

// touchConfig journals the project config; call it before changing it.
func (p *project) touchConfig() {
	old := cloneConfig(p.config)
	p.j.record(configKey(p.id), func() ([]byte, error) { return json.Marshal(p.config) }, func() { p.config = old })
}

// scope is the account space an operation works in, with the switches
// that apply to it.
type scope struct {
	project *project
	tenant  *tenant // nil for the project itself
	space   *space
	// idToken is the call's ID token as scopeFor decoded it (zero when it
	// had none), so that parseIDToken does not decode it again.
	idToken decodedJWT
}

// decodedJWT is an ID token and the claims decodeTokenClaims read of it.
type decodedJWT struct {
	raw    string
	claims tokenClaims
	err    error
}

// claims is decodeTokenClaims(tok), decoded once per call.
func (s scope) claims(tok string) (tokenClaims, error) {
	if s.idToken.raw != "" && s.idToken.raw == tok {
		return s.idToken.claims, s.idToken.err
	}
	return decodeTokenClaims(tok)
}

func (s scope) tenantID() string {
	if s.tenant == nil {
		return ""
	}
	return s.tenant.config.TenantID
}

func (s scope) disableAuth() bool { return s.tenant != nil && s.tenant.config.DisableAuth }
func (s scope) allowPassword() bool {
	if s.tenant != nil {
		return s.tenant.config.AllowPasswordSignup
	}
	e := s.project.config.SignIn.Email
	return e == nil || e.Enabled
}
func (s scope) allowAnonymous() bool {
	if s.tenant != nil {
		return s.tenant.config.EnableAnonymousUser
	}
	a := s.project.config.SignIn.Anonymous
	return a == nil || a.Enabled
}
func (s scope) allowEmailLink() bool {
	if s.tenant != nil {
		return s.tenant.config.EnableEmailLinkSignin
	}
	e := s.project.config.SignIn.Email
	return e == nil || (e.Enabled && !e.PasswordRequired)
}
func (s scope) allowPhone() bool {
	if s.tenant != nil {
		return true
	}
	p := s.project.config.SignIn.PhoneNumber
	return p == nil || p.Enabled
}

// testCode is the fixed code of a configured test phone number.
func (s scope) testCode(phone string) (string, bool) {
	if s.tenant != nil || s.project.config.SignIn.PhoneNumber == nil {
		return "", false
	}
	c, ok := s.project.config.SignIn.PhoneNumber.TestPhoneNumbers[phone]
	return c, ok
}
func (s scope) oneAccountPerEmail() bool {
	return !s.project.config.SignIn.AllowDuplicateEmails
}
func (s scope) improvedPrivacy() bool {
	return s.project.config.EmailPrivacyConfig.EnableImprovedEmailPrivacy
}

func (s scope) checkEnabled() error { return assert(!s.disableAuth(), "PROJECT_DISABLED") }

func canonicalEmail(e string) string { return strings.ToLower(e) }

func isValidPhone(p string) bool { return strings.HasPrefix(p, "+") }
