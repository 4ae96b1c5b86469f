package storageserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pyric/pyric/internal/jsonstr"
	"github.com/pyric/pyric/server/httpjson"
	engine "github.com/pyric/pyric/storage"
)

// maxMetadataBytes caps a JSON metadata body (GCS allows 8 KiB of custom
// metadata; the rest of an object resource is small).
const maxMetadataBytes = 1 << 20

const timeLayout = "2006-01-02T15:04:05.000Z"

func ts(t time.Time) string { return t.UTC().Format(timeLayout) }

// firebaseMetadata renders an object as the Firebase v0 API does.
func firebaseMetadata(o *engine.Object) map[string]any {
	m := map[string]any{
		"name": o.Name, "bucket": o.Bucket,
		"generation": strconv.FormatInt(o.Generation, 10), "metageneration": strconv.FormatInt(o.Metageneration, 10),
		"contentType": o.ContentType, "timeCreated": ts(o.TimeCreated), "updated": ts(o.Updated),
		"storageClass": o.StorageClass(), "size": strconv.FormatInt(o.Size, 10),
		"md5Hash": o.MD5Hash, "crc32c": o.CRC32C, "etag": o.ETag(),
		"downloadTokens":  strings.Join(o.DownloadTokens(), ","),
		"contentEncoding": orDefault(o.ContentEncoding, "identity"),
		"metadata":        o.CustomMetadata(),
	}
	if o.ContentDisposition != "" {
		m["contentDisposition"] = o.ContentDisposition
	}
	if o.ContentLanguage != "" {
		m["contentLanguage"] = o.ContentLanguage
	}
	if o.CacheControl != "" {
		m["cacheControl"] = o.CacheControl
	}
	if len(o.DownloadTokens()) == 0 {
		delete(m, "downloadTokens")
	}
	return m
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// gcsObjectJSON is an object as the GCS JSON API renders it
// (storage#object), for a value encoding/json encodes (a rewrite's
// response); answerObject and a listing append it directly.
type gcsObjectJSON struct {
	base origin
	o    *engine.Object
}

func gcsObject(base origin, o *engine.Object) gcsObjectJSON { return gcsObjectJSON{base, o} }

func (g gcsObjectJSON) MarshalJSON() ([]byte, error) { return appendGCSObject(nil, g.base, g.o), nil }

// appendGCSObject appends o as the GCS JSON API renders it
// (storage#object), the bytes encoding/json writes for the struct of
// its fields (keys in alphabetical order, HTML-safe strings), written
// without reflection or intermediate strings: a listing renders a
// thousand of them, and reflection and garbage were most of its time.
func appendGCSObject(b []byte, base origin, o *engine.Object) []byte {
	var num [20]byte
	gen := strconv.AppendInt(num[:0], o.Generation, 10)
	key := func(k string) {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	str := func(k, v string) {
		key(k)
		b = jsonstr.Append(b, v)
	}
	opt := func(k, v string) {
		if v != "" {
			str(k, v)
		}
	}
	// link appends a string made of parts, and gen after them when
	// withGen (the generation's digits: no string made of them).
	link := func(k string, withGen bool, parts ...string) {
		key(k)
		b = append(b, '"')
		for _, p := range parts {
			b = jsonstr.AppendChars(b, p)
		}
		if withGen {
			b = append(b, gen...)
		}
		b = append(b, '"')
	}
	// objectLink appends base, then path's bucket and name as path
	// segments (url.PathEscape's, escaped in place: a name with a '/'
	// was a string per link) and then rest.
	objectLink := func(k string, base origin, path, rest string) {
		key(k)
		b = base.appendTo(append(b, '"'))
		b = append(b, path...)
		b = appendPathSegment(b, o.Bucket)
		b = append(b, "/o/"...)
		b = appendPathSegment(b, o.Name)
		b = append(append(b, rest...), '"')
	}
	stamp := func(k string, t time.Time) {
		key(k)
		b = append(appendStamp(append(b, '"'), t), '"')
	}
	b = append(b, `{"bucket":`...)
	b = jsonstr.Append(b, o.Bucket)
	opt("cacheControl", o.CacheControl)
	opt("contentDisposition", o.ContentDisposition)
	opt("contentEncoding", o.ContentEncoding)
	opt("contentLanguage", o.ContentLanguage)
	str("contentType", o.ContentType)
	str("crc32c", o.CRC32C)
	key("etag") // o.ETag(), appended
	b = append(strconv.AppendInt(append(strconv.AppendInt(append(b, '"'), o.Generation, 36), '/'), o.Metageneration, 10), '"')
	key("generation")
	b = append(append(append(b, '"'), gen...), '"')
	link("id", true, o.Bucket, "/", o.Name, "/")
	b = append(b, `,"kind":"storage#object"`...)
	str("md5Hash", o.MD5Hash)
	objectLink("mediaLink", base, "/download/storage/v1/b/", "?generation=")
	b = append(append(b[:len(b)-1], gen...), `\u0026alt=media"`...) // "&alt=media", escaped
	if len(o.Metadata) > 0 {
		b = jsonstr.AppendMap(append(b, `,"metadata":`...), o.Metadata)
	}
	key("metageneration")
	b = append(strconv.AppendInt(append(b, '"'), o.Metageneration, 10), '"')
	str("name", o.Name)
	objectLink("selfLink", base, "/storage/v1/b/", "")
	key("size")
	b = append(strconv.AppendInt(append(b, '"'), o.Size, 10), '"')
	str("storageClass", o.StorageClass())
	stamp("timeCreated", o.TimeCreated)
	stamp("timeStorageClassUpdated", o.TimeCreated)
	stamp("updated", o.Updated)
	return append(b, '}')
}

// origin is where this server was reached, kept as its scheme and host
// for links appended to a response (no string made of them).
type origin struct{ scheme, host string }

func originOf(r *http.Request) origin {
	if r.TLS != nil {
		return origin{"https://", r.Host}
	}
	return origin{"http://", r.Host}
}

func (o origin) String() string { return o.scheme + o.host }

// appendTo appends the origin as a JSON string's characters.
func (o origin) appendTo(b []byte) []byte {
	return jsonstr.AppendChars(append(b, o.scheme...), o.host)
}

// pathEscapes marks the bytes url.PathEscape escapes (it escapes byte by
// byte: its answer for each byte alone is its answer in any string).
var pathEscapes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = url.PathEscape(string([]byte{byte(c)})) != string([]byte{byte(c)})
	}
	return t
}()

