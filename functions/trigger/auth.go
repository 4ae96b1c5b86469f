package trigger

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/pyric/pyric/event"
)

// Auth mutation ops (package auth's event ops).
const (
	authOpCreate = "user_create"
	authOpDelete = "user_delete"
	// authNoteImport marks the creations of accounts imported in bulk
	// (accounts:batchCreate), which fire no trigger, as in the Emulator
	// Suite.
	authNoteImport = "import"
)

// authUser is the part of an Auth account record read here (package
// auth's User, as its events carry it).
type authUser struct {
	LocalID          string `json:"localId"`
	Email            string `json:"email"`
	EmailVerified    *bool  `json:"emailVerified"`
	DisplayName      string `json:"displayName"`
	PhotoURL         string `json:"photoUrl"`
	PhoneNumber      string `json:"phoneNumber"`
	Disabled         *bool  `json:"disabled"`
	CreatedAt        string `json:"createdAt"`
	LastLoginAt      string `json:"lastLoginAt"`
	CustomAttributes string `json:"customAttributes"`
	TenantID         string `json:"tenantId"`
	ProviderUserInfo []struct {
		ProviderID  string `json:"providerId"`
		DisplayName string `json:"displayName"`
		PhotoURL    string `json:"photoUrl"`
		FederatedID string `json:"federatedId"`
		Email       string `json:"email"`
		RawID       string `json:"rawId"`
		ScreenName  string `json:"screenName"`
		PhoneNumber string `json:"phoneNumber"`
	} `json:"providerUserInfo"`
	MFAInfo json.RawMessage `json:"mfaInfo"`
}

func decodeUser(v any) (*authUser, error) {
	var u authUser
	if err := event.DecodeHeld(v, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// isoMillis turns the records' epoch-millisecond strings into ISO times
// (absent when unset or not a number).
func isoMillis(ms string) any {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || ms == "" {
		return nil
	}
	return time.UnixMilli(n).UTC().Format("2006-01-02T15:04:05.000Z")
}

func omitEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if v == nil || v == "" {
			delete(m, k)
		}
	}
	return m
}

// userBase is the part of the user payload v1 and v2 share, as the
// Emulator Suite writes it.
func userBase(u *authUser) map[string]any {
	claims := map[string]any{}
	if u.CustomAttributes != "" {
		_ = json.Unmarshal([]byte(u.CustomAttributes), &claims)
	}
	m := omitEmpty(map[string]any{"uid": u.LocalID, "email": u.Email, "displayName": u.DisplayName,
		"photoURL": u.PhotoURL, "phoneNumber": u.PhoneNumber})
	m["emailVerified"] = u.EmailVerified != nil && *u.EmailVerified
	m["disabled"] = u.Disabled != nil && *u.Disabled
	m["customClaims"] = claims
	return m
}

// userV1 is the v1 UserRecord payload (firebase-functions'
// userRecordConstructor input).
func userV1(u *authUser) map[string]any {
	m := userBase(u)
	m["metadata"] = omitEmpty(map[string]any{"creationTime": isoMillis(u.CreatedAt), "lastSignInTime": isoMillis(u.LastLoginAt)})
	pd := []any{}
	for _, p := range u.ProviderUserInfo {
		pd = append(pd, omitEmpty(map[string]any{"rawId": p.RawID, "providerId": p.ProviderID, "displayName": p.DisplayName,
			"email": p.Email, "federatedId": p.FederatedID, "phoneNumber": p.PhoneNumber, "photoURL": p.PhotoURL, "screenName": p.ScreenName}))
	}
	m["providerData"] = pd
	if u.TenantID != "" {
		m["tenantId"] = u.TenantID
	}
	if len(u.MFAInfo) > 0 && string(u.MFAInfo) != "null" {
		m["mfaInfo"] = u.MFAInfo
	}
	return m
}

// userV2 is the v2 user payload (google.firebase.auth.user.v2.*).
func userV2(u *authUser) map[string]any {
	m := userBase(u)
	m["metadata"] = omitEmpty(map[string]any{"createTime": isoMillis(u.CreatedAt), "lastSignInTime": isoMillis(u.LastLoginAt)})
	pd := []any{}
	for _, p := range u.ProviderUserInfo {
		pd = append(pd, omitEmpty(map[string]any{"uid": p.RawID, "providerId": p.ProviderID, "displayName": p.DisplayName,
			"email": p.Email, "photoURL": p.PhotoURL}))
	}
	m["providerData"] = pd
	return m
}

func authDeliveries(f Function, ev event.Event, env Env) ([]Delivery, error) {
	m := ev.Mutation
	if ev.Service != "auth" || ev.Kind != event.KindMutation || m == nil {
		return nil, nil
	}
	var o op
	var rec any
	switch {
	case m.Op == authOpCreate && m.Note != authNoteImport:
		o, rec = opCreate, m.Current
	case m.Op == authOpDelete:
		o, rec = opDelete, m.Previous
	default:
		return nil, nil
	}
	if !fires(action(f.EventType), o) || rec == nil {
		return nil, nil
	}
	project := m.Project
	if project == "" {
		project = env.Project
	}
	u, err := decodeUser(rec)
	if err != nil {
		return nil, fmt.Errorf("trigger: auth user of %s: %w", ev.Path, err)
	}
	t := ev.At
	var body map[string]any
	if kindOf(f.EventType) == kindAuthV2 {
		if want := f.EventFilters["tenantid"]; want != "" && want != m.Tenant {
			return nil, nil
		}
		body = cloudEvent(env, f.EventType, "//identitytoolkit.googleapis.com/projects/"+project, "users/"+u.LocalID, t)
		if o == opCreate {
			body["data"] = map[string]any{"value": userV2(u)}
		} else {
			body["data"] = map[string]any{"oldValue": userV2(u)}
		}
		if m.Tenant != "" {
			body["tenantid"] = m.Tenant
		}
	} else {
		if r := f.EventFilters["resource"]; r != "" && r != "projects/"+project {
			return nil, nil
		}
		body = map[string]any{"data": userV1(u), "context": legacyContext(env, f, "projects/"+project, t, nil)}
	}
	p, err := marshal(body)
	if err != nil {
		return nil, err
	}
	return []Delivery{{Function: f.ID, Params: map[string]string{}, Payload: p}}, nil
}
