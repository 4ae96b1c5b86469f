package auth

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Production's input limits, which the emulator does not enforce. Each
// check runs before anything is hashed or stored, and costs at most one
// pass over its input (a 20 MiB password is refused without copying it).
const (
	// minPasswordLength and maxPasswordLength are the default password
	// policy's bounds (getPasswordPolicy: minPasswordLength 6,
	// maxPasswordLength 4096), in characters.
	minPasswordLength = 6
	maxPasswordLength = 4096
	// maxEmailLength is the longest address SMTP can carry (RFC 5321).
	maxEmailLength = 254
	// maxImportUsers is the most accounts one batchCreate may carry (the
	// admin SDKs refuse more before sending).
	maxImportUsers = 1000
	// maxDisplayName and maxPhotoURL bound profile fields.
	maxDisplayName = 256
	maxPhotoURL    = 2048
)

var errPasswordTooLong = badRequest("PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password may contain at most 4096 characters]")

// checkNewPassword is the policy a password being set must meet.
func checkNewPassword(p string) error {
	if len(p) > maxPasswordLength*utf8.UTFMax || utf8.RuneCountInString(p) > maxPasswordLength {
		return errPasswordTooLong
	}
	if utf8.RuneCountInString(p) < minPasswordLength {
		return ErrWeakPassword
	}
	return nil
}

// passwordTooLong says a presented password cannot match any stored one.
func passwordTooLong(p string) bool {
	return len(p) > maxPasswordLength*utf8.UTFMax || utf8.RuneCountInString(p) > maxPasswordLength
}

// isValidEmail is the emulator's check (something@something, one @) plus
// production's: at most 254 bytes, valid UTF-8, no NUL, control character
// or whitespace.
func isValidEmail(e string) bool {
	if len(e) > maxEmailLength || !utf8.ValidString(e) {
		return false
	}
	if strings.ContainsFunc(e, func(r rune) bool { return r < 0x21 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return false
	}
	at := strings.IndexByte(e, '@')
	return at > 0 && at == strings.LastIndexByte(e, '@') && at < len(e)-1
}

// checkProfile bounds a display name and a photo URL.
func checkProfile(displayName, photoURL *string) error {
	if displayName != nil && utf8.RuneCountInString(*displayName) > maxDisplayName {
		return badRequest("INVALID_DISPLAY_NAME : Display name must be at most 256 characters.")
	}
	if photoURL != nil && len(*photoURL) > maxPhotoURL {
		return badRequest("INVALID_PHOTO_URL : Photo URL must be at most 2048 characters.")
	}
	return nil
}

// hashAlgorithms are the values batchCreate's hashAlgorithm accepts.
var hashAlgorithms = []string{"HMAC_SHA256", "HMAC_SHA1", "HMAC_MD5", "SCRYPT", "PBKDF_SHA1", "MD5", "HMAC_SHA512", "SHA1",
	"BCRYPT", "PBKDF2_SHA256", "SHA256", "SHA512", "STANDARD_SCRYPT", "ARGON2"}

func checkHashAlgorithm(a string) error {
	if a == "" || slices.Contains(hashAlgorithms, a) {
		return nil
	}
	return badRequest("INVALID_HASH_ALGORITHM : Unsupported hash algorithm " + a + ".")
}

// PasswordPolicy is GET /v2/passwordPolicy, what the JS SDK's
// validatePassword checks against: production's default policy.
type PasswordPolicy struct {
	CustomStrengthOptions            PasswordStrength `json:"customStrengthOptions"`
	AllowedNonAlphanumericCharacters []string         `json:"allowedNonAlphanumericCharacters"`
	EnforcementState                 string           `json:"enforcementState"`
	ForceUpgradeOnSignin             bool             `json:"forceUpgradeOnSignin"`
	SchemaVersion                    int              `json:"schemaVersion"`
}

// PasswordStrength is a policy's length bounds.
type PasswordStrength struct {
	MinPasswordLength int `json:"minPasswordLength"`
	MaxPasswordLength int `json:"maxPasswordLength"`
}

// GetPasswordPolicy returns the password policy every project enforces.
func (e *Engine) GetPasswordPolicy(c Call) (*PasswordPolicy, error) {
	if c.Project == "" {
		return nil, badRequest("MISSING_PROJECT_ID")
	}
	var sym []string
	for _, r := range "^$*.[]{}()?\"!@#%&/\\,><':;|_~`=+-" {
		sym = append(sym, string(r))
	}
	return &PasswordPolicy{CustomStrengthOptions: PasswordStrength{MinPasswordLength: minPasswordLength, MaxPasswordLength: maxPasswordLength},
		AllowedNonAlphanumericCharacters: sym, EnforcementState: "ENFORCE", SchemaVersion: 1}, nil
}

// RecaptchaConfig is GET /v2/recaptchaConfig: reCAPTCHA is never enforced.
type RecaptchaConfig struct {
	RecaptchaEnforcementState []RecaptchaEnforcement `json:"recaptchaEnforcementState"`
}

// RecaptchaEnforcement is one provider's reCAPTCHA switch.
type RecaptchaEnforcement struct {
	Provider         string `json:"provider"`
	EnforcementState string `json:"enforcementState"`
}

// GetRecaptchaConfig says reCAPTCHA is off for every provider.
func (e *Engine) GetRecaptchaConfig(c Call) (*RecaptchaConfig, error) {
	return &RecaptchaConfig{RecaptchaEnforcementState: []RecaptchaEnforcement{
		{Provider: "EMAIL_PASSWORD_PROVIDER", EnforcementState: "OFF"},
		{Provider: "PHONE_PROVIDER", EnforcementState: "OFF"},
	}}, nil
}