// appendPathSegment appends s as jsonstr.AppendChars appends
// url.PathEscape(s), without the escaped string.
func appendPathSegment(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	from := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; pathEscapes[c] {
			b = append(jsonstr.AppendChars(b, s[from:i]), '%', hex[c>>4], hex[c&15])
			from = i + 1
		}
	}
	return jsonstr.AppendChars(b, s[from:])
}

// appendStamp appends t in UTC as timeLayout writes it (AppendFormat
// parses the layout on every call: three times an object, a third of a
// listing's encoding).
func appendStamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timeLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// plainJSONString decodes raw when it is a string without escapes, in
// valid UTF-8 (what json.Unmarshal would return, without its reflection:
// a name, a content type); ok is false for anything else.
func plainJSONString(raw json.RawMessage) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}

// answerObject answers 200 with o as the GCS JSON API renders it.
func answerObject(w http.ResponseWriter, r *http.Request, o *engine.Object) {
	buf := listBufs.Get().(*[]byte)
	b := appendGCSObject((*buf)[:0], originOf(r), o)
	answerBody(w, b)
	*buf = b
	listBufs.Put(buf)
}

// answerBody answers 200 with b, JSON already encoded, in the API's
// style: its newline appended in place (the Style's Body copies b to
// append it, a listing's hundreds of KiB).
func answerBody(w http.ResponseWriter, b []byte) {
	raw := api
	raw.Newline = false
	if api.Newline {
		b = append(b, '\n')
	}
	raw.Body(w, http.StatusOK, b)
}

func gcsBucket(name string) map[string]any {
	return map[string]any{"kind": "storage#bucket", "id": name, "name": name, "location": "US",
		"storageClass": "STANDARD", "metageneration": "1", "timeCreated": "2020-01-01T00:00:00.000Z",
		"updated": "2020-01-01T00:00:00.000Z", "projectNumber": "0", "etag": "CAE="}
}

// resource is a decoded object resource (upload or patch body).
type resource struct {
	Name  string
	Attrs engine.Attrs
	// MD5Hash and CRC32C, when given, are what the client says the bytes
	// hash to.
	MD5Hash, CRC32C string
}

// decodeResource reads an object resource; a null field clears it. Errors
// name the field.
func decodeResource(r io.Reader) (*resource, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxMetadataBytes+1))
	if err != nil {
		return nil, badRequest("reading the metadata: %v", err)
	}
	return resourceOf(body)
}

