package auth

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/pyric/pyric/internal/jsonstr"
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

// MarshalJSON writes the account as AppendJSON does.
func (u User) MarshalJSON() ([]byte, error) { return u.AppendJSON(make([]byte, 0, 512)), nil }

// AppendJSON appends the account's JSON to b: the bytes encoding/json
// writes for User's fields (HTML characters escaped, empty ones omitted),
// except that providerUserInfo is written as [] when the account had
// linked providers and lost them all, as the emulator does, omitted when
// it never had any, and last. It is written directly rather than through
// reflection: an account is encoded for the log, its event and the
// session capture on every sign-up, sign-in and refresh.
// It implements event.Appender: an event carrying an account writes it so.
func (u *User) AppendJSON(b []byte) []byte {
	if u == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"localId":`...)
	b = jsonstr.Append(b, u.LocalID)
	b = optString(b, `,"email":`, u.Email)
	b = optBool(b, `,"emailVerified":`, u.EmailVerified)
	b = optString(b, `,"displayName":`, u.DisplayName)
	b = optString(b, `,"photoUrl":`, u.PhotoURL)
	b = optString(b, `,"phoneNumber":`, u.PhoneNumber)
	b = optString(b, `,"screenName":`, u.ScreenName)
	b = optString(b, `,"passwordHash":`, u.PasswordHash)
	b = optString(b, `,"salt":`, u.Salt)
	if u.PasswordUpdatedAt != 0 {
		b = append(b, `,"passwordUpdatedAt":`...)
		b = strconv.AppendInt(b, u.PasswordUpdatedAt, 10)
	}
	b = optString(b, `,"validSince":`, u.ValidSince)
	b = optBool(b, `,"disabled":`, u.Disabled)
	b = optString(b, `,"createdAt":`, u.CreatedAt)
	b = optString(b, `,"lastLoginAt":`, u.LastLoginAt)
	b = optString(b, `,"lastRefreshAt":`, u.LastRefreshAt)
	b = optString(b, `,"customAttributes":`, u.CustomAttributes)
	if u.CustomAuth {
		b = append(b, `,"customAuth":true`...)
	}
	if u.EmailLinkSignin {
		b = append(b, `,"emailLinkSignin":true`...)
	}
	b = optString(b, `,"initialEmail":`, u.InitialEmail)
	b = optString(b, `,"tenantId":`, u.TenantID)
	if len(u.MFAInfo) > 0 {
		// Rare: through encoding/json.
		m, _ := json.Marshal(u.MFAInfo)
		b = append(append(b, `,"mfaInfo":`...), m...)
	}
	if u.ProviderUserInfo != nil {
		b = append(b, `,"providerUserInfo":[`...)
		for i, p := range u.ProviderUserInfo {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"providerId":`...)
			b = jsonstr.Append(b, p.ProviderID)
			b = optString(b, `,"displayName":`, p.DisplayName)
			b = optString(b, `,"photoUrl":`, p.PhotoURL)
			b = optString(b, `,"federatedId":`, p.FederatedID)
			b = optString(b, `,"email":`, p.Email)
			b = optString(b, `,"rawId":`, p.RawID)
			b = optString(b, `,"screenName":`, p.ScreenName)
			b = optString(b, `,"phoneNumber":`, p.PhoneNumber)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// optString appends key and s unless s is empty (omitempty).
func optString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return jsonstr.Append(append(b, key...), s)
}

// optBool appends key and *v unless v is nil (omitempty).
func optBool(b []byte, key string, v *bool) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendBool(append(b, key...), *v)
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

// restamped returns a copy of u for a change of its timestamps alone (a
// sign-in, a refresh: mintTokens), in one allocation: it shares u's
// provider and MFA lists and its emailVerified and disabled values, which
// the engine never changes in place (a change of them changes a clone
// and stores that; space.put replaces a list it changes).
func (u *User) restamped() *User {
	c := *u
	return &c
}

// Redacted returns a copy without the password hash and salt: the form
// events carry. The copy shares u's provider and MFA lists and its
// emailVerified and disabled values: the engine never changes a stored
// account's in place (it changes a clone and stores that), so an event
// keeps the account as it was, at the cost of one allocation.
func (u *User) Redacted() *User {
	if u == nil {
		return nil
	}
	c := *u
	c.PasswordHash, c.Salt = "", ""
	return &c
}

func (u *User) isDisabled() bool      { return u.Disabled != nil && *u.Disabled }
func (u *User) isEmailVerified() bool { return u.EmailVerified != nil && *u.EmailVerified }

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
