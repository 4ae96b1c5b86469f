package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
)

// lens returns the identity a Firestore request of the Studio runs as:
// admin by default, or with ?as=uid (and optional ?claims={json}) a
// signed-in user, or ?as=~anon the unauthenticated caller — the "app lens",
// where rules apply. Every identity acts through the Studio.
func lens(r *http.Request) (identity.Identity, error) {
	as := r.URL.Query().Get("as")
	var id identity.Identity
	switch as {
	case "":
		id = identity.AdminIdentity()
	case "~anon":
		id = identity.Anonymous()
	default:
		claims := map[string]any{}
		if c := r.URL.Query().Get("claims"); c != "" {
			dec := json.NewDecoder(strings.NewReader(c))
			dec.UseNumber()
			if err := dec.Decode(&claims); err != nil {
				return id, errors.New("claims must be a JSON object: " + err.Error())
			}
		}
		claims["sub"], claims["user_id"] = as, as
		if _, ok := claims["firebase"]; !ok {
			claims["firebase"] = map[string]any{"sign_in_provider": "custom", "identities": map[string]any{}}
		}
		id = identity.NewUser(as, normalize(claims).(map[string]any))
	}
	return id.Via(studioActor), nil
}

// normalize turns json.Number into int64 or float64, as the rules see
// token claims.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// fsError writes an engine error: a denial comes with the emulator's
// reason and the failing sub-expressions, so the app lens explains itself.
func fsError(w http.ResponseWriter, err error) {
	if d, ok := firestore.DenialOf(err); ok {
		fsDenial(w, d, "")
		return
	}
	st := firestore.Code(err)
	status := http.StatusInternalServerError
	switch st.String() {
	case "InvalidArgument":
		status = http.StatusBadRequest
	case "NotFound":
		status = http.StatusNotFound
	case "AlreadyExists", "Aborted", "FailedPrecondition":
		status = http.StatusConflict
	case "PermissionDenied":
		status = http.StatusForbidden
	case "ResourceExhausted":
		status = http.StatusTooManyRequests
	case "Unimplemented":
		status = http.StatusNotImplemented
	}
	writeJSON(w, status, apiError{Error: err.Error(), Code: st.String()})
}

// fsDenial writes a denial; ev, when known, is its request's event.
func fsDenial(w http.ResponseWriter, d *firestore.Denial, ev string) {
	details := map[string]any{"reason": d.Decision.Reason, "method": d.Method, "path": d.Path, "explanation": d.Decision.Lines()}
	if ev != "" {
		details["event"] = ev
	}
	writeJSON(w, http.StatusForbidden, apiError{Error: "PERMISSION_DENIED: " + d.Decision.Reason, Code: "permission-denied", Details: details})
}

// fsFail is fsError with a denial's request event linked, so the page
// can open the rules inspector on it.
func (s *Studio) fsFail(w http.ResponseWriter, err error) {
	if d, ok := firestore.DenialOf(err); ok {
		fsDenial(w, d, s.recentDenial("firestore", string(d.Method), d.Path))
		return
	}
	fsError(w, err)
}

// fs is the sandbox's Firestore; nil when it runs none (the Firestore
// endpoints then answer 404, through firestoreOnly).
func (s *Studio) fs() *firestore.Service {
	fs, _ := sandbox.Lookup[*firestore.Service](s.sb)
	return fs
}

// firestoreOnly serves h when the sandbox runs Firestore.
func (s *Studio) firestoreOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.fs() == nil {
			fail(w, http.StatusNotFound, "Firestore is not served")
			return
		}
		h(w, r)
	}
}

func (s *Studio) db() firestore.DatabaseName { return s.fs().Default() }

func (s *Studio) rel(name string) string {
	return strings.TrimPrefix(strings.TrimPrefix(name, s.db().Documents()), "/")
}

// fsCollections lists the collection ids under ?parent= (a document path;
// empty: the root). Listing collection ids is admin-only in production,
// so it always runs in the admin lens.
func (s *Studio) fsCollections(w http.ResponseWriter, r *http.Request) {
	parent := strings.Trim(r.URL.Query().Get("parent"), "/")
	if parent != "" {
		if err := firestore.ValidateDocumentPath(parent); err != nil {
			s.fsFail(w, err)
			return
		}
	}
	ids := []string{} // [] when there are none: the page reads .length
	token := ""
	for {
		resp, err := s.fs().ListCollectionIds(r.Context(), identity.AdminIdentity().Via(studioActor),
			&pb.ListCollectionIdsRequest{Parent: s.db().DocName(parent), PageSize: 1000, PageToken: token})
		if err != nil {
			s.fsFail(w, err)
			return
		}
		ids = append(ids, resp.CollectionIds...)
		if token = resp.NextPageToken; token == "" || len(ids) > 10000 {
			break
		}
	}
	sort.Strings(ids)
	writeJSON(w, http.StatusOK, map[string]any{"parent": parent, "collections": ids})
}

