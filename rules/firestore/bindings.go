package firestore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/value"
)

// ErrNotMocked is what a Lookup returns, in Rules Test API mode, for a path
// the test case did not mock: the Test API answers "Function not found".
var ErrNotMocked = errors.New("no function mock for this path")

// Constraint is one filter of a list query: field op value.
type Constraint struct {
	Field string // dotted field path; __name__ for the document name
	Op    string // == != < <= > >= in not-in array-contains array-contains-any
	Value value.Value
}

// globals binds request and resource into vars (which must be empty) and
// returns them; own is the request's document path (request.path). The
// values are records in rec (a new decision's, zero), read field by field, so no
// map is built per request. An unbound name (the Test API's absent auth
// or resource) is left out.
func (r *Ruleset) globals(req *Request, db string, own value.Path, rec *records, vars []eval.Var) []eval.Var {
	rq := &rec.request
	// Field by field: rec is part of a new decision (zero).
	rq.req, rq.own, rq.now = req, own, value.Timestamp{Time: req.Time.UTC()}
	switch {
	case req.Auth != nil:
		rec.auth.Reset(req.Auth)
		rq.auth, rq.hasAuth = &rec.auth, true
	case !req.TestAPI:
		rq.auth, rq.hasAuth = value.Null{}, true
	}
	if (req.Method == Create || req.Method == Update) && req.After != nil {
		rec.resource.reset(req.After, !req.TestAPI, own)
		rq.resource = &rec.resource
	}
	vars = append(vars, eval.Var{Name: "request", Value: rq})
	switch {
	case req.Method == List && !req.TestAPI:
		// Any document the query could return (see proof.go).
		var cs []Constraint
		if req.Query != nil {
			cs = req.Query.Constraints
		}
		vars = append(vars, eval.Var{Name: "resource", Value: value.Map{"data": queryDocument(cs)}})
	case req.Resource != nil:
		name := own
		if !req.TestAPI && strings.Trim(req.Resource.Path, "/") != strings.Trim(req.Path, "/") {
			name = docPath(db, req.Resource.Path)
		}
		rec.stored.reset(req.Resource.Data, !req.TestAPI, name)
		vars = append(vars, eval.Var{Name: "resource", Value: &rec.stored})
	case !req.TestAPI:
		vars = append(vars, eval.Var{Name: "resource", Value: value.Null{}})
	}
	return vars
}

// methodValues are the request methods as values, boxed once.
var methodValues = map[string]value.Value{Get: value.String(Get), List: value.String(List),
	Create: value.String(Create), Update: value.String(Update), Delete: value.String(Delete)}

func methodValue(m string) value.Value {
	if v, ok := methodValues[m]; ok {
		return v
	}
	return value.String(m)
}

func docPath(db, rel string) value.Path {
	segs := docSegments(db, strings.Trim(rel, "/"), 0)
	return value.Path{Absolute: true, Segments: segs}
}

// docSegments splits a document path relative to the documents root into
// the segments of its full name, in one allocation with room for extra
// more.
func docSegments(db, rel string, extra int) []string { return docSegmentsIn(nil, db, rel, extra) }

// docSegmentsIn is docSegments in buf's array when it has room.
func docSegmentsIn(buf []string, db, rel string, extra int) []string {
	n := 3
	if rel != "" {
		n += strings.Count(rel, "/") + 1
	}
	var segs []string
	if n+extra <= cap(buf) {
		segs = buf[: 3 : n+extra]
	} else {
		segs = make([]string, 3, n+extra)
	}
	segs[0], segs[1], segs[2] = "databases", db, "documents"
	for rel != "" {
		i := strings.IndexByte(rel, '/')
		if i < 0 {
			segs = append(segs, rel)
			break
		}
		segs = append(segs, rel[:i])
		rel = rel[i+1:]
	}
	return segs
}

// lookups implements get/exists/getAfter/existsAfter for one request, with
// production's limit on distinct documents read.
type lookups struct {
	req   *Request
	db    string
	max   int
	seen  []string // distinct documents read (at most max)
	reads []eval.Read
	// The first read, document and get() result live in the lookups (in
	// the decision), which stays within 1792 bytes.
	buf   [1]eval.Read
	seenB [1]string
	doc   docRecord // in use once its data is set
}

