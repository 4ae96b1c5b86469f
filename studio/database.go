package studio

import (
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
)

// The Realtime Database page's endpoints: one level of the tree at a time
// (children paged by key, each a leaf value or a node with its child
// count), and writes of a value at a path. Reads and writes run in the
// admin lens by default and as ?as=uid (rules apply) in the app lens.

// maxTreeChildren bounds one page of a node's children.
const maxTreeChildren = 500

func (s *Studio) rtdb(w http.ResponseWriter) (*database.Database, bool) {
	d, ok := sandbox.Lookup[*database.Database](s.sb)
	if !ok {
		fail(w, http.StatusNotFound, "the Realtime Database is not running in this sandbox")
		return nil, false
	}
	return d, true
}

// dbError writes an engine error with the status the REST API uses.
func dbError(w http.ResponseWriter, err error) { dbDenied(w, err, nil) }

// dbDenied is dbError for a call that may have been denied: the denial
// carries its reason, its event and the failing sub-expressions.
func dbDenied(w http.ResponseWriter, err error, d *denial) {
	var den *database.Denied
	var e *database.Error
	switch {
	case errors.As(err, &den):
		details := map[string]any{"reason": den.Reason, "path": den.Path, "op": den.Op}
		if d != nil {
			details["event"], details["explanation"] = d.Event, d.Explanation
		}
		writeJSON(w, http.StatusForbidden, apiError{Error: "Permission denied", Code: "permission-denied", Details: details})
	case errors.Is(err, database.ErrPermissionDenied):
		writeJSON(w, http.StatusForbidden, apiError{Error: "Permission denied", Code: "permission-denied"})
	case errors.Is(err, database.ErrTooBig):
		fail(w, http.StatusRequestEntityTooLarge, err.Error())
	case errors.As(err, &e):
		fail(w, http.StatusBadRequest, e.Msg)
	default:
		fail(w, http.StatusInternalServerError, err.Error())
	}
}

// dbLocation reads ?ns= (default: the project's default namespace) and
// ?path= ("" or "/" is the root).
func (s *Studio) dbLocation(w http.ResponseWriter, r *http.Request, d *database.Database) (ns, path string, ok bool) {
	q := r.URL.Query()
	ns = q.Get("ns")
	if ns == "" {
		ns = database.DefaultNamespace(d.Project())
	}
	path = strings.Trim(q.Get("path"), "/")
	if _, err := database.ParsePath(path); err != nil {
		dbError(w, err)
		return "", "", false
	}
	return ns, path, true
}

// treeChild is one child in the tree endpoint's answer.
type treeChild struct {
	Key      string `json:"key"`
	Node     bool   `json:"node,omitempty"`     // has children of its own
	Children int    `json:"children,omitempty"` // how many, for a node
	Value    any    `json:"value,omitempty"`    // a leaf's value (null is never stored)
}

// locationStart reads what a location handler starts from: the engine,
// the namespace and path (?ns=, ?path=) and the lens the Studio acts in;
// when it can't, it has answered the error.
func (s *Studio) locationStart(w http.ResponseWriter, r *http.Request) (d *database.Database, ns, path string, who identity.Identity, ok bool) {
	if d, ok = s.rtdb(w); !ok {
		return
	}
	if ns, path, ok = s.dbLocation(w, r, d); !ok {
		return
	}
	who, err := lens(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return d, ns, path, who, false
	}
	return d, ns, path, who, true
}

// dbTree answers one level of the tree: GET /api/database/tree?ns=&path=
// &after=key&limit=N. A leaf location answers {"value"}; a node answers
// its first N children after the key, in key order, and "more" when
// there are others.
func (s *Studio) dbTree(w http.ResponseWriter, r *http.Request) {
	d, ns, path, who, ok := s.locationStart(w, r)
	if !ok {
		return
	}
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTreeChildren {
			fail(w, http.StatusBadRequest, "limit must be an integer from 1 to "+strconv.Itoa(maxTreeChildren)+", not "+quote(v))
			return
		}
		limit = n
	}
	after := r.URL.Query().Get("after")
	before := s.sb.Events().Seq()
	whole, err := d.Get(who, ns, path, nil, false)
	if err != nil {
		dbDenied(w, err, s.denialSince(before, "database"))
		return
	}
	out := map[string]any{"namespace": ns, "defaultNamespace": database.DefaultNamespace(d.Project()), "namespaces": d.Namespaces(), "path": path}
	m, isNode := whole.Value.(map[string]any)
	if !isNode || countChildren(m) == 0 { // a leaf (perhaps with a priority)
		out["exists"] = whole.Value != nil
		if whole.Value != nil {
			out["value"] = database.Plain(whole.Value)
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	out["exists"] = true
	out["count"] = countChildren(m)
	win := m
	if after != "" || len(m) > limit+1 {
		// A large node: its key index gives the page without sorting
		// every key (one more read, judged like the first).
		q := &database.Query{Index: database.IndexKey, Limit: limit + 1}
		if after != "" {
			q.Start = &database.Bound{Value: after}
		}
		rd, err := d.Get(who, ns, path, q, false)
		if err != nil {
			dbError(w, err)
			return
		}
		win, _ = rd.Value.(map[string]any)
	}
	keys := make([]string, 0, len(win))
	for k := range win {
		if !strings.HasPrefix(k, ".") {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return database.CompareKeys(keys[i], keys[j]) < 0 })
	if len(keys) > limit {
		keys = keys[:limit]
		out["more"] = true
	}
	children := make([]treeChild, 0, len(keys))
	for _, k := range keys {
		c := treeChild{Key: k}
		if cm, ok := win[k].(map[string]any); ok && countChildren(cm) > 0 {
			c.Node, c.Children = true, countChildren(cm)
		} else {
			c.Value = database.Plain(win[k])
		}
		children = append(children, c)
	}
	out["children"] = children
	writeJSON(w, http.StatusOK, out)
}

// countChildren counts a stored node's children (not its .priority).
func countChildren(m map[string]any) int {
	n := len(m)
	for k := range m {
		if strings.HasPrefix(k, ".") {
			n--
		}
	}
	return n
}

// dbSet writes the JSON body at the location: PUT /api/database/value
// ?ns=&path= (a set: the value replaces what is there; null deletes).
func (s *Studio) dbSet(w http.ResponseWriter, r *http.Request) {
	d, ns, path, who, ok := s.locationStart(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
	if err != nil {
		fail(w, http.StatusRequestEntityTooLarge, "request body larger than 4 MiB")
		return
	}
	v, err := database.DecodeJSON(body)
	if err != nil {
		dbError(w, err)
		return
	}
	before := s.sb.Events().Seq()
	stored, err := d.Set(who, ns, path, v, database.WriteOptions{Method: "set"})
	if err != nil {
		dbDenied(w, err, s.denialSince(before, "database"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": path, "value": database.Plain(stored)})
}

// dbDelete removes the location: DELETE /api/database/value?ns=&path=.
func (s *Studio) dbDelete(w http.ResponseWriter, r *http.Request) {
	d, ns, path, who, ok := s.locationStart(w, r)
	if !ok {
		return
	}
	before := s.sb.Events().Seq()
	if _, err := d.Set(who, ns, path, nil, database.WriteOptions{Method: "remove"}); err != nil {
		dbDenied(w, err, s.denialSince(before, "database"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": path, "deleted": true})
}
