package auth

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// OAuthIdpConfig is an OIDC provider config (the v2 oauthIdpConfigs
// resource), kept as the JSON object the client sent plus its name, so
// every field the SDKs read and write round-trips.
type OAuthIdpConfig map[string]any

// InboundSAMLConfig is a SAML provider config (inboundSamlConfigs).
type InboundSAMLConfig map[string]any

// IdpKind names the two provider-config collections.
type IdpKind string

// The provider-config collections and the id prefix each requires.
const (
	OAuthIdp IdpKind = "oauthIdpConfigs"
	SAMLIdp  IdpKind = "inboundSamlConfigs"
)

func (k IdpKind) prefix() string {
	if k == SAMLIdp {
		return "saml."
	}
	return "oidc."
}

func (s *space) idps(k IdpKind) map[string]map[string]any {
	if s.idpConfigs == nil {
		s.idpConfigs = map[IdpKind]map[string]map[string]any{OAuthIdp: {}, SAMLIdp: {}}
	}
	return s.idpConfigs[k]
}

func (s *space) setIdp(k IdpKind, id string, cfg map[string]any) {
	m := s.idps(k)
	setMap(s.j, m, id, cfg, cfg == nil)
	s.j.record(recordKey(s.project, s.tenant, kindIdp, string(k)+"/"+id), func() ([]byte, error) {
		c, ok := m[id]
		if !ok {
			return nil, nil
		}
		return json.Marshal(c)
	}, nil)
}

func (s *space) loadIdp(id string, v []byte) error {
	kind, pid, ok := strings.Cut(id, "/")
	if !ok || (IdpKind(kind) != OAuthIdp && IdpKind(kind) != SAMLIdp) {
		return errorf("bad provider config key %q", id)
	}
	var cfg map[string]any
	if err := json.Unmarshal(v, &cfg); err != nil {
		return err
	}
	s.idps(IdpKind(kind))[pid] = cfg
	return nil
}

