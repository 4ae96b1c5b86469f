package auth

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// BatchGetRequest is GET accounts:batchGet (the admin Users iterator).
type BatchGetRequest struct {
	MaxResults    string // query parameter; default 20, at most 1000
	NextPageToken string
	TenantID      string
}

// BatchGetResponse is identitytoolkit#DownloadAccountResponse.
type BatchGetResponse struct {
	Kind          string  `json:"kind"`
	Users         []*User `json:"users"`
	NextPageToken string  `json:"nextPageToken,omitempty"`
}

// BatchGet lists accounts in uid order, a page at a time.
func (e *Engine) BatchGet(c Call, req BatchGetRequest) (_ *BatchGetResponse, err error) {
	defer e.begin()(&err)
	return e.admin.batchGet(c, req)
}

// adminFlow is the admin SDKs' bulk operations on accounts: listing,
// importing, deleting and querying them.
type adminFlow struct{ *core }

func (e adminFlow) batchGet(c Call, req BatchGetRequest) (*BatchGetResponse, error) {
	sc, err := e.enabledScope(c, "", "", nil)
	if err != nil {
		return nil, err
	}
	if req.TenantID != "" && sc.tenant == nil {
		t := sc.project.tenant(req.TenantID)
		sc = scope{project: sc.project, tenant: t, space: t.space}
	}
	max := 20
	if f, err := strconv.ParseFloat(req.MaxResults, 64); err == nil && int(f) != 0 {
		max = int(f)
	}
	if max < 0 {
		// The emulator returns every account for a negative maxResults;
		// production refuses it.
		return nil, InvalidArgument("INVALID_ARGUMENT : maxResults must be between 1 and 1000.")
	}
	max = min(max, 1000)
	resp := &BatchGetResponse{Kind: "identitytoolkit#DownloadAccountResponse", Users: sc.space.usersAfter(req.NextPageToken)}
	if max >= 0 && len(resp.Users) >= max {
		resp.Users = resp.Users[:max]
		if len(resp.Users) > 0 {
			resp.NextPageToken = resp.Users[len(resp.Users)-1].LocalID
		}
	}
	return resp, nil
}

// BatchCreateRequest is accounts:batchCreate (admin ImportUsers).
type BatchCreateRequest struct {
	Users          []ImportUser `json:"users,omitempty"`
	AllowOverwrite bool         `json:"allowOverwrite,omitempty"`
	SanityCheck    bool         `json:"sanityCheck,omitempty"`
	TenantID       string       `json:"tenantId,omitempty"`
	HashAlgorithm  string       `json:"hashAlgorithm,omitempty"`
}

// ImportUser is one account to import.
type ImportUser struct {
	LocalID          string             `json:"localId,omitempty"`
	Email            string             `json:"email,omitempty"`
	EmailVerified    bool               `json:"emailVerified,omitempty"`
	DisplayName      string             `json:"displayName,omitempty"`
	PhotoURL         string             `json:"photoUrl,omitempty"`
	PhoneNumber      string             `json:"phoneNumber,omitempty"`
	Disabled         bool               `json:"disabled,omitempty"`
	PasswordHash     string             `json:"passwordHash,omitempty"`
	Salt             string             `json:"salt,omitempty"`
	RawPassword      string             `json:"rawPassword,omitempty"`
	CustomAttributes string             `json:"customAttributes,omitempty"`
	CreatedAt        string             `json:"createdAt,omitempty"`
	LastLoginAt      string             `json:"lastLoginAt,omitempty"`
	ProviderUserInfo []ProviderUserInfo `json:"providerUserInfo,omitempty"`
	TenantID         string             `json:"tenantId,omitempty"`
	MFAInfo          []MFAEnrollment    `json:"mfaInfo,omitempty"`
}

// BatchCreateError reports one account that could not be imported.
type BatchCreateError struct {
	Index   int    `json:"index"`
	Message string `json:"message"`
}

// BatchCreateResponse is identitytoolkit#UploadAccountResponse.
type BatchCreateResponse struct {
	Kind  string             `json:"kind"`
	Error []BatchCreateError `json:"error"`
}

// BatchCreate imports accounts; per-account failures are reported, not
// fatal.
func (e *Engine) BatchCreate(c Call, req BatchCreateRequest) (_ *BatchCreateResponse, err error) {
	defer e.begin()(&err)
	return e.admin.batchCreate(c, req)
}