// resourceOf decodes a whole metadata body; it keeps none of body's
// bytes (a multipart upload's metadata is read from a buffer the media
// is read through next).
func resourceOf(body []byte) (*resource, error) {
	if len(body) > maxMetadataBytes {
		return nil, badRequest("The metadata is larger than %d bytes.", maxMetadataBytes)
	}
	return parseResource(body)
}

func parseResource(body []byte) (*resource, error) {
	res := &resource{}
	if len(bytes.TrimSpace(body)) == 0 {
		return res, nil
	}
	fields, err := objectFields(body)
	if err != nil {
		return nil, badRequest("The metadata is not a JSON object: %v", err)
	}
	str := func(key string) (*string, error) {
		raw, ok := fields[key]
		if !ok {
			return nil, nil
		}
		if string(bytes.TrimSpace(raw)) == "null" {
			empty := ""
			return &empty, nil
		}
		if s, ok := plainJSONString(raw); ok {
			return &s, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badRequest("Invalid value for %s: expected a string.", key)
		}
		return &s, nil
	}
	a := &res.Attrs
	// In a fixed order, so that of two bad fields the same one is named.
	for _, f := range [...]struct {
		key string
		dst **string
	}{{"cacheControl", &a.CacheControl}, {"contentDisposition", &a.ContentDisposition}, {"contentEncoding", &a.ContentEncoding},
		{"contentLanguage", &a.ContentLanguage}, {"contentType", &a.ContentType}} {
		if *f.dst, err = str(f.key); err != nil {
			return nil, err
		}
	}
	for _, f := range [...]struct {
		key string
		dst *string
	}{{"crc32c", &res.CRC32C}, {"md5Hash", &res.MD5Hash}, {"name", &res.Name}} {
		v, err := str(f.key)
		if err != nil {
			return nil, err
		}
		if v != nil {
			*f.dst = *v
		}
	}
	if raw, ok := fields["metadata"]; ok {
		if string(bytes.TrimSpace(raw)) == "null" {
			a.ClearMetadata = true
		} else {
			var md map[string]json.RawMessage
			if err := json.Unmarshal(raw, &md); err != nil {
				return nil, badRequest("Invalid value for metadata: expected an object.")
			}
			a.Metadata = map[string]*string{}
			for k, v := range md {
				var val any
				if err := json.Unmarshal(v, &val); err != nil {
					return nil, badRequest("Invalid value for metadata.%s.", k)
				}
				switch x := val.(type) {
				case nil:
					a.Metadata[k] = nil
				case string:
					a.Metadata[k] = &x
				case bool, float64:
					// GCS stores metadata values as strings.
					s := strings.TrimSpace(string(v))
					a.Metadata[k] = &s
				default:
					return nil, badRequest("Invalid value for metadata.%s: expected a string.", k)
				}
			}
		}
	}
	return res, nil
}

// objectFields is json.Unmarshal of body into a map of its members' raw
// values (aliasing body), read without reflection when body is a valid
// JSON object; anything else gets json.Unmarshal's answer and error.
func objectFields(body []byte) (map[string]json.RawMessage, error) {
	if i := jsonstr.SkipSpace(body, 0); i == len(body) || body[i] != '{' || !jsonstr.Valid(body) {
		var fields map[string]json.RawMessage
		err := json.Unmarshal(body, &fields)
		return fields, err
	}
	fields := make(map[string]json.RawMessage, 8)
	jsonstr.Members(body, jsonstr.SkipSpace(body, 0), func(key, value []byte) {
		fields[jsonstr.Unquote(key)] = value // a later duplicate wins, as in json.Unmarshal
	})
	return fields, nil
}

// wireError is an error the adapter found before the engine saw the
// request (a body that does not decode, an unknown route, an unreadable
// token); the engine records it as a rejected request.
type wireError struct{ err *engine.Error }

func (e wireError) Error() string { return e.err.Message }
func (e wireError) Unwrap() error { return e.err }

func wireErr(c engine.Code, format string, args ...any) error {
	return wireError{&engine.Error{Code: c, Message: fmt.Sprintf(format, args...)}}
}

func badRequest(format string, args ...any) error {
	return wireErr(engine.InvalidArgument, format, args...)
}

func notFound(format string, args ...any) error {
	return wireErr(engine.NotFound, format, args...)
}

// rejected has the engine record a request the adapter refused.
func (h *Handler) rejected(r *http.Request, err error) {
	var we wireError
	if errors.As(err, &we) {
		h.e.Reject(r.Method, r.URL.Path, err)
	}
}

