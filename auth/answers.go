package auth

import (
	"encoding/json"
	"strconv"

	"github.com/pyric/pyric/internal/jsonstr"
)

// The answers of the calls every app makes (sign-up, sign-in with a
// password, a token refresh, the Admin SDK's lookup) write their own
// JSON, byte for byte what encoding/json writes for them
// (TestAnswersMatchMarshal): the adapter sends it without reflection
// (httpjson.Appender), and a lookup's accounts are not encoded twice
// (encoding/json checks and copies what User.MarshalJSON returns).

// AppendJSON appends the answer's JSON to b.
func (r *SignUpResponse) AppendJSON(b []byte) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = jsonstr.Append(b, r.Kind)
	b = append(b, `,"localId":`...)
	b = jsonstr.Append(b, r.LocalID)
	b = optString(b, `,"displayName":`, r.DisplayName)
	b = optString(b, `,"email":`, r.Email)
	b = r.Tokens.appendMembers(b)
	return append(b, '}')
}

// AppendJSON appends the answer's JSON to b.
func (r *SignInWithPasswordResponse) AppendJSON(b []byte) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = jsonstr.Append(b, r.Kind)
	b = append(b, `,"registered":`...)
	b = strconv.AppendBool(b, r.Registered)
	b = append(b, `,"localId":`...)
	b = jsonstr.Append(b, r.LocalID)
	b = append(b, `,"email":`...)
	b = jsonstr.Append(b, r.Email)
	b = r.Tokens.appendMembers(b)
	b = optString(b, `,"mfaPendingCredential":`, r.MFAPendingCredential)
	if len(r.MFAInfo) > 0 {
		// Rare (a second factor is due): through encoding/json.
		m, _ := json.Marshal(r.MFAInfo)
		b = append(append(b, `,"mfaInfo":`...), m...)
	}
	return append(b, '}')
}

// appendMembers appends the tokens as members of the object being
// written (Tokens is embedded in the answers).
func (t *Tokens) appendMembers(b []byte) []byte {
	b = optString(b, `,"idToken":`, t.IDToken)
	b = optString(b, `,"refreshToken":`, t.RefreshToken)
	return optString(b, `,"expiresIn":`, t.ExpiresIn)
}

// AppendJSON appends the answer's JSON to b.
func (r *GrantTokenResponse) AppendJSON(b []byte) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"id_token":`...)
	b = jsonstr.Append(b, r.IDToken)
	b = append(b, `,"access_token":`...)
	b = jsonstr.Append(b, r.AccessToken)
	b = append(b, `,"expires_in":`...)
	b = jsonstr.Append(b, r.ExpiresIn)
	b = append(b, `,"refresh_token":`...)
	b = jsonstr.Append(b, r.RefreshToken)
	b = append(b, `,"token_type":`...)
	b = jsonstr.Append(b, r.TokenType)
	b = append(b, `,"user_id":`...)
	b = jsonstr.Append(b, r.UserID)
	b = append(b, `,"project_id":`...)
	b = jsonstr.Append(b, r.ProjectID)
	return append(b, '}')
}

// AppendJSON appends the answer's JSON to b.
func (r *LookupResponse) AppendJSON(b []byte) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = jsonstr.Append(b, r.Kind)
	if len(r.Users) > 0 {
		b = append(b, `,"users":[`...)
		for i, u := range r.Users {
			if i > 0 {
				b = append(b, ',')
			}
			b = u.AppendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
