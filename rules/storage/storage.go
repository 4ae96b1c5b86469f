// Package storage binds the rules language to Cloud Storage for Firebase: it
// compiles a storage.rules file, builds request and resource for an object
// request, resolves firestore.get()/firestore.exists() through a lookup the
// caller supplies (no data store is imported here), decides the request with
// production's semantics, and explains the decision.
//
// Production has two modes and so does Decide. A real request (what the
// Storage server sends) sees resource == null when the object does not
// exist and request.auth == null when the caller is unauthenticated. The
// Rules Test API, whose verdicts the conformance data records and which the
// simulator follows (Request.TestAPI), leaves such bindings unbound instead:
// reading them is an error, so even `resource == null` denies.
//
// A Storage server compiles storage.rules once (Compile; a Ruleset is safe
// for concurrent use) and decides each request with Decide:
//
//	d := rs.Decide(&storage.Request{
//		Method:    storage.Update,         // get, list, create, update or delete
//		Bucket:    "demo.appspot.com",
//		Path:      "users/alice/a.png",    // the object (for list: the prefix)
//		Auth:      auth,                   // nil when unauthenticated
//		Resource:  stored,                 // nil when the object does not exist
//		Incoming:  after,                  // create/update: the complete object after the write
//		Time:      now,
//		Firestore: docs,                   // firestore.get()/exists(), at most 2 documents
//		NoTrace:   true,
//	})
//	if !d.Allowed() { /* 403, with d.Notes and d.Trace as the explanation */ }
//
// The simulator (Simulate, `pyric storage rules simulate`) builds the same
// Requests from test cases with TestAPI set.
package storage

