// Package identity says who is asking: every engine call carries an Identity,
// so no engine ever consults an ambient "current user".
package identity

import (
	"encoding/json"
	"fmt"
)

// Kind distinguishes the three sorts of caller.
type Kind int

// Kinds of identity.
const (
	// Unauthenticated is a client without credentials: request.auth is null.
	Unauthenticated Kind = iota
	// User is a signed-in end user: request.auth = {uid, token}.
	User
	// Admin bypasses security rules, like `Authorization: Bearer owner` on
	// the official emulators or a service account in production.
	Admin
)

// Identity is the caller of one operation. The zero value is Unauthenticated.
type Identity struct {
	Kind Kind
	// UID is the user id (request.auth.uid); set only for User. A User with
	// an empty UID is authenticated but has no uid (a token without sub).
	UID string
	// Token holds the ID token's claims (request.auth.token), including
	// firebase.sign_in_provider and custom claims. Never nil for User.
	Token map[string]any
	// Actor is the tool acting with this identity; the zero value is the
	// developer's app. It is provenance only: it never changes a decision.
	Actor Actor
}

// Actor names the tool behind an operation: the app, the Studio, a coding
// agent through MCP, or pyric itself.
type Actor struct {
	Kind ActorKind
	Name string // the agent's name, when known
	// Invocation is the Cloud Function invocation (its id, "inv-N")
	// whose code made the call: pyric's functions runtime names it in
	// the calls a function makes (InvocationHeader), so the events of a
	// function's writes say which run made them.
	Invocation string
}

// InvocationHeader is the HTTP header (and gRPC metadata key, and
// Realtime Database write field) naming the function invocation a call
// comes from.
const InvocationHeader = "x-pyric-invocation"

// maxInvocationID bounds an invocation id taken from a request.
const maxInvocationID = 64

// ByInvocation returns the identity acting for the function invocation
// inv (a request's InvocationHeader); an empty or oversized inv leaves
// it unchanged.
func (id Identity) ByInvocation(inv string) Identity {
	if inv != "" && len(inv) <= maxInvocationID {
		id.Actor.Invocation = inv
	}
	return id
}

// ActorKind is the closed set of actors.
type ActorKind string

// Actors. The empty kind means App.
const (
	App    ActorKind = "app"
	Studio ActorKind = "studio"
	Agent  ActorKind = "agent"
	System ActorKind = "system"
)

// Via returns the identity acting through actor (e.g. the Studio acting as
// a user in its app lens).
func (id Identity) Via(actor Actor) Identity {
	id.Actor = actor
	return id
}

// Anonymous returns the unauthenticated identity (request.auth == null). It is
// not Firebase "anonymous sign-in", which is a User with provider anonymous.
func Anonymous() Identity { return Identity{Kind: Unauthenticated} }

// AdminIdentity returns the rules-bypassing identity.
func AdminIdentity() Identity { return Identity{Kind: Admin} }

// NewUser returns a signed-in user identity. A nil token becomes an empty map.
func NewUser(uid string, token map[string]any) Identity {
	if token == nil {
		token = map[string]any{}
	}
	return Identity{Kind: User, UID: uid, Token: token}
}

// IsAdmin reports whether rules are bypassed for this identity.
func (id Identity) IsAdmin() bool { return id.Kind == Admin }

// IsAuthenticated reports whether request.auth is non-null.
func (id Identity) IsAuthenticated() bool { return id.Kind == User }

func (id Identity) String() string {
	switch id.Kind {
	case Admin:
		return "admin"
	case User:
		return fmt.Sprintf("user %q", id.UID)
	default:
		return "unauthenticated"
	}
}

// jsonIdentity is the wire/event form: null for unauthenticated,
// {"admin": true} for admin, {"uid", "token"} for a user.
type jsonIdentity struct {
	Admin bool           `json:"admin,omitempty"`
	UID   string         `json:"uid,omitempty"`
	Token map[string]any `json:"token,omitempty"`
}

// MarshalJSON encodes the identity as events and snapshots show it.
func (id Identity) MarshalJSON() ([]byte, error) {
	switch id.Kind {
	case Admin:
		return json.Marshal(jsonIdentity{Admin: true})
	case User:
		return json.Marshal(jsonIdentity{UID: id.UID, Token: id.Token})
	default:
		return []byte("null"), nil
	}
}

// UnmarshalJSON decodes what MarshalJSON produces.
func (id *Identity) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*id = Anonymous()
		return nil
	}
	var j jsonIdentity
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	switch {
	case j.Admin:
		*id = AdminIdentity()
	case j.UID != "" || j.Token != nil:
		*id = NewUser(j.UID, j.Token)
	default:
		return fmt.Errorf("identity: want null, {\"admin\": true} or {\"uid\": ...}")
	}
	return nil
}
