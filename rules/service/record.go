package service

import (
	"sync"

	"github.com/pyric/pyric/rules/value"
)

// AuthRecord is request.auth as a value.Record: uid and token are read
// from the Auth when a rule reads them, so a decision that never looks at
// the token claims never converts them. The zero value is not usable; see
// Reset.
type AuthRecord struct {
	auth  *Auth
	uid   value.String // boxed in place when read
	token value.Value  // converted on first read
	once  sync.Once
	m     value.Map
}

// Reset makes r stand for a (not nil). Values read from r before must no
// longer be in use: uid is boxed in place.
func (r *AuthRecord) Reset(a *Auth) {
	r.auth, r.uid, r.token, r.m = a, value.String(a.UID), nil, nil
	r.once = sync.Once{}
}

// Type implements value.Value.
func (*AuthRecord) Type() value.Type { return value.TMap }

// Field implements value.Record.
func (r *AuthRecord) Field(name string) (value.Value, bool) {
	switch name {
	case "uid":
		if r.auth.UID == "" {
			return nil, false
		}
		return value.BoxString(&r.uid), true
	case "token":
		if r.token == nil {
			r.token = tokenValue(r.auth.Token)
		}
		return r.token, true
	}
	return nil, false
}

// Map implements value.Record.
func (r *AuthRecord) Map() value.Map {
	r.once.Do(func() {
		m := make(value.Map, 2)
		if r.auth.UID != "" {
			// Boxed in place, as Field gives it: no copy to allocate.
			m["uid"] = value.BoxString(&r.uid)
		}
		// The claims as Field converted them, when a rule read them
		// (values are immutable; one conversion serves both).
		token := r.token
		if token == nil {
			token = tokenValue(r.auth.Token)
		}
		m["token"] = token
		r.m = m
	})
	return r.m
}

// tokenValue is request.auth.token: the claims, empty when none are given.
func tokenValue(claims map[string]any) value.Value {
	if claims == nil {
		return value.Map{}
	}
	return value.MustFromGo(claims)
}