func (f adminFlow) batchCreate(c Call, req BatchCreateRequest) (*BatchCreateResponse, error) {
	sc, err := f.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(sc, req); err != nil {
		return nil, err
	}
	resp := &BatchCreateResponse{Kind: "identitytoolkit#UploadAccountResponse", Error: []BatchCreateError{}}
	for i, in := range req.Users {
		if err := f.importOne(c, sc, req, in); err != nil {
			msg := err.Error()
			switch {
			case msg == "INVALID_CLAIMS":
				msg = "Invalid custom claims provided."
			case msg == "CLAIMS_TOO_LARGE":
				msg = "Custom claims provided are too large."
			case strings.HasPrefix(msg, "FORBIDDEN_CLAIM"):
				msg = "Custom claims provided include a reserved claim."
			}
			resp.Error = append(resp.Error, BatchCreateError{Index: i, Message: msg})
		}
	}
	return resp, nil
}

// checkBatch refuses a whole import: no accounts or too many, an unknown
// hash, and (with sanityCheck, or without allowOverwrite) duplicates
// within the batch.
func checkBatch(sc scope, req BatchCreateRequest) error {
	if len(req.Users) == 0 {
		return badRequest("MISSING_USER_ACCOUNT")
	}
	if len(req.Users) > maxImportUsers {
		return badRequest("MAXIMUM_USER_COUNT_EXCEEDED : A maximum of 1000 accounts are allowed per batch.")
	}
	if err := checkHashAlgorithm(req.HashAlgorithm); err != nil {
		return err
	}
	if req.SanityCheck {
		if err := sanityCheck(sc, req.Users); err != nil {
			return err
		}
	}
	if !req.AllowOverwrite {
		seen := map[string]bool{}
		for _, u := range req.Users {
			if seen[u.LocalID] {
				return badRequest("DUPLICATE_LOCAL_ID : " + u.LocalID)
			}
			seen[u.LocalID] = true
		}
	}
	return nil
}