func (h *Handler) gcsFail(w http.ResponseWriter, r *http.Request, err error) {
	h.rejected(r, err)
	gcsError(w, err)
}

func (h *Handler) firebaseFail(w http.ResponseWriter, r *http.Request, err error) {
	h.rejected(r, err)
	firebaseError(w, err)
}

// conditions reads GCS preconditions from the query (ifGenerationMatch, …;
// with source=true the ifSource… forms) and XML headers.
func conditions(r *http.Request, source bool) (engine.Conditions, error) {
	return conditionsIn(query(r.URL.RawQuery), r, source)
}

// conditionsIn is conditions with r's query given (q), by a handler that
// reads other keys of it too.
func conditionsIn(q query, r *http.Request, source bool) (engine.Conditions, error) {
	prefix := "if"
	if source {
		prefix = "ifSource"
	}
	// The values go to an array, not through pointers to the fields of
	// the Conditions returned: those made it escape, an allocation per
	// request that has none.
	var vals [4]*int64
	// In a fixed order, so that of two bad values the same one is named.
	for i, f := range [...]struct{ key, header string }{
		{"GenerationMatch", "X-Goog-If-Generation-Match"},
		{"GenerationNotMatch", "X-Goog-If-Generation-Not-Match"},
		{"MetagenerationMatch", "X-Goog-If-Metageneration-Match"},
		{"MetagenerationNotMatch", "X-Goog-If-Metageneration-Not-Match"}} {
		v := q.Get(prefix + f.key)
		if v == "" && !source {
			v = r.Header.Get(f.header)
		}
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return engine.Conditions{}, badRequest("Invalid value for %s%s: %q.", prefix, f.key, v)
		}
		vals[i] = &n
	}
	return engine.Conditions{GenerationMatch: vals[0], GenerationNotMatch: vals[1],
		MetagenerationMatch: vals[2], MetagenerationNotMatch: vals[3]}, nil
}

// query is a request's raw query, read key by key with url.Values'
// answers (URL.Query's pairs; Get is the first value of a key) without
// building its map: a handler reads a few keys, and the map cost every
// request of the GCS Go client, whose queries carry four or five keys,
// six allocations (the map and a slice per key).
type query string

// manyPairs is the number of '&' from which Get parses the whole query
// with url.ParseQuery, which answers no values past its limit on the
// number of pairs: a query of so many is not a client's, and scanning it
// once per key is not worth saving the map.
const manyPairs = 64

// Get is url.Values' Get of the query's values.
func (q query) Get(key string) string {
	raw := string(q)
	if strings.Count(raw, "&") >= manyPairs {
		v, _ := url.ParseQuery(raw)
		return v.Get(key)
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue // ParseQuery skips both
		}
		k, v, _ := strings.Cut(pair, "=")
		if k, ok := unescapeQuery(k); !ok || k != key {
			continue
		}
		if v, ok := unescapeQuery(v); ok {
			return v
		}
		// A value that does not unescape drops its pair, as in
		// ParseQuery: a later one of the key may be its first value.
	}
	return ""
}

// unescapeQuery is url.QueryUnescape, without its call for a string that
// has nothing to unescape.
func unescapeQuery(s string) (string, bool) {
	if !strings.ContainsAny(s, "%+") {
		return s, true
	}
	u, err := url.QueryUnescape(s)
	return u, err == nil
}

// api is how GCS's JSON API and the Firebase v0 API write JSON.
var api = httpjson.Style{Charset: "utf-8", Newline: true}

// gcsReason is one element of the GCS envelope's "errors" list.
type gcsReason struct {
	Domain  string `json:"domain"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
}

// gcsError writes the GCS error envelope.
func gcsError(w http.ResponseWriter, err error) {
	status := engine.HTTPStatus(err)
	api.Error(w, httpjson.Status{Code: status, Message: err.Error(),
		Errors: []gcsReason{{Domain: "global", Message: err.Error(), Reason: engine.Reason(err)}}})
}

// firebaseError writes the Firebase v0 envelope; the JS SDK maps the
// status (404 object-not-found, 403 unauthorized, 401 unauthenticated).
func firebaseError(w http.ResponseWriter, err error) {
	status := engine.HTTPStatus(err)
	msg := err.Error()
	if engine.CodeOf(err) == engine.NotFound {
		msg = "Not Found."
	}
	api.Error(w, httpjson.Status{Code: status, Message: msg})
}