// doc is a document in the Studio's JSON form.
type doc struct {
	Path       string         `json:"path"`
	ID         string         `json:"id"`
	Data       map[string]any `json:"data"`
	Missing    bool           `json:"missing,omitempty"` // a path with descendants but no document
	CreateTime string         `json:"createTime,omitempty"`
	UpdateTime string         `json:"updateTime,omitempty"`
}

func (s *Studio) docOf(d *pb.Document) doc {
	p := s.rel(d.Name)
	out := doc{Path: p, ID: p[strings.LastIndexByte(p, '/')+1:]}
	if d.UpdateTime == nil {
		out.Missing = true
		return out
	}
	out.Data = firestore.EncodeFields(d.Fields, s.db())
	out.CreateTime = d.CreateTime.AsTime().UTC().Format("2006-01-02T15:04:05.000000Z")
	out.UpdateTime = d.UpdateTime.AsTime().UTC().Format("2006-01-02T15:04:05.000000Z")
	return out
}

// fsDocuments lists a page of a collection: ?collection=path&pageSize=N&pageToken=.
func (s *Studio) fsDocuments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	coll := strings.Trim(q.Get("collection"), "/")
	if err := firestore.ValidateCollectionPath(coll); err != nil {
		s.fsFail(w, err)
		return
	}
	size := 50
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			fail(w, http.StatusBadRequest, "pageSize must be an integer from 1 to 500, not "+quote(v))
			return
		}
		size = n
	}
	who, err := lens(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	parent, id := "", coll
	if i := strings.LastIndexByte(coll, '/'); i >= 0 {
		parent, id = coll[:i], coll[i+1:]
	}
	resp, err := s.fs().ListDocuments(r.Context(), who, &pb.ListDocumentsRequest{
		Parent: s.db().DocName(parent), CollectionId: id, PageSize: int32(size), PageToken: q.Get("pageToken"), ShowMissing: who.IsAdmin()})
	if err != nil {
		s.fsFail(w, err)
		return
	}
	docs := make([]doc, 0, len(resp.Documents))
	for _, d := range resp.Documents {
		docs = append(docs, s.docOf(d))
	}
	writeJSON(w, http.StatusOK, map[string]any{"collection": coll, "documents": docs, "nextPageToken": resp.NextPageToken})
}

func (s *Studio) docPath(w http.ResponseWriter, r *http.Request) (string, bool) {
	p := strings.Trim(r.URL.Query().Get("path"), "/")
	if err := firestore.ValidateDocumentPath(p); err != nil {
		s.fsFail(w, err)
		return "", false
	}
	return p, true
}

