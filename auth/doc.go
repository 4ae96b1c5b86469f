// Package auth is pyric's Firebase Authentication engine: user accounts,
// passwords, federated (fake IdP) identities, ID/refresh tokens, session
// cookies, out-of-band codes with their outbox, tenants and per-project
// configuration, behaving as the Firebase Auth emulator does.
//
// Every operation takes a Call saying who asks (an identity.Identity: Admin
// for "Authorization: Bearer owner", anything else is an API-key client) and
// which project/tenant it targets. Results are the Identity Toolkit response
// shapes, so the HTTP adapter (server/auth) only decodes and encodes. Every
// change is emitted as a service_mutation event (service "auth"), and the
// whole state round-trips through Snapshot/Restore.
//
// Wiring (for the sandbox and `pyric serve`): build one Engine with the
// sandbox clock, id source and event bus; mount
// authserver.New(engine, authserver.Options{DefaultProject: p}) at the root
// of the Auth port (9099); persist with MarshalSnapshot/UnmarshalSnapshot
// (or Snapshot/Restore for the struct form) next to the other services'
// state, and call Reset on a sandbox reset.
//
// Behaviours kept from the emulator on purpose: ID tokens are unsigned
// (alg "none") and their expiry is not checked on input; refresh tokens do
// not expire and survive revocation (only ID tokens issued before
// validSince are refused); the project number is always "12345".
package auth
