package storage

import (
	"sort"
	"strconv"
	"strings"
	"time"

	srules "github.com/pyric/pyric/rules/storage"
)

// TokenKey is the custom-metadata key production keeps download tokens
// under (comma separated); the v0 API shows it as downloadTokens.
const TokenKey = "firebaseStorageDownloadTokens"

// DefaultContentType is what an upload without any content type stores.
const DefaultContentType = "application/octet-stream"

// Object is a stored object's metadata. Generation is unique per engine
// and names the object's bytes; Metageneration counts metadata versions of
// one generation from 1.
type Object struct {
	Bucket             string            `json:"bucket"`
	Name               string            `json:"name"`
	Generation         int64             `json:"generation"`
	Metageneration     int64             `json:"metageneration"`
	Size               int64             `json:"size"`
	ContentType        string            `json:"contentType,omitempty"`
	ContentEncoding    string            `json:"contentEncoding,omitempty"`
	ContentDisposition string            `json:"contentDisposition,omitempty"`
	ContentLanguage    string            `json:"contentLanguage,omitempty"`
	CacheControl       string            `json:"cacheControl,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	MD5Hash            string            `json:"md5Hash"` // base64
	CRC32C             string            `json:"crc32c"`  // base64 of the big-endian checksum
	TimeCreated        time.Time         `json:"timeCreated"`
	Updated            time.Time         `json:"updated"`
}

// ETag is the object's entity tag; it changes with every metadata version.
func (o *Object) ETag() string {
	var b [48]byte // built here, one string made of it (not three)
	return string(o.AppendETag(b[:0]))
}

// AppendETag appends the object's ETag to b.
func (o *Object) AppendETag(b []byte) []byte {
	b = strconv.AppendInt(b, o.Generation, 36)
	return strconv.AppendInt(append(b, '/'), o.Metageneration, 10)
}

// StorageClass is always STANDARD.
func (o *Object) StorageClass() string { return "STANDARD" }

// DownloadTokens returns the object's download tokens.
func (o *Object) DownloadTokens() []string {
	v := o.Metadata[TokenKey]
	if v == "" {
		return nil
	}
	var out []string
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// HasToken reports whether t is one of the object's download tokens.
func (o *Object) HasToken(t string) bool {
	if t == "" {
		return false
	}
	for _, x := range o.DownloadTokens() {
		if x == t {
			return true
		}
	}
	return false
}

// CustomMetadata returns the custom metadata without the download tokens
// (what the v0 API shows under metadata).
func (o *Object) CustomMetadata() map[string]string {
	out := make(map[string]string, len(o.Metadata))
	for k, v := range o.Metadata {
		if k != TokenKey {
			out[k] = v
		}
	}
	return out
}

func (o *Object) clone() *Object {
	c := *o
	if o.Metadata != nil {
		c.Metadata = make(map[string]string, len(o.Metadata))
		for k, v := range o.Metadata {
			c.Metadata[k] = v
		}
	}
	return &c
}

// rules returns the object as rules see it.
func (o *Object) rules() *srules.Object {
	if o == nil {
		return nil
	}
	md := o.CustomMetadata()
	if md == nil {
		md = map[string]string{}
	}
	return &srules.Object{
		Name: o.Name, Bucket: o.Bucket, Size: o.Size, ContentType: o.ContentType,
		Metadata: md, MD5Hash: o.MD5Hash, CRC32C: o.CRC32C, ETag: o.ETag(),
		TimeCreated: o.TimeCreated, Updated: o.Updated,
		Generation: o.Generation, Metageneration: o.Metageneration,
		CacheControl: o.CacheControl, ContentDisposition: o.ContentDisposition,
		ContentEncoding: o.ContentEncoding, ContentLanguage: o.ContentLanguage,
	}
}

// Attrs are the client-settable metadata of a create or a patch. A nil
// field is left as it is (a create leaves it empty); a non-nil one is set,
// and the empty string clears it (what a JSON null asks for). In Metadata a
// nil value deletes the key; ClearMetadata (metadata: null) drops every
// custom key first.
type Attrs struct {
	ContentType        *string
	ContentEncoding    *string
	ContentDisposition *string
	ContentLanguage    *string
	CacheControl       *string
	Metadata           map[string]*string
	ClearMetadata      bool
}

// apply sets the attrs on o.
func (a *Attrs) apply(o *Object) {
	if a == nil {
		return
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&o.ContentType, a.ContentType)
	set(&o.ContentEncoding, a.ContentEncoding)
	set(&o.ContentDisposition, a.ContentDisposition)
	set(&o.ContentLanguage, a.ContentLanguage)
	set(&o.CacheControl, a.CacheControl)
	if a.ClearMetadata {
		tokens := o.Metadata[TokenKey]
		o.Metadata = nil
		if tokens != "" && !a.touches(TokenKey) {
			o.Metadata = map[string]string{TokenKey: tokens}
		}
	}
	for k, v := range a.Metadata {
		if v == nil {
			delete(o.Metadata, k)
			continue
		}
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		o.Metadata[k] = *v
	}
	if len(o.Metadata) == 0 {
		o.Metadata = nil
	}
}

func (a *Attrs) touches(key string) bool {
	_, ok := a.Metadata[key]
	return ok
}

// Conditions are GCS preconditions. GenerationMatch 0 means the object must
// not exist.
type Conditions struct {
	GenerationMatch        *int64
	GenerationNotMatch     *int64
	MetagenerationMatch    *int64
	MetagenerationNotMatch *int64
}

// check tests the conditions against the current object (nil when absent).
func (c *Conditions) check(o *Object) error {
	if c == nil {
		return nil
	}
	var gen, meta int64
	if o != nil {
		gen, meta = o.Generation, o.Metageneration
	}
	fail := func(what string) error {
		return errorf(FailedPrecondition, "At least one of the pre-conditions you specified did not hold. (%s)", what)
	}
	if c.GenerationMatch != nil && *c.GenerationMatch != gen {
		return fail("ifGenerationMatch")
	}
	if c.GenerationNotMatch != nil && *c.GenerationNotMatch == gen {
		return fail("ifGenerationNotMatch")
	}
	if c.MetagenerationMatch != nil {
		if o == nil || *c.MetagenerationMatch != meta {
			return fail("ifMetagenerationMatch")
		}
	}
	if c.MetagenerationNotMatch != nil && o != nil && *c.MetagenerationNotMatch == meta {
		return fail("ifMetagenerationNotMatch")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MaxCustomMetadata is GCS's limit on an object's custom metadata: 8 KiB
// of keys and values together.
const MaxCustomMetadata = 8 << 10

// checkMetadata enforces the custom metadata limit.
func checkMetadata(o *Object) error {
	n := 0
	for k, v := range o.Metadata {
		n += len(k) + len(v)
	}
	if n > MaxCustomMetadata {
		return errorf(InvalidArgument, "The custom metadata is %d bytes; at most %d are allowed.", n, MaxCustomMetadata)
	}
	return nil
}
