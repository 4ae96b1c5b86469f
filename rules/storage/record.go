package storage

import (
	"sync"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/service"
	"github.com/pyric/pyric/rules/value"
)

// requestRecord is `request` as a value.Record: its fields are read from
// the Request when a rule reads them, so a decision builds no map for it;
// the method, path and time are boxed in place. The records of one
// decision are allocated together (records).
type requestRecord struct {
	method   value.String
	path     value.Path
	now      value.Timestamp
	auth     value.Value // bound when hasAuth
	hasAuth  bool
	resource value.Value // request.resource, nil when unbound
	once     sync.Once
	m        value.Map
}

func (*requestRecord) Type() value.Type { return value.TMap }

func (r *requestRecord) Field(name string) (value.Value, bool) {
	switch name {
	case "method":
		return value.BoxString(&r.method), true
	case "path":
		return value.BoxPath(&r.path), true
	case "time":
		return value.BoxTimestamp(&r.now), true
	case "auth":
		return r.auth, r.hasAuth
	case "resource":
		return r.resource, r.resource != nil
	}
	return nil, false
}

func (r *requestRecord) Map() value.Map {
	r.once.Do(func() {
		r.m = value.FieldsMap(r.Field, 5, "method", "path", "time", "auth", "resource")
	})
	return r.m
}

// objectRecord is an Object as rules see it (resource, request.resource)
// as a value.Record with Object.Map's entries: a property is read from the
// Object when a rule reads it, boxed in place in the record, and custom
// metadata is converted on first read.
type objectRecord struct {
	o       *Object
	testAPI bool
	strs    [len(objectStrings)]value.String
	ints    [3]value.Int // size, generation, metageneration
	times   [2]value.Timestamp
	md      value.Map // metadata, built on first read
	once    sync.Once
	m       value.Map
}

// objectStrings are an Object's string properties by rules name.
var objectStrings = [...]struct {
	name string
	get  func(*Object) string
}{
	{"name", func(o *Object) string { return o.Name }},
	{"bucket", func(o *Object) string { return o.Bucket }},
	{"contentType", func(o *Object) string { return o.ContentType }},
	{"md5Hash", func(o *Object) string { return o.MD5Hash }},
	{"crc32c", func(o *Object) string { return o.CRC32C }},
	{"etag", func(o *Object) string { return o.ETag }},
	{"cacheControl", func(o *Object) string { return o.CacheControl }},
	{"contentDisposition", func(o *Object) string { return o.ContentDisposition }},
	{"contentEncoding", func(o *Object) string { return o.ContentEncoding }},
	{"contentLanguage", func(o *Object) string { return o.ContentLanguage }},
}

// reset makes r stand for o; values read from r before must no longer be
// in use (properties are boxed in place).
func (r *objectRecord) reset(o *Object, testAPI bool) {
	*r = objectRecord{o: o, testAPI: testAPI}
	r.ints = [3]value.Int{value.Int(o.Size), value.Int(o.Generation), value.Int(o.Metageneration)}
	r.times = [2]value.Timestamp{{Time: o.TimeCreated.UTC()}, {Time: o.Updated.UTC()}}
}

func (*objectRecord) Type() value.Type { return value.TMap }

func (r *objectRecord) Field(name string) (value.Value, bool) {
	o := r.o
	switch name {
	case "size":
		return value.BoxInt(&r.ints[0]), true
	case "generation", "metageneration":
		i := 1
		if name == "metageneration" {
			i = 2
		}
		if r.ints[i] == 0 {
			return nil, false
		}
		return value.BoxInt(&r.ints[i]), true
	case "timeCreated", "updated":
		i := 0
		if name == "updated" {
			i = 1
		}
		if r.times[i].IsZero() {
			return nil, false
		}
		return value.BoxTimestamp(&r.times[i]), true
	case "metadata":
		if o.Metadata == nil && r.testAPI {
			return nil, false
		}
		if r.md == nil {
			r.md = metadataMap(o.Metadata)
		}
		return r.md, true
	}
	for i := range objectStrings {
		if objectStrings[i].name == name {
			s := objectStrings[i].get(o)
			if s == "" {
				return nil, false
			}
			r.strs[i] = value.String(s)
			return value.BoxString(&r.strs[i]), true
		}
	}
	return nil, false
}

func (r *objectRecord) Map() value.Map {
	r.once.Do(func() { r.m = r.o.Map(r.testAPI) })
	return r.m
}

// records are the values one decision binds, allocated together with
// its first results (scratch).
type records struct {
	scratch  eval.Scratch
	request  requestRecord
	auth     service.AuthRecord
	incoming objectRecord // request.resource
	stored   objectRecord // resource
	vars     [2]eval.Var
}
