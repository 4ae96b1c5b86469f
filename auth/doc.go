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
package auth