import (
	"fmt"
	"github.com/pyric/pyric/rules/coverage"
	"strings"
	"time"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/service"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// Service is the service name a Storage ruleset declares.
const Service = "firebase.storage"

// DefaultBucket is the bucket a request names when it names none.
const DefaultBucket = "demo-pyric.appspot.com"

// MaxFirestoreLookups is production's limit on distinct Firestore documents
// one Storage request may read through firestore.get() and
// firestore.exists(); repeated reads of a document are served from the
// first and do not count again.
const MaxFirestoreLookups = 2

// testAPIMaxLookups is the limit in Rules Test API mode. The hosted Test API
// was observed allowing three distinct mocked firestore.exists() calls
// (features-firestore-rules §35 item 7), so the real-request limit of 2 does
// not hold there; we use Firestore's own per-request limit and add a note
// whenever an evaluation reads more than MaxFirestoreLookups documents.
const testAPIMaxLookups = 10

// Ruleset is a compiled storage.rules file. It is safe for concurrent use.
type Ruleset struct {
	prog *eval.Program
	// Warnings are the non-fatal diagnostics production reports too
	// (undefined functions and variables, unused lets, version 1, …).
	Warnings source.Diagnostics
}

// Compile parses and checks a rules file. It returns the ruleset and every
// diagnostic; the ruleset is nil when any diagnostic is an error.
func Compile(file *source.File) (*Ruleset, source.Diagnostics) {
	prog, diags := service.Compile(file, "storage.rules", check.Options{
		Service: Service,
		Globals: Globals,
	}, nil)
	if prog == nil {
		return nil, diags
	}
	return &Ruleset{prog: prog, Warnings: diags}, diags
}

// Globals are the top-level variables Storage rules bind.
var Globals = []string{"request", "resource"}

// AST returns the parsed ruleset.
func (r *Ruleset) AST() *ast.Ruleset { return r.prog.Ruleset }

// File returns the source file.
func (r *Ruleset) File() *source.File { return r.prog.File }

// Methods of a Storage request. Rules may also grant the umbrellas read
// (get, list) and write (create, update, delete); a request is always one
// of these five.
const (
	Get    = service.Get
	List   = service.List
	Create = service.Create
	Update = service.Update
	Delete = service.Delete
)

// Auth is request.auth: the caller's uid and token claims.
type Auth = service.Auth

// Object is a Cloud Storage object's metadata as rules see it, in
// resource (the stored object) and request.resource (the object as it
// would be after a create or update).
//
// A property that is empty (a zero time, a zero generation, an empty
// string) is absent from the rules map, and reading it is production's
// "Property x is undefined on object." Size is always present. Metadata
// is the custom metadata; a nil map is absent in Rules Test API mode and
// an empty map for real requests.
type Object struct {
	// Name is the object's full path within the bucket, e.g.
	// uploads/pic.png (GCS convention, not the last segment).
	Name           string
	Bucket         string
	Size           int64
	ContentType    string
	Metadata       map[string]string
	MD5Hash        string // base64, as GCS reports it
	CRC32C         string // base64, as GCS reports it
	ETag           string
	TimeCreated    time.Time
	Updated        time.Time
	Generation     int64
	Metageneration int64

	CacheControl       string
	ContentDisposition string
	ContentEncoding    string
	ContentLanguage    string
}

// FirestoreLookup resolves documents for firestore.get() and
// firestore.exists(). Path is relative to the default database's documents
// root, e.g. users/alice. A document that does not exist is (nil, false,
// nil); an error makes the call fail (the rule denies). The method set is
// the same as the Firestore binding's Lookup, so one implementation serves
// both.
type FirestoreLookup interface {
	Lookup(path string) (data value.Map, exists bool, err error)
}

// FirestoreLookupFunc adapts a function to FirestoreLookup.
type FirestoreLookupFunc func(path string) (value.Map, bool, error)

// Lookup implements FirestoreLookup.
func (f FirestoreLookupFunc) Lookup(path string) (value.Map, bool, error) { return f(path) }

// Request is one Storage request to decide.
type Request struct {
	// Method is get, list, create, update or delete.
	Method string
	// Bucket is the bucket name bound to {bucket}; DefaultBucket when empty.
	Bucket string
	// Path is the object path within the bucket (uploads/a.png); for list,
	// the prefix being listed. Leading and trailing slashes are ignored.
	Path string
	// Auth is request.auth; nil means unauthenticated.
	Auth *Auth
	// Resource is the stored object (resource); nil when it does not exist.
	Resource *Object
	// Incoming is request.resource: the object as it would be after a
	// create or update. It is ignored for get, list and delete, where
	// request.resource is null.
	Incoming *Object
	// Time is request.time.
	Time time.Time
	// Firestore resolves firestore.get()/firestore.exists(). Nil means
	// every lookup fails.
	Firestore FirestoreLookup

	// TestAPI evaluates with the Rules Test API's conventions, which the
	// recorded conformance verdicts follow: an absent auth, resource or
	// request.resource is unbound (reading it errors) instead of null, an
	// object carries only the properties given, a firestore.get() result
	// carries data only, and a lookup of an unmocked path errors.
	TestAPI bool
	// NoTrace skips the sub-expression trace of each rule (verdicts, notes
	// and messages are still reported), for callers that only need the
	// verdict.
	NoTrace bool
	// Coverage, when set, counts every expression the decision evaluates
	// (traced or not) into it; it must be NewCoverage of this ruleset.
	Coverage *coverage.Coverage
}

// Decision is the verdict on a request with its explanation.
type Decision struct {
	Outcome  sim.Outcome
	Trace    []sim.Rule
	Notes    []string
	Deciding int // index into Trace of the deciding rule, or -1
	Attempts []eval.Attempt
	// Expressions is the number of expressions evaluated.
	Expressions int
	// Lookups is the number of distinct Firestore documents read.
	Lookups int
	// Explanation is the structured account: typed traces of the
	// evaluated rules, their failing sub-expressions, the path
	// variables, each lookup with its result, and the budget used.
	eval.Explanation
}

// Allowed reports whether the request is allowed.
func (d *Decision) Allowed() bool { return d.Outcome == sim.Allow }

// Case renders the decision as a simulator case result.
func (d *Decision) Case(description string, expectation sim.Outcome) sim.Case {
	c := sim.NewCase(description, expectation, d.Outcome, d.Trace, d.Notes, d.Deciding)
	d.Annotate(&c)
	return c
}

// Segments returns the path a request is matched against:
// b/<bucket>/o/<object path segments>.
func Segments(bucket, path string) []string {
	if bucket == "" {
		bucket = DefaultBucket
	}
	rel := strings.Trim(path, "/")
	if rel == "" {
		return []string{"b", bucket, "o"}
	}
	// Sized once: the prefix and every segment of rel.
	segs := make([]string, 3, 4+strings.Count(rel, "/"))
	segs[0], segs[1], segs[2] = "b", bucket, "o"
	for {
		i := strings.IndexByte(rel, '/')
		if i < 0 {
			return append(segs, rel)
		}
		segs = append(segs, rel[:i])
		rel = rel[i+1:]
	}
}

// qualified is a firestore.* function's full name, the two known ones
// without building the string.
func qualified(name string) string {
	switch name {
	case "get":
		return "firestore.get"
	case "exists":
		return "firestore.exists"
	}
	return "firestore." + name
}

// Decide evaluates the request against the ruleset. It never panics: an
// internal failure denies with a note saying so.
func (r *Ruleset) Decide(req *Request) (d *Decision) {
	defer func() {
		if p := recover(); p != nil {
			d = &Decision{Outcome: sim.Deny, Deciding: -1,
				Notes: []string{fmt.Sprintf("internal error: %v (the request is denied)", p)}}
		}
	}()
	return r.decide(req)
}

func (r *Ruleset) decide(req *Request) *Decision {
	bucket := req.Bucket
	if bucket == "" {
		bucket = DefaultBucket
	}
	segs := Segments(bucket, req.Path)
	d := &Decision{Outcome: sim.Deny, Deciding: -1}
	switch req.Method {
	case Get, List, Create, Update, Delete:
	default:
		d.Notes = append(d.Notes, fmt.Sprintf("Unknown method '%s': a Storage request is get, list, create, update or delete", req.Method))
		return d
	}
	lk := newLookups(req)
	rec := &eval.Recorder{}
	vals := &records{}
	file := r.prog.File
	hinted := map[string]bool{}
	var tally *coverage.Tally
	defer func() {
		if tally != nil {
			tally.Flush()
		}
	}()
	x := service.Decide(r.prog, segs, func() string { return "/" + strings.Join(segs, "/") }, req.Method, func() *eval.Env {
		ns := lk.funcs()
		for name, b := range ns {
			ns[name] = rec.Wrap(qualified(name), b)
		}
		env := &eval.Env{
			Program:    r.prog,
			Vars:       globals(req, segs, vals),
			Namespaces: map[string]map[string]eval.Builtin{"firestore": ns},
			Trace:      !req.NoTrace,
		}
		if req.Coverage != nil {
			tally = req.Coverage.Tally()
			env.Count = tally
		}
		return env
	}, func(e *value.Error) []string {
		if h := testAPIHint(req, file, e); h != "" && !hinted[h] {
			hinted[h] = true
			return []string{h}
		}
		return nil
	}, &vals.scratch)
	d.Attempts = x.Attempts
	d.Notes = append(d.Notes, x.Notes...)
	if x.Run == nil {
		return d
	}
	v := x.Verdicts
	d.Outcome, d.Trace, d.Deciding = v.Outcome, v.Trace, v.Deciding
	d.Expressions, d.Lookups = x.Expressions, lk.count()
	d.Explanation = eval.NewExplanation(x.Run, v, rec.Reads)
	x.Run.Release()
	r.prog.Render(d.Trace, d.Rules)
	if req.TestAPI && lk.count() > MaxFirestoreLookups {
		d.Notes = append(d.Notes, fmt.Sprintf("This evaluation read %d distinct Firestore documents; a real Storage request may read at most %d and would be denied.", lk.count(), MaxFirestoreLookups))
	}
	return d
}

// Hints for the Rules Test API's unbound bindings, which surprise people
// who expect null (conformance: verbs-umbrella-granular, "create allowed
// when object does not exist" is DENY in production).
const (
	hintResource = "Hint: in Rules Test API mode a missing object leaves resource unbound, so reading it errors, even in `resource == null`; a real request for a missing object sees resource == null."
	hintAuth     = "Hint: in Rules Test API mode an unauthenticated request has no request.auth, so reading it errors, even in `request.auth == null`; a real request sees request.auth == null."
	hintIncoming = "Hint: in Rules Test API mode request.resource exists only for a create or update that describes the object written; a real request sees request.resource == null otherwise."
)

// testAPIHint explains an error caused by a binding the Rules Test API
// leaves unbound, or returns "".
func testAPIHint(req *Request, f *source.File, e *value.Error) string {
	if !req.TestAPI {
		return ""
	}
	switch {
	case e.Message == "Property auth is undefined on object." && req.Auth == nil:
		return hintAuth
	case e.Message == "Property resource is undefined on object." && (req.Incoming == nil || (req.Method != Create && req.Method != Update)):
		return hintIncoming
	case e.Message == "Null value error." && req.Resource == nil && e.Offset >= 0 && isIdentAt(f.Text, e.Offset, "resource"):
		return hintResource
	}
	return ""
}

// isIdentAt reports whether the identifier name starts at offset.
func isIdentAt(text string, offset int, name string) bool {
	if offset+len(name) > len(text) || text[offset:offset+len(name)] != name {
		return false
	}
	if end := offset + len(name); end < len(text) {
		c := text[end]
		if c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// NewCoverage starts empty rule coverage counts for rs; set it as
// Request.Coverage to count decisions into it.
func NewCoverage(rs *Ruleset) *coverage.Coverage { return coverage.New(rs.AST(), rs.File()) }
