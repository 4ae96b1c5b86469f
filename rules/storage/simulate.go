package storage

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/service"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/value"
)

// Case is one simulator test case, in the Rules Test API's vocabulary (see
// the conformance README): method, path of the object inside the bucket,
// bucket, auth, resource (request.resource: the object being written),
// existingResource (resource: the stored object; absent = no object),
// functionMocks for firestore.get()/firestore.exists(), and requestTime.
type Case struct {
	Description      string          `json:"description"`
	Expectation      string          `json:"expectation"`
	Method           string          `json:"method"`
	Path             string          `json:"path"`
	Bucket           string          `json:"bucket,omitempty"`
	Auth             json.RawMessage `json:"auth,omitempty"`
	Resource         json.RawMessage `json:"resource,omitempty"`
	ExistingResource json.RawMessage `json:"existingResource,omitempty"`
	FunctionMocks    []FunctionMock  `json:"functionMocks,omitempty"`
	RequestTime      string          `json:"requestTime,omitempty"`
}

// FunctionMock supplies a firestore.get() or firestore.exists() result for
// a document path. Function is "firestore.get" or "firestore.exists" (the
// bare "get" and "exists" are accepted too); Path is relative to the
// documents root (users/alice) or absolute
// (/databases/(default)/documents/users/alice).
type FunctionMock struct {
	Function string          `json:"function"`
	Path     string          `json:"path"`
	Result   json.RawMessage `json:"result"`
}

// Input is what `pyric storage rules simulate --stdin` reads.
type Input = sim.Input[Case]

// ParseInput decodes simulator input, keeping numbers exact.
func ParseInput(b []byte) (*Input, error) { return sim.ParseInput[Case](b) }

// Simulate runs every case against the ruleset with the Rules Test API's
// conventions, so verdicts are comparable with production's recorded ones.
// now is request.time for cases without requestTime. A malformed case is
// an error naming it (testCases[i].field: problem); no case runs then.
func (r *Ruleset) Simulate(cases []Case, now time.Time) (*sim.Report, error) {
	return sim.Run(cases, func(c *Case) (func() sim.Case, error) {
		req, err := c.Request(now)
		if err != nil {
			return nil, err
		}
		return func() sim.Case {
			return r.Decide(req).Case(c.Description, sim.Outcome(strings.ToUpper(c.Expectation)))
		}, nil
	})
}

// Request builds the Rules Test API mode Request a case describes. Errors
// name the offending field ("existingResource.timeCreated: …").
func (c *Case) Request(now time.Time) (*Request, error) {
	method, t, err := service.CaseBasics(c.Method, c.Expectation, c.RequestTime, now)
	if err != nil {
		return nil, err
	}
	path, bucket := c.Path, c.Bucket
	if path == "" && method != List {
		return nil, fmt.Errorf("path: missing (an object path inside the bucket, such as uploads/a.png)")
	}
	// The Rules Test API's own form /b/<bucket>/o/<object> is accepted too.
	if rest, ok := strings.CutPrefix(path, "/b/"); ok {
		if b, obj, ok := strings.Cut(rest, "/o/"); ok && b != "" && !strings.Contains(b, "/") {
			if bucket != "" && bucket != b {
				return nil, fmt.Errorf("path: names bucket %q but bucket is %q", b, bucket)
			}
			path, bucket = obj, b
		}
	}
	req := &Request{Method: method, Bucket: bucket, Path: strings.Trim(path, "/"), Time: t, TestAPI: true}
	if req.Auth, err = service.CaseAuth(c.Auth, nil); err != nil {
		return nil, err
	}
	if sim.Present(c.Resource) {
		o, err := decodeObject(c.Resource)
		if err != nil {
			return nil, fmt.Errorf("resource.%v", err)
		}
		req.Incoming = o
	}
	if sim.Present(c.ExistingResource) {
		o, err := decodeObject(c.ExistingResource)
		if err != nil {
			return nil, fmt.Errorf("existingResource.%v", err)
		}
		req.Resource = o
	}
	mocks := service.Mocks{}
	for i, m := range c.FunctionMocks {
		p := service.MockPath(m.Path)
		if p == "" {
			return nil, fmt.Errorf("functionMocks[%d].path: missing (a document path such as users/alice)", i)
		}
		switch strings.TrimPrefix(m.Function, "firestore.") {
		case "get":
			data, err := docData(m.Result)
			if err != nil {
				return nil, fmt.Errorf("functionMocks[%d].result: a firestore.get mock's result is the document's data: %v", i, err)
			}
			mocks.Get(p, data)
		case "exists":
			b, err := service.MockExists(m.Result)
			if err != nil {
				return nil, fmt.Errorf("functionMocks[%d].result: a firestore.exists mock's result must be true or false", i)
			}
			mocks.Exists(p, b)
		default:
			return nil, fmt.Errorf("functionMocks[%d].function: %q is not firestore.get or firestore.exists", i, m.Function)
		}
	}
	req.Firestore = FirestoreLookupFunc(mocks.Lookup(ErrNotMocked))
	return req, nil
}

func docData(raw json.RawMessage) (value.Map, error) {
	var m map[string]any
	if err := sim.Decode(raw, &m); err != nil {
		return nil, fmt.Errorf("must be a JSON object: %v", err)
	}
	v, err := value.FromGo(m)
	if err != nil {
		return nil, err
	}
	out, _ := v.(value.Map)
	if out == nil {
		out = value.Map{}
	}
	return out, nil
}