// sanityCheck refuses a batch with an email (when an email names one
// account) or a federated identity twice.
func sanityCheck(sc scope, users []ImportUser) error {
	if sc.oneAccountPerEmail() {
		seen := map[string]bool{}
		for _, u := range users {
			if u.Email != "" {
				if seen[u.Email] {
					return badRequest("DUPLICATE_EMAIL : " + u.Email)
				}
				seen[u.Email] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, u := range users {
		for _, p := range u.ProviderUserInfo {
			k := p.ProviderID + ":" + p.RawID
			if seen[k] {
				return errorf("DUPLICATE_RAW_ID : Provider id(%s), Raw id(%s)", p.ProviderID, p.RawID)
			}
			seen[k] = true
		}
	}
	return nil
}

// importOne imports one account, replacing the one with its uid when the
// batch allows overwriting.
func (f adminFlow) importOne(c Call, sc scope, req BatchCreateRequest, in ImportUser) error {
	u, upserts, err := f.importedUser(sc, req, in)
	if err != nil {
		return err
	}
	before := sc.space.get(in.LocalID)
	if before != nil && !req.AllowOverwrite {
		return badRequest("localId belongs to an existing account - can not overwrite.")
	}
	if before != nil {
		sc.space.remove(before)
	}
	stored := sc.space.put(u, upserts, nil)
	if before == nil {
		f.emit(c, sc, OpUserCreate, stored.LocalID, nil, stored, map[string]any{"import": true})
	} else {
		f.emit(c, sc, OpUserUpdate, stored.LocalID, before, stored, map[string]any{"import": true})
	}
	return nil
}

// importedUser is the account an ImportUser describes, checked field by
// field in the emulator's order, with the identities to link.
func (f adminFlow) importedUser(sc scope, req BatchCreateRequest, in ImportUser) (*User, []ProviderUserInfo, error) {
	if in.LocalID == "" {
		return nil, nil, badRequest("localId is missing")
	}
	if err := checkProfile(&in.DisplayName, &in.PhotoURL); err != nil {
		return nil, nil, err
	}
	now := f.now()
	u := &User{LocalID: in.LocalID, DisplayName: in.DisplayName, PhotoURL: in.PhotoURL, LastLoginAt: in.LastLoginAt}
	if in.TenantID != "" && in.TenantID != sc.tenantID() {
		return nil, nil, badRequest("Tenant id in userInfo does not match the tenant id in request.")
	}
	u.TenantID = sc.tenantID()
	if err := f.importPassword(u, in, now); err != nil {
		return nil, nil, err
	}
	if in.CustomAttributes != "" {
		if err := validateSerializedClaims(in.CustomAttributes); err != nil {
			return nil, nil, err
		}
		u.CustomAttributes = in.CustomAttributes
	}
	upserts, err := importedIdentities(sc, in)
	if err != nil {
		return nil, nil, err
	}
	if in.ProviderUserInfo != nil {
		u.ProviderUserInfo = []ProviderUserInfo{}
	}
	if in.PhoneNumber != "" {
		if !isValidPhone(in.PhoneNumber) {
			return nil, nil, badRequest("phone number format is invalid")
		}
		u.PhoneNumber = in.PhoneNumber
	}
	u.ValidSince = strconv.FormatInt(now.Unix(), 10)
	u.CreatedAt = strconv.FormatInt(now.UnixMilli(), 10)
	if in.CreatedAt != "" {
		if _, err := strconv.ParseFloat(in.CreatedAt, 64); err == nil {
			u.CreatedAt = in.CreatedAt
		}
	}
	if err := importEmail(sc, req, u, in); err != nil {
		return nil, nil, err
	}
	u.EmailVerified, u.Disabled = ptr(in.EmailVerified), ptr(in.Disabled)
	if err := f.importMFA(u, in); err != nil {
		return nil, nil, err
	}
	return u, upserts, nil
}

// importPassword takes the password hash as given, or hashes a raw
// password (with the given salt or a new one).
func (f adminFlow) importPassword(u *User, in ImportUser, now time.Time) error {
	if in.PasswordHash != "" {
		u.PasswordHash, u.Salt, u.PasswordUpdatedAt = in.PasswordHash, in.Salt, now.UnixMilli()
		return nil
	}
	if in.RawPassword == "" {
		return nil
	}
	if err := checkNewPassword(in.RawPassword); err != nil {
		return err
	}
	u.Salt = in.Salt
	if u.Salt == "" {
		u.Salt = f.newSalt()
	}
	u.PasswordHash, u.PasswordUpdatedAt = hashPassword(in.RawPassword, u.Salt), now.UnixMilli()
	return nil
}

// importedIdentities are the federated identities to link (password and
// phone come from the account's own fields); none may be another
// account's.
func importedIdentities(sc scope, in ImportUser) ([]ProviderUserInfo, error) {
	var upserts []ProviderUserInfo
	for _, p := range in.ProviderUserInfo {
		if p.ProviderID == ProviderPassword || p.ProviderID == ProviderPhone {
			continue
		}
		if p.RawID == "" || p.ProviderID == "" {
			if p.FederatedID == "" {
				return nil, badRequest("federatedId or (providerId & rawId) is required")
			}
			return nil, badRequest("((Parsing federatedId is not implemented in Auth Emulator; please specify providerId AND rawId as a workaround.))")
		}
		if o := sc.space.byProviderRawID(p.ProviderID, p.RawID); o != nil && o.LocalID != in.LocalID {
			return nil, badRequest("raw id exists in other account in database")
		}
		upserts = append(upserts, p)
	}
	return upserts, nil
}

// importEmail sets the account's email, which no other account may have.
func importEmail(sc scope, req BatchCreateRequest, u *User, in ImportUser) error {
	if in.Email == "" {
		return nil
	}
	if !isValidEmail(in.Email) {
		return badRequest("email is invalid")
	}
	if o := sc.space.byEmailAddr(in.Email); o != nil && o.LocalID != in.LocalID {
		if req.SanityCheck && sc.oneAccountPerEmail() {
			return badRequest("email exists in other account in database")
		}
		return badRequest(fmt.Sprintf("((Auth Emulator does not support importing duplicate email: %s))", in.Email))
	}
	u.Email = canonicalEmail(in.Email)
	return nil
}

// importMFA sets the second factors, which need a verified email.
func (f adminFlow) importMFA(u *User, in ImportUser) error {
	if len(in.MFAInfo) == 0 {
		return nil
	}
	if u.Email == "" {
		return badRequest("Second factor account requires email to be presented.")
	}
	if !in.EmailVerified {
		return badRequest("Second factor account requires email to be verified.")
	}
	enr, err := f.validateEnrollments(in.MFAInfo, false)
	if err != nil {
		return err
	}
	u.MFAInfo = enr
	return nil
}

// BatchDeleteRequest is accounts:batchDelete.
type BatchDeleteRequest struct {
	LocalIDs []string `json:"localIds,omitempty"`
	Force    bool     `json:"force,omitempty"`
	TenantID string   `json:"tenantId,omitempty"`
}

// BatchDeleteError reports an account that was not deleted.
type BatchDeleteError struct {
	Index   int    `json:"index"`
	LocalID string `json:"localId"`
	Message string `json:"message"`
}

// BatchDeleteResponse lists the failures, if any.
type BatchDeleteResponse struct {
	Errors []BatchDeleteError `json:"errors,omitempty"`
}

// BatchDelete deletes up to 1000 accounts; without force only disabled ones.
func (e *Engine) BatchDelete(c Call, req BatchDeleteRequest) (_ *BatchDeleteResponse, err error) {
	defer e.begin()(&err)
	return e.admin.batchDelete(c, req)
}

func (e adminFlow) batchDelete(c Call, req BatchDeleteRequest) (*BatchDeleteResponse, error) {
	sc, err := e.scopeFor(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	if len(req.LocalIDs) == 0 || len(req.LocalIDs) > 1000 {
		return nil, badRequest("LOCAL_ID_LIST_EXCEEDS_LIMIT")
	}
	resp := &BatchDeleteResponse{}
	for i, id := range req.LocalIDs {
		u := sc.space.get(id)
		switch {
		case u == nil:
		case !u.isDisabled() && !req.Force:
			resp.Errors = append(resp.Errors, BatchDeleteError{Index: i, LocalID: id, Message: "NOT_DISABLED : Disable the account before batch deletion."})
		default:
			sc.space.remove(u)
			e.emit(c, sc, OpUserDelete, id, u, nil, map[string]any{"batch": true})
		}
	}
	return resp, nil
}

// QueryRequest is accounts:query / :queryAccounts.
type QueryRequest struct {
	ReturnUserInfo *bool  `json:"returnUserInfo,omitempty"`
	Limit          string `json:"limit,omitempty"`
	Offset         string `json:"offset,omitempty"`
	Order          string `json:"order,omitempty"`
	SortBy         string `json:"sortBy,omitempty"`
	Expression     []any  `json:"expression,omitempty"`
	TenantID       string `json:"tenantId,omitempty"`
}

// QueryResponse is the query result.
type QueryResponse struct {
	RecordsCount string  `json:"recordsCount"`
	UserInfo     []*User `json:"userInfo,omitempty"`
}

// Query counts or lists accounts (only sorting by uid, like the emulator).
func (e *Engine) Query(c Call, req QueryRequest) (_ *QueryResponse, err error) {
	defer e.begin()(&err)
	return e.admin.query(c, req)
}

func (e adminFlow) query(c Call, req QueryRequest) (*QueryResponse, error) {
	sc, err := e.enabledScope(c, req.TenantID, "", nil)
	if err != nil {
		return nil, err
	}
	if len(req.Expression) > 0 {
		return nil, NotImplemented("expression is not implemented.")
	}
	if req.ReturnUserInfo != nil && !*req.ReturnUserInfo {
		return &QueryResponse{RecordsCount: strconv.Itoa(sc.space.count())}, nil
	}
	if req.Limit != "" {
		return nil, NotImplemented("limit is not implemented.")
	}
	if req.Offset != "" && req.Offset != "0" {
		return nil, NotImplemented("offset is not implemented.")
	}
	if req.SortBy != "" && req.SortBy != "SORT_BY_FIELD_UNSPECIFIED" && req.SortBy != "USER_ID" {
		return nil, NotImplemented("Only sorting by USER_ID is implemented.")
	}
	resp := &QueryResponse{UserInfo: sc.space.usersAfter("")}
	if req.Order == "DESC" {
		for i, j := 0, len(resp.UserInfo)-1; i < j; i, j = i+1, j-1 {
			resp.UserInfo[i], resp.UserInfo[j] = resp.UserInfo[j], resp.UserInfo[i]
		}
	}
	resp.RecordsCount = strconv.Itoa(len(resp.UserInfo))
	return resp, nil
}