func (s *space) writeIdps(put func(k []byte, v any) error) error {
	for _, k := range []IdpKind{OAuthIdp, SAMLIdp} {
		for id, cfg := range s.idps(k) {
			if err := put(recordKey(s.project, s.tenant, kindIdp, string(k)+"/"+id), cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *space) snapIdps() (map[string]*OAuthIdpConfig, map[string]*InboundSAMLConfig) {
	var o map[string]*OAuthIdpConfig
	var sm map[string]*InboundSAMLConfig
	for id, c := range s.idps(OAuthIdp) {
		if o == nil {
			o = map[string]*OAuthIdpConfig{}
		}
		v := OAuthIdpConfig(deepCopy(c))
		o[id] = &v
	}
	for id, c := range s.idps(SAMLIdp) {
		if sm == nil {
			sm = map[string]*InboundSAMLConfig{}
		}
		v := InboundSAMLConfig(deepCopy(c))
		sm[id] = &v
	}
	return o, sm
}

func (s *space) fillIdps(o map[string]*OAuthIdpConfig, sm map[string]*InboundSAMLConfig) {
	for id, c := range o {
		if c != nil {
			s.idps(OAuthIdp)[id] = deepCopy(*c)
		}
	}
	for id, c := range sm {
		if c != nil {
			s.idps(SAMLIdp)[id] = deepCopy(*c)
		}
	}
}

func deepCopy(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// idpConfigFlow is the admin API of OIDC and SAML provider configs
// (oauthIdpConfigs, inboundSamlConfigs) of a project or tenant.
type idpConfigFlow struct{ *core }

// idpScope is the account space of a config call: the project, or the
// tenant in the URL.
func (e idpConfigFlow) idpScope(c Call) (scope, error) {
	if c.Project == "" {
		return scope{}, badRequest("MISSING_PROJECT_ID")
	}
	p := e.project(c.Project)
	if c.Tenant == "" {
		return scope{project: p, space: p.space}, nil
	}
	t := p.tenant(c.Tenant)
	return scope{project: p, tenant: t, space: t.space}, nil
}

func (e idpConfigFlow) configName(sc scope, k IdpKind, id string) string {
	n := "projects/" + sc.project.id
	if tid := sc.tenantID(); tid != "" {
		n += "/tenants/" + tid
	}
	return n + "/" + string(k) + "/" + id
}

var errConfigNotFound = &Error{HTTP: 404, Status: "NOT_FOUND", Message: "CONFIGURATION_NOT_FOUND", Reason: "notFound", Domain: "global"}

// CreateIdpConfig stores a new provider config with the given id
// ("oidc.…" or "saml.…").
func (e *Engine) CreateIdpConfig(c Call, k IdpKind, id string, cfg map[string]any) (_ map[string]any, err error) {
	defer e.begin()(&err)
	return e.idpConfigs.create(c, k, id, cfg)
}

func (e idpConfigFlow) create(c Call, k IdpKind, id string, cfg map[string]any) (map[string]any, error) {
	sc, err := e.idpScope(c)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(id, k.prefix()) || len(id) == len(k.prefix()) {
		return nil, badRequest("INVALID_PROVIDER_ID : The provider ID must start with \"" + k.prefix() + "\".")
	}
	if _, ok := sc.space.idps(k)[id]; ok {
		return nil, &Error{HTTP: 409, Status: "ALREADY_EXISTS", Message: "DUPLICATE_IDP_CONFIG", Reason: "conflict", Domain: "global"}
	}
	if err := checkIdpConfig(k, cfg); err != nil {
		return nil, err
	}
	out := deepCopy(cfg)
	out["name"] = e.configName(sc, k, id)
	if _, ok := out["enabled"]; !ok {
		out["enabled"] = false
	}
	sc.space.setIdp(k, id, out)
	return deepCopy(out), nil
}

// checkIdpConfig applies the required fields production checks.
func checkIdpConfig(k IdpKind, cfg map[string]any) error {
	if k == OAuthIdp {
		if s, _ := cfg["clientId"].(string); s == "" {
			if _, ok := cfg["clientId"]; ok {
				return badRequest("MISSING_OAUTH_CLIENT_ID")
			}
		}
		if iss, ok := cfg["issuer"].(string); ok && !isAbsoluteURL(iss) {
			return badRequest("INVALID_OAUTH_CLIENT_ID : ((issuer must be an absolute URL))")
		}
	}
	return nil
}

// GetIdpConfig returns a provider config.
func (e *Engine) GetIdpConfig(c Call, k IdpKind, id string) (_ map[string]any, err error) {
	defer e.begin()(&err)
	return e.idpConfigs.get(c, k, id)
}

func (e idpConfigFlow) get(c Call, k IdpKind, id string) (map[string]any, error) {
	sc, err := e.idpScope(c)
	if err != nil {
		return nil, err
	}
	cfg, ok := sc.space.idps(k)[id]
	if !ok {
		return nil, errConfigNotFound
	}
	return deepCopy(cfg), nil
}

// UpdateIdpConfig patches the fields named in updateMask (dot paths), or
// every field present when it is empty.
func (e *Engine) UpdateIdpConfig(c Call, k IdpKind, id string, patch map[string]any, updateMask string) (_ map[string]any, err error) {
	defer e.begin()(&err)
	return e.idpConfigs.update(c, k, id, patch, updateMask)
}

func (e idpConfigFlow) update(c Call, k IdpKind, id string, patch map[string]any, updateMask string) (map[string]any, error) {
	sc, err := e.idpScope(c)
	if err != nil {
		return nil, err
	}
	cur, ok := sc.space.idps(k)[id]
	if !ok {
		return nil, errConfigNotFound
	}
	out := deepCopy(cur)
	var paths []string
	if updateMask == "" {
		for f := range patch {
			paths = append(paths, f)
		}
	} else {
		paths = strings.Split(updateMask, ",")
	}
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" || p == "name" {
			continue
		}
		v, present := getPath(patch, p)
		setPath(out, p, v, !present)
	}
	if err := checkIdpConfig(k, out); err != nil {
		return nil, err
	}
	sc.space.setIdp(k, id, out)
	return deepCopy(out), nil
}

func getPath(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func setPath(m map[string]any, path string, v any, del bool) {
	parts := strings.Split(path, ".")
	for _, part := range parts[:len(parts)-1] {
		next, ok := m[part].(map[string]any)
		if !ok {
			if del {
				return
			}
			next = map[string]any{}
			m[part] = next
		}
		m = next
	}
	if del {
		delete(m, parts[len(parts)-1])
	} else {
		m[parts[len(parts)-1]] = v
	}
}

// DeleteIdpConfig removes a provider config.
func (e *Engine) DeleteIdpConfig(c Call, k IdpKind, id string) (err error) {
	defer e.begin()(&err)
	return e.idpConfigs.delete(c, k, id)
}

func (e idpConfigFlow) delete(c Call, k IdpKind, id string) error {
	sc, err := e.idpScope(c)
	if err != nil {
		return err
	}
	if _, ok := sc.space.idps(k)[id]; !ok {
		return errConfigNotFound
	}
	sc.space.setIdp(k, id, nil)
	return nil
}

// ListIdpConfigs lists provider configs in id order, a page at a time
// (default 100); the page token is the last id of the previous page.
func (e *Engine) ListIdpConfigs(c Call, k IdpKind, pageSize, pageToken string) (_ map[string]any, err error) {
	defer e.begin()(&err)
	return e.idpConfigs.list(c, k, pageSize, pageToken)
}

func (e idpConfigFlow) list(c Call, k IdpKind, pageSize, pageToken string) (map[string]any, error) {
	sc, err := e.idpScope(c)
	if err != nil {
		return nil, err
	}
	size := 100
	if pageSize != "" {
		n, perr := strconv.Atoi(pageSize)
		if perr != nil || n < 0 || n > 100 {
			return nil, InvalidArgument("INVALID_ARGUMENT : pageSize must be between 0 and 100.")
		}
		if n > 0 {
			size = n
		}
	}
	var ids []string
	for id := range sc.space.idps(k) {
		if id > pageToken {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	list := []any{}
	resp := map[string]any{}
	for i, id := range ids {
		if i == size {
			resp["nextPageToken"] = ids[i-1]
			break
		}
		list = append(list, deepCopy(sc.space.idps(k)[id]))
	}
	if len(list) > 0 {
		resp[string(k)] = list
	}
	return resp, nil
}

// idpEnabled says whether a sign-in with providerID may go ahead: a
// configured oidc./saml. provider must be enabled; an unconfigured one is
// allowed (the emulator's fake IdP accepts any provider).
func (s *space) idpEnabled(providerID string) bool {
	k := OAuthIdp
	if strings.HasPrefix(providerID, "saml.") {
		k = SAMLIdp
	} else if !strings.HasPrefix(providerID, "oidc.") {
		return true
	}
	cfg, ok := s.idps(k)[providerID]
	if !ok {
		return true
	}
	en, _ := cfg["enabled"].(bool)
	return en
}