func (s *Studio) fsGet(w http.ResponseWriter, r *http.Request) {
	p, ok := s.docPath(w, r)
	if !ok {
		return
	}
	who, err := lens(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	d, err := s.fs().GetDocument(r.Context(), who, &pb.GetDocumentRequest{Name: s.db().DocName(p)})
	if err != nil {
		s.fsFail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.docOf(d))
}

// fsPut writes a document: body {"data": {...}} in the JSON form
// (marker objects for timestamps, references, …); with "merge": true only
// the given top-level fields change.
func (s *Studio) fsPut(w http.ResponseWriter, r *http.Request) {
	p, ok := s.docPath(w, r)
	if !ok {
		return
	}
	who, err := lens(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	var body struct {
		Data  map[string]any `json:"data"`
		Merge bool           `json:"merge"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if body.Data == nil {
		fail(w, http.StatusBadRequest, `body must be {"data": {...}}`)
		return
	}
	fields, err := firestore.DecodeFields(body.Data, s.db())
	if err != nil {
		s.fsFail(w, err)
		return
	}
	wr := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: s.db().DocName(p), Fields: fields}}}
	if body.Merge {
		mask := &pb.DocumentMask{}
		for k := range fields {
			mask.FieldPaths = append(mask.FieldPaths, quoteField(k))
		}
		sort.Strings(mask.FieldPaths)
		wr.UpdateMask = mask
	}
	if _, err := s.fs().Commit(r.Context(), who, &pb.CommitRequest{Database: s.db().String(), Writes: []*pb.Write{wr}}); err != nil {
		s.fsFail(w, err)
		return
	}
	d, err := s.fs().GetDocument(r.Context(), identity.AdminIdentity().Via(studioActor), &pb.GetDocumentRequest{Name: s.db().DocName(p)})
	if err != nil {
		s.fsFail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.docOf(d))
}

// quoteField makes a field name a one-segment field path.
func quoteField(k string) string {
	simple := k != ""
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			simple = false
			break
		}
	}
	if simple {
		return k
	}
	return "`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(k) + "`"
}

// fsDelete deletes a document, or with ?recursive=true it and every
// document below it.
func (s *Studio) fsDelete(w http.ResponseWriter, r *http.Request) {
	p, ok := s.docPath(w, r)
	if !ok {
		return
	}
	who, err := lens(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	names := []string{s.db().DocName(p)}
	if r.URL.Query().Get("recursive") == "true" {
		if !who.IsAdmin() {
			fail(w, http.StatusBadRequest, "recursive delete runs in the admin lens only")
			return
		}
		below, err := s.descendants(r.Context(), p)
		if err != nil {
			s.fsFail(w, err)
			return
		}
		names = append(names, below...)
	}
	deleted := 0
	for len(names) > 0 {
		n := min(len(names), 500)
		var writes []*pb.Write
		for _, name := range names[:n] {
			writes = append(writes, &pb.Write{Operation: &pb.Write_Delete{Delete: name}})
		}
		if _, err := s.fs().Commit(r.Context(), who, &pb.CommitRequest{Database: s.db().String(), Writes: writes}); err != nil {
			s.fsFail(w, err)
			return
		}
		deleted += n
		names = names[n:]
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": deleted})
}

// descendants lists the names of every document below the document p
// (missing documents with descendants included), at most maxRecursive.
func (s *Studio) descendants(ctx context.Context, p string) ([]string, error) {
	admin := identity.AdminIdentity().Via(studioActor)
	var out []string
	queue := []string{p}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		ids, err := s.fs().ListCollectionIds(ctx, admin, &pb.ListCollectionIdsRequest{Parent: s.db().DocName(cur)})
		if err != nil {
			return nil, err
		}
		for _, id := range ids.CollectionIds {
			token := ""
			for {
				resp, err := s.fs().ListDocuments(ctx, admin, &pb.ListDocumentsRequest{Parent: s.db().DocName(cur), CollectionId: id,
					PageSize: 1000, PageToken: token, ShowMissing: true})
				if err != nil {
					return nil, err
				}
				for _, d := range resp.Documents {
					if d.UpdateTime != nil {
						out = append(out, d.Name)
					}
					queue = append(queue, s.rel(d.Name))
				}
				if len(out) > maxRecursive {
					return nil, fmt.Errorf("%w: more than %d documents below %s; delete it in parts", firestore.ErrResourceExhausted, maxRecursive, p)
				}
				if token = resp.NextPageToken; token == "" {
					break
				}
			}
		}
	}
	return out, nil
}

// maxRecursive bounds a recursive delete.
const maxRecursive = 100000

// fsQuery runs a structured query: body {"parent": "doc path or empty",
// "query": StructuredQuery in the REST JSON form}.
func (s *Studio) fsQuery(w http.ResponseWriter, r *http.Request) {
	who, err := lens(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	var body struct {
		Parent string          `json:"parent"`
		Query  json.RawMessage `json:"query"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	sq := &pb.StructuredQuery{}
	if err := protojson.Unmarshal(body.Query, sq); err != nil {
		fail(w, http.StatusBadRequest, "query is not a StructuredQuery: "+err.Error())
		return
	}
	if sq.Limit == nil || sq.Limit.Value > 500 {
		sq.Limit = wrapInt(500)
	}
	resp, err := s.fs().RunQuery(r.Context(), who, &pb.RunQueryRequest{Parent: s.db().DocName(strings.Trim(body.Parent, "/")),
		QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: sq}})
	if err != nil {
		s.fsFail(w, err)
		return
	}
	docs := []doc{}
	for _, r := range resp {
		if d := r.GetDocument(); d != nil {
			docs = append(docs, s.docOf(d))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"documents": docs})
}

func wrapInt(n int32) *wrapperspb.Int32Value { return wrapperspb.Int32(n) }
