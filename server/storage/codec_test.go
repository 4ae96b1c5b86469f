package storageserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/jsonstr"
	engine "github.com/pyric/pyric/storage"
)

// referenceObject is the storage#object resource as a struct for
// encoding/json, fields in the keys' alphabetical order: what
// appendGCSObject must write byte for byte.
type referenceObject struct {
	Bucket                  string            `json:"bucket"`
	CacheControl            string            `json:"cacheControl,omitempty"`
	ContentDisposition      string            `json:"contentDisposition,omitempty"`
	ContentEncoding         string            `json:"contentEncoding,omitempty"`
	ContentLanguage         string            `json:"contentLanguage,omitempty"`
	ContentType             string            `json:"contentType"`
	CRC32C                  string            `json:"crc32c"`
	ETag                    string            `json:"etag"`
	Generation              string            `json:"generation"`
	ID                      string            `json:"id"`
	Kind                    string            `json:"kind"`
	MD5Hash                 string            `json:"md5Hash"`
	MediaLink               string            `json:"mediaLink"`
	Metadata                map[string]string `json:"metadata,omitempty"`
	Metageneration          string            `json:"metageneration"`
	Name                    string            `json:"name"`
	SelfLink                string            `json:"selfLink"`
	Size                    string            `json:"size"`
	StorageClass            string            `json:"storageClass"`
	TimeCreated             string            `json:"timeCreated"`
	TimeStorageClassUpdated string            `json:"timeStorageClassUpdated"`
	Updated                 string            `json:"updated"`
}

func reference(base string, o *engine.Object) referenceObject {
	gen := strconv.FormatInt(o.Generation, 10)
	bucket, name := url.PathEscape(o.Bucket), url.PathEscape(o.Name)
	return referenceObject{Kind: "storage#object", ID: o.Bucket + "/" + o.Name + "/" + gen,
		SelfLink:  base + "/storage/v1/b/" + bucket + "/o/" + name,
		MediaLink: base + "/download/storage/v1/b/" + bucket + "/o/" + name + "?generation=" + gen + "&alt=media",
		Name:      o.Name, Bucket: o.Bucket, Generation: gen,
		Metageneration: strconv.FormatInt(o.Metageneration, 10), ContentType: o.ContentType,
		StorageClass: o.StorageClass(), Size: strconv.FormatInt(o.Size, 10),
		MD5Hash: o.MD5Hash, CRC32C: o.CRC32C, ETag: o.ETag(),
		TimeCreated: ts(o.TimeCreated), Updated: ts(o.Updated), TimeStorageClassUpdated: ts(o.TimeCreated),
		ContentEncoding: o.ContentEncoding, ContentDisposition: o.ContentDisposition,
		ContentLanguage: o.ContentLanguage, CacheControl: o.CacheControl, Metadata: o.Metadata}
}

