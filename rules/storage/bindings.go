package storage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/value"
)

// ErrNotMocked is what a FirestoreLookup returns, in Rules Test API mode, for
// a path the test case did not mock: the Test API answers "Function not
// found".
var ErrNotMocked = errors.New("no function mock for this path")

// globals binds request and resource for one request into the records
// of the decision: read field by field, no map is built per request. An
// unbound name (the Test API's absent resource) is left out.
func globals(req *Request, segs []string, rec *records) []eval.Var {
	rq := &rec.request
	*rq = requestRecord{method: value.String(req.Method), path: value.Path{Absolute: true, Segments: segs},
		now: value.Timestamp{Time: req.Time.UTC()}}
	switch {
	case req.Auth != nil:
		rec.auth.Reset(req.Auth)
		rq.auth, rq.hasAuth = &rec.auth, true
	case !req.TestAPI:
		rq.auth, rq.hasAuth = value.Null{}, true
	}
	write := req.Method == Create || req.Method == Update
	switch {
	case write && req.Incoming != nil:
		rec.incoming.reset(req.Incoming, req.TestAPI)
		rq.resource = &rec.incoming
	case !req.TestAPI:
		// request.resource is null on reads and deletes (and on a write
		// the caller describes no object for).
		rq.resource = value.Null{}
	}
	vars := append(rec.vars[:0], eval.Var{Name: "request", Value: rq})
	switch {
	case req.Resource != nil:
		rec.stored.reset(req.Resource, req.TestAPI)
		vars = append(vars, eval.Var{Name: "resource", Value: &rec.stored})
	case !req.TestAPI:
		vars = append(vars, eval.Var{Name: "resource", Value: value.Null{}})
	}
	return vars
}

// Map returns the object as the rules map resource or request.resource
// holds. testAPI selects the Rules Test API's convention for absent custom
// metadata (absent rather than empty).
func (o *Object) Map(testAPI bool) value.Map {
	m := value.Map{"size": value.Int(o.Size)}
	str := func(key, s string) {
		if s != "" {
			m[key] = value.String(s)
		}
	}
	str("name", o.Name)
	str("bucket", o.Bucket)
	str("contentType", o.ContentType)
	str("md5Hash", o.MD5Hash)
	str("crc32c", o.CRC32C)
	str("etag", o.ETag)
	str("cacheControl", o.CacheControl)
	str("contentDisposition", o.ContentDisposition)
	str("contentEncoding", o.ContentEncoding)
	str("contentLanguage", o.ContentLanguage)
	if !o.TimeCreated.IsZero() {
		m["timeCreated"] = value.Timestamp{Time: o.TimeCreated.UTC()}
	}
	if !o.Updated.IsZero() {
		m["updated"] = value.Timestamp{Time: o.Updated.UTC()}
	}
	if o.Generation != 0 {
		m["generation"] = value.Int(o.Generation)
	}
	if o.Metageneration != 0 {
		m["metageneration"] = value.Int(o.Metageneration)
	}
	if o.Metadata != nil || !testAPI {
		m["metadata"] = metadataMap(o.Metadata)
	}
	return m
}

// metadataMap is custom metadata as a rules map.
func metadataMap(md map[string]string) value.Map {
	out := make(value.Map, len(md))
	for k, v := range md {
		out[k] = value.String(v)
	}
	return out
}

// lookups implements firestore.get() and firestore.exists() for one
// request: production's limit on distinct documents, with each document
// read at most once.
type lookups struct {
	req   *Request
	max   int
	cache map[string]lookupResult
}

type lookupResult struct {
	data   value.Map
	exists bool
	err    error
}

func newLookups(req *Request) *lookups {
	max := MaxFirestoreLookups
	if req.TestAPI {
		max = testAPIMaxLookups
	}
	return &lookups{req: req, max: max}
}

func (l *lookups) count() int { return len(l.cache) }

func (l *lookups) funcs() map[string]eval.Builtin {
	return map[string]eval.Builtin{
		"get":    func(a []value.Value) value.Value { return l.call("get", a) },
		"exists": func(a []value.Value) value.Value { return l.call("exists", a) },
	}
}

func serviceCallError(fn string, p value.Path) *value.Error {
	return value.Errorf("Service call error. Function: [%s], Argument: [path_value %s].", fn, p.String())
}

func (l *lookups) call(short string, args []value.Value) value.Value {
	fn := "firestore." + short
	if len(args) != 1 {
		return value.Errorf("Incorrect number of arguments supplied to function: %s.", fn)
	}
	p, ok := args[0].(value.Path)
	if !ok {
		return value.ErrUnsupportedOp(fn+"("+args[0].Type().String()+")", fn+"(path)")
	}
	if p.Partial {
		return value.ErrPartialPath()
	}
	// Only documents of the default database are reachable from Storage
	// rules: /databases/(default)/documents/<collection>/<doc>[/…].
	segs := p.Segments
	if len(segs) < 5 || segs[0] != "databases" || segs[1] != "(default)" || segs[2] != "documents" || (len(segs)-3)%2 != 0 {
		return serviceCallError(fn, p)
	}
	rel := strings.Join(segs[3:], "/")
	res, cached := l.cache[rel]
	if !cached {
		if len(l.cache) >= l.max {
			return &value.Error{Kind: value.Exhausted, Offset: -1,
				Message: fmt.Sprintf("Exceeded the maximum of %d distinct Firestore documents (firestore.get, firestore.exists) for this request.", l.max)}
		}
		switch {
		case l.req.Firestore != nil:
			res.data, res.exists, res.err = l.req.Firestore.Lookup(rel)
		default:
			res.err = ErrNotMocked
		}
		if l.cache == nil {
			l.cache = map[string]lookupResult{}
		}
		l.cache[rel] = res
	}
	if res.err != nil {
		if l.req.TestAPI {
			return value.ErrFunctionNotFound(fn)
		}
		return serviceCallError(fn, p)
	}
	if short == "exists" {
		return value.Bool(res.exists)
	}
	if !res.exists {
		if l.req.TestAPI {
			return value.ErrFunctionNotFound(fn)
		}
		return serviceCallError(fn, p)
	}
	data := res.data
	if data == nil {
		data = value.Map{}
	}
	doc := value.Map{"data": data}
	if !l.req.TestAPI {
		// A real document carries its id and name; the Test API's mocked
		// ones carry data only.
		doc["id"] = value.String(segs[len(segs)-1])
		doc["__name__"] = value.Path{Absolute: true, Segments: append([]string(nil), segs...)}
	}
	return doc
}
