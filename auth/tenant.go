package auth

import (
	"slices"
	"strconv"
	"strings"
)

// TenantRequest is the body of tenant create and patch.
type TenantRequest struct {
	DisplayName           *string    `json:"displayName,omitempty"`
	AllowPasswordSignup   *bool      `json:"allowPasswordSignup,omitempty"`
	EnableEmailLinkSignin *bool      `json:"enableEmailLinkSignin,omitempty"`
	EnableAnonymousUser   *bool      `json:"enableAnonymousUser,omitempty"`
	DisableAuth           *bool      `json:"disableAuth,omitempty"`
	MFAConfig             *MFAConfig `json:"mfaConfig,omitempty"`
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// tenantFrom builds a full tenant config; unset switches are false and an
// unset MFA config is disabled, as the emulator fills them.
func tenantFrom(req TenantRequest) Tenant {
	m := MFAConfig{State: "DISABLED", EnabledProviders: []string{}}
	if req.MFAConfig != nil {
		m = *req.MFAConfig
		if m.State == "" {
			m.State = "DISABLED"
		}
		if m.EnabledProviders == nil {
			m.EnabledProviders = []string{}
		}
	}
	return Tenant{DisplayName: deref(req.DisplayName), AllowPasswordSignup: deref(req.AllowPasswordSignup),
		EnableEmailLinkSignin: deref(req.EnableEmailLinkSignin), EnableAnonymousUser: deref(req.EnableAnonymousUser),
		DisableAuth: deref(req.DisableAuth), MFAConfig: &m}
}

// CreateTenant creates a tenant with a random id.
func (e *Engine) CreateTenant(c Call, req TenantRequest) (_ *Tenant, err error) {
	defer e.begin()(&err)
	return e.tenants.createTenant(c, req)
}

// tenantFlow is the configuration side: tenants, the project config and
// the emulator's own endpoints (clearing accounts, the outbox, its config).
type tenantFlow struct{ *core }

func (e tenantFlow) createTenant(c Call, req TenantRequest) (*Tenant, error) {
	if c.Tenant != "" {
		return nil, Internal("INTERNAL_ERROR : Can only create tenant in agent project")
	}
	if c.Project == "" {
		return nil, badRequest("MISSING_PROJECT_ID")
	}
	p := e.project(c.Project)
	t := tenantFrom(req)
	for {
		t.TenantID = e.randomString(28, alnum)
		if p.tenants[t.TenantID] == nil {
			break
		}
	}
	t.Name = "projects/" + p.id + "/tenants/" + t.TenantID
	p.addTenant(t)
	out := cloneTenant(t)
	return &out, nil
}

// ListTenantsResponse is a page of tenants.
type ListTenantsResponse struct {
	Tenants       []Tenant `json:"tenants"`
	NextPageToken string   `json:"nextPageToken,omitempty"`
}

// ListTenants lists tenants in id order, a page at a time (default 20).
func (e *Engine) ListTenants(c Call, pageSize, pageToken string) (_ *ListTenantsResponse, err error) {
	defer e.begin()(&err)
	return e.tenants.listTenants(c, pageSize, pageToken)
}

func (e tenantFlow) listTenants(c Call, pageSize, pageToken string) (*ListTenantsResponse, error) {
	if c.Tenant != "" {
		return nil, badRequest("((Can only list tenants in agent project.))")
	}
	if c.Project == "" {
		return nil, badRequest("MISSING_PROJECT_ID")
	}
	p := e.project(c.Project)
	size := 20
	if f, err := strconv.ParseFloat(pageSize, 64); err == nil && int(f) != 0 {
		size = int(f)
	}
	size = min(size, 1000)
	ids := make([]string, 0, len(p.tenants))
	for id := range p.tenants {
		if pageToken == "" || id > pageToken {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	resp := &ListTenantsResponse{Tenants: []Tenant{}}
	for _, id := range ids {
		resp.Tenants = append(resp.Tenants, cloneTenant(p.tenants[id].config))
	}
	if size > 0 && len(resp.Tenants) >= size {
		resp.Tenants = resp.Tenants[:size]
		resp.NextPageToken = resp.Tenants[size-1].TenantID
	}
	return resp, nil
}

// GetTenant returns a tenant (created with everything enabled if unknown,
// as the emulator does).
func (e *Engine) GetTenant(c Call) (_ *Tenant, err error) {
	defer e.begin()(&err)
	return e.tenants.getTenant(c)
}

func (e tenantFlow) getTenant(c Call) (*Tenant, error) {
	if c.Project == "" || c.Tenant == "" {
		return nil, badRequest("((Can only get tenant on tenant projects.))")
	}
	t := cloneTenant(e.project(c.Project).tenant(c.Tenant).config)
	return &t, nil
}

// UpdateTenant patches a tenant: the fields named in updateMask
// (comma-separated), or the whole config when the mask is empty.
func (e *Engine) UpdateTenant(c Call, req TenantRequest, updateMask string) (_ *Tenant, err error) {
	defer e.begin()(&err)
	return e.tenants.updateTenant(c, req, updateMask)
}

func (e tenantFlow) updateTenant(c Call, req TenantRequest, updateMask string) (*Tenant, error) {
	if c.Project == "" || c.Tenant == "" {
		return nil, badRequest("((Can only update tenant on tenant projects.))")
	}
	p := e.project(c.Project)
	t := p.tenant(c.Tenant)
	p.touchTenant(t)
	if updateMask == "" {
		n := tenantFrom(req)
		n.TenantID, n.Name = t.config.TenantID, t.config.Name
		t.config = n
	} else {
		for _, f := range strings.Split(updateMask, ",") {
			patchTenant(&t.config, req, strings.TrimSpace(f))
		}
	}
	out := cloneTenant(t.config)
	return &out, nil
}

// patchTenant sets one updateMask field of a tenant config from req (a
// field req leaves out stays as it is).
func patchTenant(cfg *Tenant, req TenantRequest, field string) {
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	switch field {
	case "displayName":
		if req.DisplayName != nil {
			cfg.DisplayName = *req.DisplayName
		}
	case "allowPasswordSignup":
		set(&cfg.AllowPasswordSignup, req.AllowPasswordSignup)
	case "enableEmailLinkSignin":
		set(&cfg.EnableEmailLinkSignin, req.EnableEmailLinkSignin)
	case "enableAnonymousUser":
		set(&cfg.EnableAnonymousUser, req.EnableAnonymousUser)
	case "disableAuth":
		set(&cfg.DisableAuth, req.DisableAuth)
	case "mfaConfig":
		if req.MFAConfig != nil {
			m := *req.MFAConfig
			cfg.MFAConfig = &m
		}
	case "mfaConfig.state":
		if req.MFAConfig != nil && req.MFAConfig.State != "" {
			if cfg.MFAConfig == nil {
				cfg.MFAConfig = &MFAConfig{}
			}
			cfg.MFAConfig.State = req.MFAConfig.State
		}
	case "mfaConfig.enabledProviders":
		if req.MFAConfig != nil && req.MFAConfig.EnabledProviders != nil {
			if cfg.MFAConfig == nil {
				cfg.MFAConfig = &MFAConfig{}
			}
			cfg.MFAConfig.EnabledProviders = req.MFAConfig.EnabledProviders
		}
	}
}

// DeleteTenant removes a tenant and its accounts.
func (e *Engine) DeleteTenant(c Call) (err error) {
	defer e.begin()(&err)
	return e.tenants.deleteTenant(c)
}

func (e tenantFlow) deleteTenant(c Call) error {
	if c.Project == "" || c.Tenant == "" {
		return badRequest("((Can only delete tenant on tenant projects.))")
	}
	p := e.project(c.Project)
	if t := p.tenants[c.Tenant]; t != nil && t.space.count() > 0 {
		e.emit(c, scope{project: p, tenant: t, space: t.space}, OpUsersClear, "*", nil, nil, map[string]any{"reason": "tenant_delete"})
	}
	p.deleteTenant(c.Tenant)
	return nil
}

// ---- emulator endpoints and project config ----

// ClearAccounts deletes every account of the project (or tenant), as
// DELETE /emulator/v1/projects/{p}/accounts does.
func (e *Engine) ClearAccounts(c Call) (err error) {
	defer e.begin()(&err)
	return e.tenants.clearAccounts(c)
}

func (e tenantFlow) clearAccounts(c Call) error {
	sc, err := e.scopeFor(c, "", "", nil)
	if err != nil {
		return err
	}
	sc.space.clearUsers()
	e.emit(c, sc, OpUsersClear, "*", nil, nil, nil)
	return nil
}

// OOBCodesResponse is the outbox listing.
type OOBCodesResponse struct {
	OOBCodes []OOBCode `json:"oobCodes"`
}

// ListOOBCodes returns the outbox: every code not yet used, oldest first.
func (e *Engine) ListOOBCodes(c Call) (_ *OOBCodesResponse, err error) {
	defer e.begin()(&err)
	return e.tenants.listOOBCodes(c)
}

func (e tenantFlow) listOOBCodes(c Call) (*OOBCodesResponse, error) {
	sc, err := e.scopeFor(c, "", "", nil)
	if err != nil {
		return nil, err
	}
	return &OOBCodesResponse{OOBCodes: sc.space.outbox()}, nil
}

// EmulatorConfig is GET|PATCH /emulator/v1/projects/{p}/config.
type EmulatorConfig struct {
	SignIn             *SignInConfigPatch       `json:"signIn,omitempty"`
	EmailPrivacyConfig *EmailPrivacyConfigPatch `json:"emailPrivacyConfig,omitempty"`
}

// SignInConfigPatch is the optional-field form of SignInConfig.
type SignInConfigPatch struct {
	AllowDuplicateEmails *bool        `json:"allowDuplicateEmails,omitempty"`
	Email                *EmailSignIn `json:"email,omitempty"`
	Anonymous            *Toggle      `json:"anonymous,omitempty"`
	PhoneNumber          *PhoneSignIn `json:"phoneNumber,omitempty"`
}

// EmailPrivacyConfigPatch is the optional-field form of EmailPrivacyConfig.
type EmailPrivacyConfigPatch struct {
	EnableImprovedEmailPrivacy *bool `json:"enableImprovedEmailPrivacy,omitempty"`
}

func emulatorConfigOf(p *project) *EmulatorConfig {
	return &EmulatorConfig{
		SignIn:             &SignInConfigPatch{AllowDuplicateEmails: ptr(p.config.SignIn.AllowDuplicateEmails)},
		EmailPrivacyConfig: &EmailPrivacyConfigPatch{EnableImprovedEmailPrivacy: ptr(p.config.EmailPrivacyConfig.EnableImprovedEmailPrivacy)},
	}
}

// EmulatorConfig returns the project's emulator switches.
func (e *Engine) EmulatorConfig(c Call) (_ *EmulatorConfig, err error) {
	defer e.begin()(&err)
	return e.tenants.emulatorConfig(c)
}

func (e tenantFlow) emulatorConfig(c Call) (*EmulatorConfig, error) {
	if c.Project == "" {
		return nil, badRequest("MISSING_PROJECT_ID")
	}
	return emulatorConfigOf(e.project(c.Project)), nil
}

// UpdateEmulatorConfig sets the switches present in req.
func (e *Engine) UpdateEmulatorConfig(c Call, req EmulatorConfig) (_ *EmulatorConfig, err error) {
	defer e.begin()(&err)
	return e.tenants.updateEmulatorConfig(c, req)
}

func (e tenantFlow) updateEmulatorConfig(c Call, req EmulatorConfig) (*EmulatorConfig, error) {
	if c.Project == "" {
		return nil, badRequest("MISSING_PROJECT_ID")
	}
	if c.Tenant != "" {
		return nil, badRequest("((Can only update top-level configurations on agent projects.))")
	}
	p := e.project(c.Project)
	p.touchConfig()
	if req.SignIn != nil && req.SignIn.AllowDuplicateEmails != nil {
		p.config.SignIn.AllowDuplicateEmails = *req.SignIn.AllowDuplicateEmails
	}
	if req.EmailPrivacyConfig != nil && req.EmailPrivacyConfig.EnableImprovedEmailPrivacy != nil {
		p.config.EmailPrivacyConfig.EnableImprovedEmailPrivacy = *req.EmailPrivacyConfig.EnableImprovedEmailPrivacy
	}
	return emulatorConfigOf(p), nil
}

// Config returns the project config (GET /v2/projects/{p}/config).
func (e *Engine) Config(c Call) (_ *ProjectConfig, err error) {
	defer e.begin()(&err)
	return e.tenants.projectConfig(c)
}

func (e tenantFlow) projectConfig(c Call) (*ProjectConfig, error) {
	if c.Tenant != "" {
		return nil, badRequest("((Can only get top-level configurations on agent projects.))")
	}
	if c.Project == "" {
		return nil, badRequest("MISSING_PROJECT_ID")
	}
	cfg := cloneConfig(e.project(c.Project).config)
	return &cfg, nil
}

// ConfigPatch is the body of PATCH /v2/projects/{p}/config.
type ConfigPatch struct {
	SignIn             *SignInConfigPatch       `json:"signIn,omitempty"`
	EmailPrivacyConfig *EmailPrivacyConfigPatch `json:"emailPrivacyConfig,omitempty"`
	BlockingFunctions  map[string]any           `json:"blockingFunctions,omitempty"`
	MFA                *ProjectMFAConfig        `json:"mfa,omitempty"`
}

// UpdateConfig patches the project config: the fields in updateMask, or
// everything (absent switches become false) when it is empty. Blocking
// functions (blockingFunctions.triggers) are checked as the emulator
// checks them and called by the sign-in operations (blocking.go).
func (e *Engine) UpdateConfig(c Call, req ConfigPatch, updateMask string) (_ *ProjectConfig, err error) {
	defer e.begin()(&err)
	return e.tenants.updateConfig(c, req, updateMask)
}

func (e tenantFlow) updateConfig(c Call, req ConfigPatch, updateMask string) (*ProjectConfig, error) {
	if c.Tenant != "" {
		return nil, badRequest("((Can only update top-level configurations on agent projects.))")
	}
	if c.Project == "" {
		return nil, badRequest("MISSING_PROJECT_ID")
	}
	if req.BlockingFunctions != nil {
		if err := checkBlockingConfig(req.BlockingFunctions); err != nil {
			return nil, err
		}
	}
	p := e.project(c.Project)
	p.touchConfig()
	if updateMask == "" {
		replaceConfig(&p.config, req)
	} else {
		for _, f := range strings.Split(updateMask, ",") {
			if err := patchConfig(&p.config, req, strings.TrimSpace(f)); err != nil {
				return nil, err
			}
		}
	}
	cfg := cloneConfig(p.config)
	return &cfg, nil
}

// replaceConfig is an update without a mask: every switch the patch leaves
// out becomes false.
func replaceConfig(cfg *ProjectConfig, req ConfigPatch) {
	cfg.SignIn = SignInConfig{AllowDuplicateEmails: req.SignIn != nil && deref(req.SignIn.AllowDuplicateEmails)}
	if req.SignIn != nil {
		cfg.SignIn.Email, cfg.SignIn.Anonymous, cfg.SignIn.PhoneNumber = req.SignIn.Email, req.SignIn.Anonymous, req.SignIn.PhoneNumber
	}
	cfg.EmailPrivacyConfig.EnableImprovedEmailPrivacy = req.EmailPrivacyConfig != nil && deref(req.EmailPrivacyConfig.EnableImprovedEmailPrivacy)
	cfg.BlockingFunctions = req.BlockingFunctions
	cfg.MFA = req.MFA
}

// patchConfig sets one updateMask field of the project config from req.
func patchConfig(cfg *ProjectConfig, req ConfigPatch, field string) error {
	switch field {
	case "signIn", "signIn.allowDuplicateEmails":
		if req.SignIn != nil && req.SignIn.AllowDuplicateEmails != nil {
			cfg.SignIn.AllowDuplicateEmails = *req.SignIn.AllowDuplicateEmails
		}
		if field == "signIn" && req.SignIn != nil {
			cfg.SignIn.Email, cfg.SignIn.Anonymous, cfg.SignIn.PhoneNumber = req.SignIn.Email, req.SignIn.Anonymous, req.SignIn.PhoneNumber
		}
	case "signIn.email", "signIn.email.enabled", "signIn.email.passwordRequired":
		if req.SignIn != nil {
			cfg.SignIn.Email = req.SignIn.Email
		}
	case "signIn.anonymous", "signIn.anonymous.enabled":
		if req.SignIn != nil {
			cfg.SignIn.Anonymous = req.SignIn.Anonymous
		}
	case "signIn.phoneNumber", "signIn.phoneNumber.enabled", "signIn.phoneNumber.testPhoneNumbers":
		if req.SignIn != nil {
			cfg.SignIn.PhoneNumber = req.SignIn.PhoneNumber
		}
	case "emailPrivacyConfig", "emailPrivacyConfig.enableImprovedEmailPrivacy":
		if req.EmailPrivacyConfig != nil && req.EmailPrivacyConfig.EnableImprovedEmailPrivacy != nil {
			cfg.EmailPrivacyConfig.EnableImprovedEmailPrivacy = *req.EmailPrivacyConfig.EnableImprovedEmailPrivacy
		}
	case "blockingFunctions":
		if req.BlockingFunctions != nil {
			cfg.BlockingFunctions = req.BlockingFunctions
		}
	case "mfa", "mfa.state", "mfa.enabledProviders", "mfa.providerConfigs":
		// The whole mfa object is replaced by any of its paths.
		if req.MFA == nil {
			cfg.MFA = nil
			return nil
		}
		m := *req.MFA
		m.ProviderConfigs = slices.Clone(m.ProviderConfigs)
		for _, pc := range m.ProviderConfigs {
			if t := pc.TOTPProviderConfig; t != nil && (t.AdjacentIntervals < 0 || t.AdjacentIntervals > 10) {
				return InvalidArgument("INVALID_ARGUMENT : adjacentIntervals must be between 0 and 10.")
			}
		}
		cfg.MFA = &m
	}
	return nil
}

// Users returns every account of a project (or tenant) in uid order: the
// in-process admin view for the sandbox, Studio and MCP.
func (e *Engine) Users(project, tenant string) []*User {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq.reconcile()
	p := e.projects[project]
	if p == nil {
		return nil
	}
	s := p.space
	if tenant != "" {
		t := p.tenants[tenant]
		if t == nil {
			return nil
		}
		s = t.space
	}
	return s.usersAfter("")
}