// objectFields are the properties a case may give an object, as production
// names them.
var objectFields = []string{"name", "bucket", "size", "contentType", "metadata", "md5Hash", "crc32c", "etag",
	"timeCreated", "updated", "generation", "metageneration",
	"cacheControl", "contentDisposition", "contentEncoding", "contentLanguage"}

// fieldHints explain names people reach for that Storage objects don't have.
var fieldHints = map[string]string{
	"timeUpdated":    "the last-update time is updated",
	"fullPath":       "the full object path is name",
	"customMetadata": "custom metadata is metadata",
	"data":           "Storage objects have no data; use size, contentType and metadata",
}

// decodeObject reads an object description strictly: an unknown property
// is an error rather than a property rules could never see.
func decodeObject(raw json.RawMessage) (*Object, error) {
	var m map[string]json.RawMessage
	if err := sim.Decode(raw, &m); err != nil {
		return nil, fmt.Errorf("json: must be an object such as {\"size\": 1024, \"contentType\": \"image/png\"}")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := &Object{}
	for _, k := range keys {
		raw := m[k]
		if !sim.Present(raw) {
			continue
		}
		var err error
		switch k {
		case "name":
			err = decodeString(raw, &o.Name)
		case "bucket":
			err = decodeString(raw, &o.Bucket)
		case "contentType":
			err = decodeString(raw, &o.ContentType)
		case "md5Hash":
			err = decodeString(raw, &o.MD5Hash)
		case "crc32c":
			err = decodeString(raw, &o.CRC32C)
		case "etag":
			err = decodeString(raw, &o.ETag)
		case "cacheControl":
			err = decodeString(raw, &o.CacheControl)
		case "contentDisposition":
			err = decodeString(raw, &o.ContentDisposition)
		case "contentEncoding":
			err = decodeString(raw, &o.ContentEncoding)
		case "contentLanguage":
			err = decodeString(raw, &o.ContentLanguage)
		case "size":
			o.Size, err = decodeInt(raw)
		case "generation":
			o.Generation, err = decodeInt(raw)
		case "metageneration":
			o.Metageneration, err = decodeInt(raw)
		case "timeCreated":
			o.TimeCreated, err = decodeTime(raw)
		case "updated":
			o.Updated, err = decodeTime(raw)
		case "metadata":
			if err = sim.Decode(raw, &o.Metadata); err != nil {
				err = fmt.Errorf("custom metadata is an object of string values")
			}
		default:
			msg := fmt.Sprintf("not a property of a Storage object (known: %s)", strings.Join(objectFields, ", "))
			if h, ok := fieldHints[k]; ok {
				msg = "not a property of a Storage object: " + h
			}
			return nil, fmt.Errorf("%s: %s", k, msg)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
	}
	return o, nil
}

func decodeString(raw json.RawMessage, s *string) error {
	if err := json.Unmarshal(raw, s); err != nil {
		return fmt.Errorf("must be a string")
	}
	return nil
}

// decodeInt accepts a JSON integer or, as GCS writes int64 fields, a
// string of digits.
func decodeInt(raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := sim.Decode(raw, &n); err == nil {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return i, nil
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("must be an integer")
}

func decodeTime(raw json.RawMessage) (time.Time, error) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return time.Time{}, fmt.Errorf("must be an ISO-8601 string such as 2026-01-02T03:04:05Z")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not ISO-8601 (e.g. 2026-01-02T03:04:05Z)", s)
	}
	return t, nil
}

// FromTestAPI fills the case from the Rules Test API's test case shape:
// request.path is /b/<bucket>/o/<object path>, request.resource the
// object being written, resource the stored one, and functionMocks mock
// firestore.get/firestore.exists with exactValue arguments.
func (c *Case) FromTestAPI(tc sim.TestAPICase) error {
	c.Expectation, c.Method, c.Auth = tc.Expectation, tc.Request.Method, tc.Request.Auth
	p := strings.TrimPrefix(tc.Request.Path, "/")
	if rest, ok := strings.CutPrefix(p, "b/"); ok {
		bucket, object, found := strings.Cut(rest, "/o/")
		if !found {
			bucket, object = strings.TrimSuffix(rest, "/o"), ""
		}
		c.Bucket = bucket
		if un, err := url.PathUnescape(object); err == nil {
			object = un
		}
		p = object
	}
	c.Path = p
	t, err := tc.Time()
	if err != nil {
		return err
	}
	c.RequestTime = t
	c.Resource, c.ExistingResource = tc.Request.Resource, tc.Resource
	for i, m := range tc.FunctionMocks {
		path, err := m.MockPath()
		if err != nil {
			return fmt.Errorf("functionMocks[%d].%v", i, err)
		}
		res, err := m.MockResult()
		if err != nil {
			return fmt.Errorf("functionMocks[%d].%v", i, err)
		}
		if strings.HasSuffix(m.Function, "get") {
			var r struct {
				Data json.RawMessage `json:"data"`
			}
			if json.Unmarshal(res, &r) == nil && sim.Present(r.Data) {
				res = r.Data
			}
		}
		c.FunctionMocks = append(c.FunctionMocks, FunctionMock{Function: m.Function, Path: path, Result: res})
	}
	return nil
}