// init prepares the lookups of a new decision (l is zero).
func (l *lookups) init(req *Request, db string) {
	max := MaxLookupsSingle
	if req.Batch {
		max = MaxLookupsBatch
	}
	// Field by field: l is part of a new decision (zero).
	l.req, l.db, l.max = req, db, max
	l.reads, l.seen = l.buf[:0], l.seenB[:0]
}

func (l *lookups) count() int { return len(l.seen) }

// see records a read of rel, false when it would exceed the limit.
func (l *lookups) see(rel string) bool {
	for _, s := range l.seen {
		if s == rel {
			return true
		}
	}
	if len(l.seen) >= l.max {
		return false
	}
	l.seen = append(l.seen, rel)
	return true
}

// HasFunc implements eval.ServiceFuncs.
func (l *lookups) HasFunc(name string) bool {
	switch name {
	case "get", "exists", "getAfter", "existsAfter":
		return true
	}
	return false
}

// CallFunc implements eval.ServiceFuncs, recording each lookup.
func (l *lookups) CallFunc(name string, args []value.Value) value.Value {
	v := l.call(name, args)
	if len(l.reads) < eval.MaxReads {
		var p value.Value
		if len(args) > 0 {
			p = args[0]
		}
		l.reads = append(l.reads, eval.Read{Function: name, Path: p, Result: v})
	}
	return v
}

func serviceCallError(fn string, p value.Path) *value.Error {
	return value.Errorf("Service call error. Function: [%s], Argument: [path_value %s].", fn, p.String())
}

func (l *lookups) call(fn string, args []value.Value) value.Value {
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
	segs := p.Segments
	if len(segs) < 5 || segs[0] != "databases" || segs[2] != "documents" || (len(segs)-3)%2 != 0 || segs[1] != l.db {
		return serviceCallError(fn, p)
	}
	rel := strings.Join(segs[3:], "/")
	after := fn == "getAfter" || fn == "existsAfter"
	if !l.see(rel) {
		return &value.Error{Kind: value.Exhausted, Offset: -1,
			Message: fmt.Sprintf("Exceeded the maximum of %d document lookups (get, exists, getAfter, existsAfter) for this request.", l.max)}
	}
	var data value.Map
	var exists bool
	var err error
	switch {
	case after && rel == strings.Trim(l.req.Path, "/") && l.req.Method != Get && l.req.Method != List:
		if l.req.Method != Delete && l.req.After != nil {
			data, exists = l.req.After, true
		}
	case after && l.req.GetAfter != nil && l.req.Method != Get && l.req.Method != List:
		data, exists, err = l.req.GetAfter.Lookup(rel)
	// In a read there is no pending write: Google's engine answers
	// getAfter() and existsAfter() from committed state, as get() and
	// exists() do (differential cases getAfter(/…/seed/s1).data.v == 7 and
	// existsAfter(request.path) in a get).
	case l.req.Get != nil:
		data, exists, err = l.req.Get.Lookup(rel)
	default:
		err = ErrNotMocked
	}
	if err != nil {
		if l.req.TestAPI || errors.Is(err, ErrNotMocked) {
			return value.ErrFunctionNotFound(fn)
		}
		return serviceCallError(fn, p)
	}
	if fn == "exists" || fn == "existsAfter" {
		return value.Bool(exists)
	}
	if !exists {
		if l.req.TestAPI {
			return value.ErrFunctionNotFound(fn)
		}
		return serviceCallError(fn, p)
	}
	if data == nil {
		data = value.Map{}
	}
	// The first result lives in the lookups (the decision); results are
	// values, so each get() has its own.
	res := &l.doc
	if res.data != nil {
		res = &docRecord{}
	}
	var name value.Path
	if !l.req.TestAPI {
		if slices.Contains(segs, "") {
			name = docPath(l.db, rel)
		} else {
			// p is the path as asked, already a full document name.
			name = value.Path{Absolute: true, Segments: segs}
		}
	}
	res.reset(data, !l.req.TestAPI, name)
	return res
}
