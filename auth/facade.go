package auth

// Engine is the Auth state of every project. It is safe for concurrent use.
//
// It is a facade: each exported method that reads or changes state opens
// one mutation (begin … commit, store.go) and hands the request to the type
// of its flow, which owns the flow's steps and stands on core (the account
// store with its journal, the clock and ids, events, and the steps several
// flows share: scopes, tokens, blocking functions, OOB codes).
type Engine struct {
	*core
	password passwordFlow // email/password and anonymous sign-up, sign-in (signin.go)
	tokens   tokenFlow    // custom tokens, refresh, session cookies, sign-out (signin.go, oob.go)
	idp      idpFlow      // federated sign-in (idp.go)
	email    emailFlow    // the email outbox: codes, email links, reset, createAuthUri (oob.go)
	phone    phoneFlow    // phone sign-in and the SMS outbox (phone.go)
	mfa      mfaFlow      // second factors (mfa.go)
	accounts accountFlow  // lookup, update, delete of one account (account.go)
	admin    adminFlow    // bulk list, import, delete, query (admin.go)
	tenants  tenantFlow   // tenants, project config, emulator endpoints (tenant.go)
	// idpConfigs are the OIDC and SAML provider configs (idpconfig.go).
	idpConfigs idpConfigFlow
}

// newEngine builds the facade and its flows on c.
func newEngine(c *core) *Engine {
	c.block = blocker{c}
	return &Engine{core: c,
		password: passwordFlow{c}, tokens: tokenFlow{c}, idp: idpFlow{c}, email: emailFlow{c},
		phone: phoneFlow{c}, mfa: mfaFlow{c}, accounts: accountFlow{c}, admin: adminFlow{c},
		tenants: tenantFlow{c}, idpConfigs: idpConfigFlow{c}}
}
