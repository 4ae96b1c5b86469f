package studio

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
)

// authCall is an Auth engine call by the Studio: admin, acting as the
// Studio, on the default project.
func (s *Studio) authCall(r *http.Request) auth.Call {
	return auth.Call{Caller: identity.AdminIdentity().Via(studioActor), Project: s.sb.Project(), BaseURL: "http://" + r.Host}
}

// authEngine is the sandbox's Auth engine; without one it answers 404
// and returns nil.
func (s *Studio) authEngine(w http.ResponseWriter) *auth.Engine {
	e, ok := sandbox.Lookup[*auth.Engine](s.sb)
	if !ok {
		fail(w, http.StatusNotFound, "this sandbox has no Auth service")
		return nil
	}
	return e
}

func authError(w http.ResponseWriter, err error) {
	var ae *auth.Error
	if errors.As(err, &ae) {
		status := ae.HTTP
		if status == 0 {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, apiError{Error: ae.Message, Code: ae.Status})
		return
	}
	fail(w, http.StatusInternalServerError, err.Error())
}

// authUsers lists a page of users: ?pageSize=N&pageToken=.
func (s *Studio) authUsers(w http.ResponseWriter, r *http.Request) {
	ae := s.authEngine(w)
	if ae == nil {
		return
	}
	q := r.URL.Query()
	size := q.Get("pageSize")
	if size == "" {
		size = "50"
	}
	if n, err := strconv.Atoi(size); err != nil || n < 1 || n > 1000 {
		fail(w, http.StatusBadRequest, "pageSize must be an integer from 1 to 1000, not "+quote(size))
		return
	}
	resp, err := ae.BatchGet(s.authCall(r), auth.BatchGetRequest{MaxResults: size, NextPageToken: q.Get("pageToken")})
	if err != nil {
		authError(w, err)
		return
	}
	users := resp.Users
	if users == nil {
		users = []*auth.User{}
	}
	for _, u := range users {
		u.PasswordHash, u.Salt = "", "" // never shown
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": users, "nextPageToken": resp.NextPageToken})
}

// userEdit is the body of create and update.
type userEdit struct {
	UID           string          `json:"uid"`
	Email         *string         `json:"email"`
	Password      string          `json:"password"`
	DisplayName   *string         `json:"displayName"`
	PhoneNumber   string          `json:"phoneNumber"`
	EmailVerified *bool           `json:"emailVerified"`
	Disabled      *bool           `json:"disabled"`
	CustomClaims  json.RawMessage `json:"customClaims"` // a JSON object, or null to clear
}

// claims validates the custom claims: a JSON object (the engine checks
// reserved names and the size limit).
func (e userEdit) claims() (*string, error) {
	if len(e.CustomClaims) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(e.CustomClaims, &v); err != nil {
		return nil, errors.New("customClaims is not valid JSON: " + err.Error())
	}
	if v == nil {
		s := "{}"
		return &s, nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("customClaims must be a JSON object")
	}
	s := string(e.CustomClaims)
	return &s, nil
}

func (s *Studio) authCreate(w http.ResponseWriter, r *http.Request) {
	ae := s.authEngine(w)
	if ae == nil {
		return
	}
	var body userEdit
	if !readJSON(w, r, &body) {
		return
	}
	claims, err := body.claims()
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	req := auth.SignUpRequest{Email: body.Email, Password: body.Password, PhoneNumber: body.PhoneNumber, LocalID: body.UID}
	if body.DisplayName != nil {
		req.DisplayName = *body.DisplayName
	}
	if body.EmailVerified != nil {
		req.EmailVerified = *body.EmailVerified
	}
	if body.Disabled != nil {
		req.Disabled = *body.Disabled
	}
	c := s.authCall(r)
	resp, err := ae.SignUp(c, req)
	if err != nil {
		authError(w, err)
		return
	}
	if claims != nil {
		if _, err := ae.Update(c, auth.UpdateRequest{LocalID: resp.LocalID, CustomAttributes: claims}); err != nil {
			// The user exists: say so along with why the claims were refused.
			writeJSON(w, http.StatusBadRequest, apiError{Error: "user " + resp.LocalID + " created, but its custom claims were refused: " + err.Error()})
			return
		}
	}
	s.writeUser(w, r, resp.LocalID, http.StatusCreated)
}

func (s *Studio) writeUser(w http.ResponseWriter, r *http.Request, uid string, status int) {
	ae := s.authEngine(w)
	if ae == nil {
		return
	}
	got, err := ae.Lookup(s.authCall(r), auth.LookupRequest{LocalID: []string{uid}})
	if err != nil {
		authError(w, err)
		return
	}
	if len(got.Users) == 0 {
		fail(w, http.StatusNotFound, "no user "+quote(uid))
		return
	}
	u := got.Users[0]
	u.PasswordHash, u.Salt = "", ""
	writeJSON(w, status, u)
}

func (s *Studio) authUpdate(w http.ResponseWriter, r *http.Request) {
	ae := s.authEngine(w)
	if ae == nil {
		return
	}
	uid := r.PathValue("uid")
	var body userEdit
	if !readJSON(w, r, &body) {
		return
	}
	claims, err := body.claims()
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	req := auth.UpdateRequest{LocalID: uid, Password: body.Password, DisplayName: body.DisplayName, PhoneNumber: body.PhoneNumber,
		EmailVerified: body.EmailVerified, DisableUser: body.Disabled, CustomAttributes: claims}
	if body.Email != nil {
		req.Email = *body.Email
	}
	if _, err := ae.Update(s.authCall(r), req); err != nil {
		authError(w, err)
		return
	}
	s.writeUser(w, r, uid, http.StatusOK)
}

func (s *Studio) authDelete(w http.ResponseWriter, r *http.Request) {
	ae := s.authEngine(w)
	if ae == nil {
		return
	}
	if _, err := ae.Delete(s.authCall(r), auth.DeleteRequest{LocalID: r.PathValue("uid")}); err != nil {
		authError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": r.PathValue("uid")})
}

// authOOB lists the email/OOB outbox.
func (s *Studio) authOOB(w http.ResponseWriter, r *http.Request) {
	ae := s.authEngine(w)
	if ae == nil {
		return
	}
	resp, err := ae.ListOOBCodes(s.authCall(r))
	if err != nil {
		authError(w, err)
		return
	}
	codes := resp.OOBCodes
	if codes == nil {
		codes = []auth.OOBCode{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"oobCodes": codes})
}
