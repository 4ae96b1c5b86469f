package firestore

import (
	"sync"

	"github.com/pyric/pyric/rules/service"
	"github.com/pyric/pyric/rules/value"
)

// requestRecord is `request` as a value.Record: its fields are read from
// the Request when a rule reads them, so a decision builds no map for it;
// strings, the time and paths are boxed in place (value.BoxString), so a
// read allocates nothing. The records of one decision live in its
// Decision, one allocation for all of them.
type requestRecord struct {
	req      *Request
	own      value.Path
	auth     value.Value // bound when hasAuth
	hasAuth  bool
	resource value.Value     // request.resource, nil when absent
	now      value.Timestamp // request.time, boxed in place when read
	query    value.Value     // built on first read (list requests)
	once     sync.Once
	m        value.Map
}

func (*requestRecord) Type() value.Type { return value.TMap }

func (r *requestRecord) Field(name string) (value.Value, bool) {
	switch name {
	case "method":
		return methodValue(r.req.Method), true
	case "path":
		return value.BoxPath(&r.own), true
	case "time":
		return value.BoxTimestamp(&r.now), true
	case "auth":
		return r.auth, r.hasAuth
	case "resource":
		return r.resource, r.resource != nil
	case "query":
		if r.req.Method != List {
			return nil, false
		}
		if r.query == nil {
			r.query = queryValue(r.req.Query)
		}
		return r.query, true
	}
	return nil, false
}

func (r *requestRecord) Map() value.Map {
	r.once.Do(func() {
		// Field answers query for list requests only.
		r.m = value.FieldsMap(r.Field, 6, "method", "path", "time", "auth", "resource", "query")
	})
	return r.m
}

// queryValue is request.query of a list request.
func queryValue(q *Query) value.Value {
	if q == nil {
		q = &Query{}
	}
	var limit value.Value = value.Null{}
	if q.Limit != nil {
		limit = value.Int(*q.Limit)
	}
	order := value.Map{}
	for f, dir := range q.OrderBy {
		order[f] = value.String(dir)
	}
	return value.Map{"limit": limit, "offset": value.Int(q.Offset), "orderBy": order, "allDescendants": value.Bool(q.AllDescendants)}
}

// docRecord is a document as rules see it (resource, request.resource, a
// get() result) as a value.Record: data, and for real documents id and
// __name__, boxed in place when read.
type docRecord struct {
	data     value.Map
	identity bool         // id and __name__ are present
	name     value.Path   // the document's full name, when identity
	id       value.String // the name's last segment; id and name are boxed in place
	once     sync.Once
	m        value.Map
}

// reset makes d stand for a document; values read from d before must no
// longer be in use (id and __name__ are boxed in place).
func (d *docRecord) reset(data value.Map, identity bool, name value.Path) {
	d.data, d.identity, d.name, d.id, d.m = data, identity, name, "", nil
	if n := len(name.Segments); n > 0 {
		d.id = value.String(name.Segments[n-1])
	}
	d.once = sync.Once{}
}

func (*docRecord) Type() value.Type { return value.TMap }

func (d *docRecord) Field(name string) (value.Value, bool) {
	switch name {
	case "data":
		return d.data, true
	case "id":
		if !d.identity || len(d.name.Segments) == 0 {
			return nil, false
		}
		return value.BoxString(&d.id), true
	case "__name__":
		if !d.identity {
			return nil, false
		}
		return value.BoxPath(&d.name), true
	}
	return nil, false
}

func (d *docRecord) Map() value.Map {
	d.once.Do(func() {
		m := make(value.Map, 3)
		for _, k := range [...]string{"data", "id", "__name__"} {
			if v, ok := d.Field(k); ok {
				m[k] = v
			}
		}
		d.m = m
	})
	return d.m
}

// records are the values one decision binds, held in its Decision.
type records struct {
	request  requestRecord
	auth     service.AuthRecord
	resource docRecord // request.resource
	stored   docRecord // resource
}