// TestAppendGCSObject: the object resource written without reflection
// is the bytes encoding/json writes for it, for plain names and for
// names and values that must be escaped (quotes, control characters,
// HTML, non-ASCII, invalid UTF-8; the escapes of ASCII alone are
// written here, the rest by encoding/json), with and without the
// optional fields.
func TestAppendGCSObject(t *testing.T) {
	at := time.Date(2026, 12, 7, 6, 0, 0, 123456789, time.FixedZone("x", 3600))
	objs := []*engine.Object{
		{Bucket: "b.appspot.com", Name: "small/000001", Generation: 1796119200002000, Metageneration: 1, Size: 1024,
			ContentType: "application/octet-stream", MD5Hash: "md5==", CRC32C: "crc==", TimeCreated: at, Updated: at},
		{Bucket: "b", Name: "dir/a \"quoted\" <b>&</b>\\ é ☃ \x01 \u2028 \xff", Generation: 7, Metageneration: 3, Size: 0,
			ContentType: "text/html; charset=utf-8", CacheControl: "no-cache", ContentDisposition: "attachment; filename=\"x\"",
			ContentEncoding: "gzip", ContentLanguage: "fr",
			Metadata:    map[string]string{"z": "last", "a<": "first & \"1\"", "firebaseStorageDownloadTokens": "t1,t2", "ü": "\n"},
			TimeCreated: at, Updated: at.Add(time.Hour)},
		{Bucket: "b", Name: `a&b "c" \d <e> ?f=g#h`, Generation: 9, Metageneration: 1, Size: 3, ContentType: "a/b",
			Metadata: map[string]string{"k&<>": `v "&" \`}, TimeCreated: at, Updated: at},
	}
	for _, o := range objs {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		if err := enc.Encode(reference("http://127.0.0.1:9199", o)); err != nil {
			t.Fatal(err)
		}
		got := appendGCSObject(nil, origin{"http://", "127.0.0.1:9199"}, o)
		if string(got)+"\n" != want.String() {
			t.Errorf("object %q:\n got %s\nwant %s", o.Name, got, want.String())
		}
	}
}

// TestAppendStampAndChars: the hand-written stamps and string escapes
// are what time.Format and encoding/json write, over random times (years
// 0 to 10999, in any zone) and random strings.
func TestAppendStampAndChars(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 7))
	for i := range 20000 {
		at := time.Unix(r.Int64N(347_000_000_000)-62_135_596_800, r.Int64N(1e9)).In(time.FixedZone("z", r.IntN(100_000)-50_000))
		if got, want := string(appendStamp([]byte("x"), at)), "x"+ts(at); got != want {
			t.Fatalf("time %v: %s, want %s", at, got, want)
		}
		b := make([]byte, r.IntN(20))
		for j := range b {
			b[j] = " azAZ09\"\\<>&/\x01\x7f\xc3\xa9\xff"[r.IntN(17)]
			if i%2 == 0 && b[j] >= 0x80 {
				b[j] = 'q' // half the strings ASCII only
			}
		}
		enc, _ := json.Marshal(string(b))
		if got := string(jsonstr.AppendChars([]byte("x"), string(b))); got != "x"+string(enc[1:len(enc)-1]) {
			t.Fatalf("string %q: %s, want %s", b, got, enc)
		}
	}
}

// TestPlainJSONString: a string decoded without encoding/json is what
// encoding/json decodes, and anything it cannot vouch for is left to it.
func TestPlainJSONString(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 13))
	const alphabet = "az/ .\"\\u0\x01\xc3\xa9\xff"
	for range 20000 {
		b := randomText(r, alphabet, 12)
		raw := json.RawMessage(b)
		if r.IntN(4) > 0 {
			raw = json.RawMessage(`"` + string(b) + `"`)
		}
		got, ok := plainJSONString(raw)
		if !ok {
			continue
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || got != want {
			t.Fatalf("%q: decoded %q, encoding/json %q (%v)", raw, got, want, err)
		}
	}
	if s, ok := plainJSONString(json.RawMessage(`"small/000001"`)); !ok || s != "small/000001" {
		t.Fatalf("a plain name: %q %v", s, ok)
	}
}

// TestConditions: preconditions come from the query (its keys escaped or
// not) and, for the destination, from the XML API's headers; a bad value
// is named, the same one whatever else is bad.
func TestConditions(t *testing.T) {
	req := func(query string, header ...string) *http.Request {
		r := httptest.NewRequest("GET", "/storage/v1/b/b/o/x?"+query, nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		return r
	}
	val := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	for _, tc := range []struct {
		r      *http.Request
		source bool
		want   string // GenerationMatch GenerationNotMatch MetagenerationMatch MetagenerationNotMatch, or the error
	}{
		{req("alt=json"), false, "- - - -"},
		{req("ifGenerationMatch=5&ifMetagenerationNotMatch=2"), false, "5 - - 2"},
		{req("%69fGenerationNotMatch=7"), false, "- 7 - -"},
		{req("ifSourceGenerationMatch=3&ifGenerationMatch=4"), true, "3 - - -"},
		{req("", "X-Goog-If-Metageneration-Match", "9"), false, "- - 9 -"},
		{req("", "X-Goog-If-Metageneration-Match", "9"), true, "- - - -"},
		{req("ifMetagenerationMatch=x&ifGenerationMatch=-1"), false, `Invalid value for ifGenerationMatch: "-1".`},
	} {
		c, err := conditions(tc.r, tc.source)
		got := val(c.GenerationMatch) + " " + val(c.GenerationNotMatch) + " " + val(c.MetagenerationMatch) + " " + val(c.MetagenerationNotMatch)
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s (source %v): %s, want %s", tc.r.URL, tc.source, got, tc.want)
		}
	}
}

// TestReadRequestGeneration: the generation read from the query, its key
// escaped or not, and none without it.
func TestReadRequestGeneration(t *testing.T) {
	for query, want := range map[string]int64{"alt=json": 0, "generation=12": 12, "alt=media&%67eneration=7": 7, "ifMetagenerationMatch=1": 0} {
		rr, err := readRequest(httptest.NewRequest("GET", "/b/o?"+query, nil), "b", "o")
		if err != nil || rr.Generation != want {
			t.Errorf("%s: generation %d (%v), want %d", query, rr.Generation, err, want)
		}
	}
	if _, err := readRequest(httptest.NewRequest("GET", "/b/o?generation=x", nil), "b", "o"); err == nil {
		t.Error("generation=x: no error")
	}
}

// TestObjectFieldsMatchesUnmarshal: objectFields gives json.Unmarshal's
// map and error.
func TestObjectFieldsMatchesUnmarshal(t *testing.T) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "a":"x" } `, `{"name":"a\u00e9\"b","k\u0041":null,"\xff":true}`, `{"metadata":{"a":{"b":1}}}`,
		`null`, `[]`, `5`, `{`, `{"a":1,}`, `{"a" 1}`, ``, `  `, `{"a":1}x`, `{"a":1e400}`, `{"a":-0.5e-3,"b":false}`} {
		checkObjectFields(t, []byte(s))
	}
}

func checkObjectFields(t *testing.T, b []byte) {
	t.Helper()
	var want map[string]json.RawMessage
	werr := json.Unmarshal(b, &want)
	got, err := objectFields(b)
	if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: objectFields %q %v, json.Unmarshal %q %v", b, got, err, want, werr)
	}
}

func FuzzObjectFieldsMatchesUnmarshal(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `{"a\u0000":"\ud800"}`, `{"metadata":{"k":"v","n":null}}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkObjectFields)
}

// queryCases are raw queries whose keys query.Get must read as
// url.Values does: escapes in keys and values, '+', repeated keys, bad
// escapes and semicolons (whose pairs ParseQuery drops), empty pairs and
// values, keys without '='.
var queryCases = []string{
	"",
	"alt=json&prettyPrint=false&projection=full&uploadType=multipart",
	"alt=json&name=small%2F000001&prettyPrint=false&projection=full&uploadType=multipart",
	"name=a+b&name=second",
	"name=%zz&name=second",
	"na%6De=escaped+key",
	"n%zzame=x&name=y",
	"name;x=1&name=2",
	"&&name=&alt",
	"alt&alt=media",
	"ifGenerationMatch=0&ifGenerationMatch=5",
	"a=1;b=2&generation=7",
	"=v&name=%",
	"upload_id=abc%20def&upload_id=",
	strings.Repeat("k=v&", manyPairs+1) + "name=many",
}

// TestQueryGetMatchesValues compares query.Get with url.Values' Get of
// URL.Query for every key a case has, and keys it does not.
func TestQueryGetMatchesValues(t *testing.T) {
	for _, raw := range queryCases {
		checkQueryGet(t, raw)
	}
}

func checkQueryGet(t *testing.T, raw string) {
	t.Helper()
	want := (&url.URL{RawQuery: raw}).Query()
	keys := []string{"", "name", "alt", "generation", "upload_id", "ifGenerationMatch", "missing", "k", "a"}
	for k := range want {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if got := query(raw).Get(k); got != want.Get(k) {
			t.Errorf("query(%q).Get(%q) = %q, url.Values has %q", raw, k, got, want.Get(k))
		}
	}
}

// FuzzQueryGetMatchesValues is TestQueryGetMatchesValues over any query.
func FuzzQueryGetMatchesValues(f *testing.F) {
	for _, raw := range queryCases {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkQueryGet(t, raw) })
}

// TestQueryGetAllocatesNothing: a client's query without escapes costs
// no allocation to read (the reason query replaces url.Values).
func TestQueryGetAllocatesNothing(t *testing.T) {
	q := query("alt=json&prettyPrint=false&projection=full&uploadType=multipart&ifGenerationMatch=0")
	if n := testing.AllocsPerRun(100, func() {
		_ = q.Get("uploadType")
		_ = q.Get("ifGenerationMatch")
		_ = q.Get("upload_id")
	}); n != 0 {
		t.Fatalf("Get allocates %v times", n)
	}
}

// TestAppendPathSegmentMatchesPathEscape: appendPathSegment writes what
// jsonstr.AppendChars writes of url.PathEscape's string, for every byte
// alone and over random strings of the bytes that matter (reserved,
// HTML-special, controls, UTF-8 and invalid UTF-8).
func TestAppendPathSegmentMatchesPathEscape(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := string(appendPathSegment([]byte("x"), s)), "x"+string(jsonstr.AppendChars(nil, url.PathEscape(s))); got != want {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	}
	for c := range 256 {
		check(string([]byte{byte(c)}))
	}
	r := rand.New(rand.NewPCG(27, 9))
	const chars = "az09-_.~$&+,/:;=?@ %<>\"\\#\x00\x1f\x7f\xc3\xa9\xe2\x98\x83\xff"
	for range 20000 {
		check(string(randomText(r, chars, 24)))
	}
}

// randomText is up to max-1 bytes drawn from alphabet.
func randomText(r *rand.Rand, alphabet string, max int) []byte {
	b := make([]byte, r.IntN(max))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}
