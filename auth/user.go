package auth

import (
	"encoding/json"
	"slices"
)

// Provider ids with special meaning.
const (
	ProviderPassword  = "password"
	ProviderPhone     = "phone"
	ProviderAnonymous = "anonymous"
	ProviderCustom    = "custom"
	signInEmailLink   = "emailLink"
)

// User is an account record exactly as the emulator stores and returns it
// (accounts:lookup, batchGet, snapshots). Timestamps keep the emulator's wire
// types: createdAt/lastLoginAt are Unix-millisecond strings, validSince Unix
// seconds as a string, lastRefreshAt RFC 3339, passwordUpdatedAt a number.
// Pointer booleans are absent when the emulator never set them (anonymous
// users have no emailVerified).
type User struct {
	LocalID           string             `json:"localId"`
	Email             string             `json:"email,omitempty"`
	EmailVerified     *bool              `json:"emailVerified,omitempty"`
	DisplayName       string             `json:"displayName,omitempty"`
	PhotoURL          string             `json:"photoUrl,omitempty"`
	PhoneNumber       string             `json:"phoneNumber,omitempty"`
	ScreenName        string             `json:"screenName,omitempty"`
	PasswordHash      string             `json:"passwordHash,omitempty"`
	Salt              string             `json:"salt,omitempty"`
	PasswordUpdatedAt int64              `json:"passwordUpdatedAt,omitempty"`
	ValidSince        string             `json:"validSince,omitempty"`
	Disabled          *bool              `json:"disabled,omitempty"`
	CreatedAt         string             `json:"createdAt,omitempty"`
	LastLoginAt       string             `json:"lastLoginAt,omitempty"`
	LastRefreshAt     string             `json:"lastRefreshAt,omitempty"`
	CustomAttributes  string             `json:"customAttributes,omitempty"`
	CustomAuth        bool               `json:"customAuth,omitempty"`
	EmailLinkSignin   bool               `json:"emailLinkSignin,omitempty"`
	InitialEmail      string             `json:"initialEmail,omitempty"`
	TenantID          string             `json:"tenantId,omitempty"`
	ProviderUserInfo  []ProviderUserInfo `json:"providerUserInfo,omitempty"`
	MFAInfo           []MFAEnrollment    `json:"mfaInfo,omitempty"`
}

// ProviderUserInfo is one linked identity of a user.
type ProviderUserInfo struct {
	ProviderID  string `json:"providerId"`
	DisplayName string `json:"displayName,omitempty"`
	PhotoURL    string `json:"photoUrl,omitempty"`
	FederatedID string `json:"federatedId,omitempty"`
	Email       string `json:"email,omitempty"`
	RawID       string `json:"rawId,omitempty"`
	ScreenName  string `json:"screenName,omitempty"`
	PhoneNumber string `json:"phoneNumber,omitempty"`
}

// MarshalJSON writes providerUserInfo as [] when the account had linked
// providers and lost them all, as the emulator does, and omits it when it
// never had any.
func (u User) MarshalJSON() ([]byte, error) {
	type plain User
	var p any
	if u.ProviderUserInfo != nil {
		p = u.ProviderUserInfo
	}
	return json.Marshal(struct {
		plain
		ProviderUserInfo any `json:"providerUserInfo,omitempty"`
	}{plain(u), p})
}

func (u *User) clone() *User {
	if u == nil {
		return nil
	}
	c := *u
	if u.EmailVerified != nil {
		c.EmailVerified = ptr(*u.EmailVerified)
	}
	if u.Disabled != nil {
		c.Disabled = ptr(*u.Disabled)
	}
	c.ProviderUserInfo = slices.Clone(u.ProviderUserInfo)
	c.MFAInfo = slices.Clone(u.MFAInfo)
	return &c
}

// Redacted returns a copy without the password hash and salt: the form
// events carry.
func (u *User) Redacted() *User {
	c := u.clone()
	if c != nil {
		c.PasswordHash, c.Salt = "", ""
	}
	return c
}

func (u *User) isDisabled() bool      { return u.Disabled != nil && *u.Disabled }
func (u *User) isEmailVerified() bool { return u.EmailVerified != nil && *u.EmailVerified }

func (u *User) provider(id string) *ProviderUserInfo {
	for i := range u.ProviderUserInfo {
		if u.ProviderUserInfo[i].ProviderID == id {
			return &u.ProviderUserInfo[i]
		}
	}
	return nil
}

// claims returns the parsed customAttributes ({} when unset or invalid).
func (u *User) claims() map[string]any {
	m := map[string]any{}
	if u.CustomAttributes != "" {
		_ = json.Unmarshal([]byte(u.CustomAttributes), &m)
		if m == nil {
			m = map[string]any{}
		}
	}
	return m
}

func ptr[T any](v T) *T { return &v }

// Ptr returns a pointer to v, for the optional fields of request structs.
func Ptr[T any](v T) *T { return &v }
