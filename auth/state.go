package auth

import (
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
}

// space holds the accounts of a project or of one of its tenants.
type space struct {
	users   map[string]*User
	byEmail map[string]string // canonical email -> localId
	oobs    []*OOBCode        // insertion order, as the outbox lists them
}

func newSpace() *space {
	return &space{users: map[string]*User{}, byEmail: map[string]string{}}
}

func (s *space) get(localID string) *User { return s.users[localID] }

func (s *space) byEmailAddr(email string) *User {
	if id, ok := s.byEmail[email]; ok {
		return s.users[id]
	}
	return nil
}

func (s *space) byInitialEmail(email string) *User {
	for _, id := range s.sortedIDs() {
		if u := s.users[id]; u.InitialEmail == email {
			return u
		}
	}
	return nil
}

func (s *space) byPhone(phone string) *User {
	for _, id := range s.sortedIDs() {
		if u := s.users[id]; u.PhoneNumber == phone {
			return u
		}
	}
	return nil
}

func (s *space) byProviderRawID(providerID, rawID string) *User {
	for _, id := range s.sortedIDs() {
		u := s.users[id]
		for _, p := range u.ProviderUserInfo {
			if p.ProviderID == providerID && p.RawID == rawID {
				return u
			}
		}
	}
	return nil
}

// byEmailOrProviderEmail lists users whose email or a provider email matches.
func (s *space) byEmailOrProviderEmail(email string) []*User {
	var out []*User
	seen := map[string]bool{}
	if u := s.byEmailAddr(email); u != nil {
		out = append(out, u)
		seen[u.LocalID] = true
	}
	for _, id := range s.sortedIDs() {
		u := s.users[id]
		if seen[id] {
			continue
		}
		for _, p := range u.ProviderUserInfo {
			if p.Email == email {
				out = append(out, u)
				seen[id] = true
				break
			}
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

// put stores u (a fresh copy the caller owns), keeps the email index and
// recomputes the derived password and phone providers, then applies the
// explicit provider deletions and upserts, as the emulator does on every
// account write.
func (s *space) put(u *User, upserts []ProviderUserInfo, deletes []string) *User {
	if old := s.users[u.LocalID]; old != nil && old.Email != "" && old.Email != u.Email {
		if s.byEmail[old.Email] == u.LocalID {
			delete(s.byEmail, old.Email)
		}
	}
	if u.Email != "" {
		s.byEmail[u.Email] = u.LocalID
	}
	upserts = slices.Clone(upserts)
	deletes = slices.Clone(deletes)
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
	if u.ProviderUserInfo != nil {
		kept := u.ProviderUserInfo[:0:0]
		for _, p := range u.ProviderUserInfo {
			if !slices.Contains(deletes, p.ProviderID) {
				kept = append(kept, p)
			}
		}
		u.ProviderUserInfo = kept
	}
	for _, up := range upserts {
		if i := slices.IndexFunc(u.ProviderUserInfo, func(p ProviderUserInfo) bool { return p.ProviderID == up.ProviderID }); i >= 0 {
			u.ProviderUserInfo[i] = up
		} else {
			u.ProviderUserInfo = append(u.ProviderUserInfo, up)
		}
	}
	s.users[u.LocalID] = u
	return u
}

func (s *space) remove(u *User) {
	delete(s.users, u.LocalID)
	if u.Email != "" && s.byEmail[u.Email] == u.LocalID {
		delete(s.byEmail, u.Email)
	}
}

func (s *space) clearUsers() {
	s.users = map[string]*User{}
	s.byEmail = map[string]string{}
}

func (s *space) oob(code string) *OOBCode {
	for _, o := range s.oobs {
		if o.OOBCode == code {
			return o
		}
	}
	return nil
}

func (s *space) deleteOOB(code string) {
	s.oobs = slices.DeleteFunc(s.oobs, func(o *OOBCode) bool { return o.OOBCode == code })
}

// reindex rebuilds the email index after a restore.
func (s *space) reindex() {
	s.byEmail = map[string]string{}
	for _, id := range s.sortedIDs() {
		if u := s.users[id]; u.Email != "" {
			s.byEmail[u.Email] = id
		}
	}
}

// ProjectConfig is the project-level configuration (GET /v2/projects/{p}/config).
type ProjectConfig struct {
	SignIn             SignInConfig       `json:"signIn"`
	BlockingFunctions  map[string]any     `json:"blockingFunctions"`
	EmailPrivacyConfig EmailPrivacyConfig `json:"emailPrivacyConfig"`
}

// SignInConfig says whether several accounts may share an email.
type SignInConfig struct {
	AllowDuplicateEmails bool `json:"allowDuplicateEmails"`
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
	id      string
	config  ProjectConfig
	space   *space
	tenants map[string]*tenant
}

func newProject(id string) *project {
	return &project{id: id, space: newSpace(), tenants: map[string]*tenant{},
		config: ProjectConfig{BlockingFunctions: map[string]any{}}}
}

// tenant returns the tenant, creating it with everything enabled when it
// does not exist: the emulator serves any tenant id it is asked about.
func (p *project) tenant(id string) *tenant {
	t := p.tenants[id]
	if t == nil {
		t = &tenant{space: newSpace(), config: Tenant{TenantID: id, Name: "projects/" + p.id + "/tenants/" + id,
			AllowPasswordSignup: true, EnableAnonymousUser: true, EnableEmailLinkSignin: true,
			MFAConfig: &MFAConfig{State: "ENABLED", EnabledProviders: []string{"PHONE_SMS"}}}}
		p.tenants[id] = t
	}
	return t
}

// scope is the account space an operation works in, with the switches
// that apply to it.
type scope struct {
	project *project
	tenant  *tenant // nil for the project itself
	space   *space
}

func (s scope) tenantID() string {
	if s.tenant == nil {
		return ""
	}
	return s.tenant.config.TenantID
}

func (s scope) disableAuth() bool   { return s.tenant != nil && s.tenant.config.DisableAuth }
func (s scope) allowPassword() bool { return s.tenant == nil || s.tenant.config.AllowPasswordSignup }
func (s scope) allowAnonymous() bool {
	return s.tenant == nil || s.tenant.config.EnableAnonymousUser
}
func (s scope) allowEmailLink() bool {
	return s.tenant == nil || s.tenant.config.EnableEmailLinkSignin
}
func (s scope) oneAccountPerEmail() bool {
	return !s.project.config.SignIn.AllowDuplicateEmails
}
func (s scope) improvedPrivacy() bool {
	return s.project.config.EmailPrivacyConfig.EnableImprovedEmailPrivacy
}

func (s scope) checkEnabled() error { return assert(!s.disableAuth(), "PROJECT_DISABLED") }

// isValidEmail is the emulator's check: something@something, one @.
func isValidEmail(e string) bool {
	at := strings.IndexByte(e, '@')
	return at > 0 && at == strings.LastIndexByte(e, '@') && at < len(e)-1
}

func canonicalEmail(e string) string { return strings.ToLower(e) }

func isValidPhone(p string) bool { return strings.HasPrefix(p, "+") }
