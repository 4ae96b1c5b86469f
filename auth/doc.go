// Package auth is pyric's Firebase Authentication engine: user accounts,
// passwords, federated (fake IdP, OIDC and SAML provider configs)
// identities, phone sign-in with its SMS outbox, SMS and TOTP second
// factors, ID/refresh tokens, session cookies, out-of-band codes with their
// outbox, tenants and per-project configuration, behaving as the Firebase
// Auth emulator does, including blocking functions (beforeCreate,
// beforeSignIn, and production's beforeSendEmail/beforeSendSms) called at
// the configured functionUri (blocking.go).
//
// Every operation takes a Call saying who asks (an identity.Identity: Admin
// for "Authorization: Bearer owner", anything else is an API-key client) and
// which project/tenant it targets. Results are the Identity Toolkit response
// shapes, so the HTTP adapter (server/auth) only decodes and encodes. Every
// change is emitted as a service_mutation event (service "auth") after it
// is committed, and the whole state round-trips through Snapshot/Restore.
//
// The Engine is a sandbox service (service.Service, name "auth"). With a
// Log it is durable: each operation appends only the records it changed
// (an account, an OOB code, a tenant, a config) in one Append before it
// returns, so an acknowledged change survives kill -9 and a sign-up costs
// the same with 50,000 accounts as with none (store.go). A session capture
// appends the same records, as each mutation's events name them
// (capture.go).
//
// Layout, bottom up: the account store — space (a project's or tenant's
// accounts, their indexes and outboxes), project and tenant (state.go),
// the journal that makes one mutation durable and its log layout
// (store.go) — changed only through its methods; core (engine.go), the
// clock, ids, events and the steps several flows share (scopes, tokens,
// blocking functions, OOB codes); one type per flow — passwordFlow,
// tokenFlow, idpFlow, emailFlow, phoneFlow, mfaFlow, accountFlow,
// adminFlow, tenantFlow, idpConfigFlow — whose long requests are a
// per-request value (idpSignIn, accountUpdate, signUpAccount) with one
// method per step; and the Engine (facade.go), whose exported methods open
// the mutation and hand the request to its flow.
//
// Wiring (for the sandbox and `pyric serve`): add Registration to the
// sandbox's services; mount
// authserver.New(engine, authserver.Options{DefaultProject: p}) at the root
// of the Auth port (9099).
//
// Behaviours kept from the emulator on purpose: ID tokens are unsigned
// (alg "none") and their expiry is not checked on input; the project
// number is always "12345". Where production is stricter than the emulator
// pyric follows production: refresh tokens issued before validSince answer
// TOKEN_EXPIRED, and the input limits of limits.go apply.
package auth
