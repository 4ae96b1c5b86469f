package firestoreserver

import (
	"context"
	"net/http"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/server/httpjson"
)

// Handler returns the HTTP/1.1 side of the Firestore port: everything that
// is not gRPC. It serves
//
//   - GET / — health, 200 "Ok" as the official emulator answers;
//   - REST /v1/projects/{p}/databases/{d}/documents… — every Firestore RPC
//     in its official HTTP mapping, proto3 JSON in and out (streaming RPCs
//     answer a JSON array), errors in Google's JSON envelope;
//   - WebChannel /google.firestore.v1.Firestore/{Listen,Write}/channel —
//     the browser SDK's streams;
//   - /emulator/v1/… — the official emulator's extras (security rules,
//     clearing data, rule coverage).
//
// Bodies are JSON whatever their Content-Type says (the Lite and browser
// SDKs send text/plain to avoid CORS preflights). Cross-origin requests are
// the port's (server.NewPort's origin policy). The handler keeps WebChannel
// sessions, so call Handler once per port and serve every request with the
// returned value.
func (s *Server) Handler() http.Handler {
	h := &httpHandler{s: s, wc: newWebChannel(s), cov: newCoverage(s)}
	return h
}

// Drain ends every WebChannel session, so that a graceful shutdown of the
// HTTP server does not wait on open back channels; new sessions are refused.
// The value Handler returns implements it.
func (h *httpHandler) Drain() { h.wc.Drain() }

// httpHandler routes the HTTP/1.1 requests of the Firestore port.
type httpHandler struct {
	s   *Server
	wc  *webChannel
	cov *ruleCoverage
}

// maxBodyBytes bounds a request body. Production limits a request to
// 10 MiB; the margin lets the engine name the real limit in its error.
const maxBodyBytes = 16 << 20

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			writeError(w, status.Errorf(codes.Internal, "internal error serving %s %s: %v", r.Method, r.URL.Path, v))
		}
	}()
	if r.Method == http.MethodOptions { // CORS is the port's (server.Guard)
		w.WriteHeader(http.StatusOK)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("Ok"))
	case strings.HasPrefix(p, "/v1/"):
		h.rest(w, r, strings.TrimPrefix(p, "/v1/"))
	case strings.HasPrefix(p, "/v1beta1/"):
		h.rest(w, r, strings.TrimPrefix(p, "/v1beta1/"))
	case strings.HasPrefix(p, "/emulator/v1/"):
		h.emulator(w, r, strings.TrimPrefix(p, "/emulator/v1/"))
	case strings.HasPrefix(p, webChannelPrefix):
		h.wc.serve(w, r)
	default:
		writeError(w, status.Errorf(codes.NotFound, "%s %s: no such endpoint on the Firestore port (REST is under /v1/projects/{project}/databases/{database}/documents, the emulator's extras under /emulator/v1/)", r.Method, p))
	}
}

// restTarget is a parsed /v1 resource path.
type restTarget struct {
	db     firestore.DatabaseName
	rel    []string // segments below .../documents
	method string   // the custom method after ':' ("" for none)
}

func (t restTarget) dbName() string   { return t.db.String() }
func (t restTarget) root() string     { return t.db.String() + "/documents" }
func (t restTarget) isDoc() bool      { return len(t.rel) > 0 && len(t.rel)%2 == 0 }
func (t restTarget) isColl() bool     { return len(t.rel)%2 == 1 }
func (t restTarget) relPath() string  { return strings.Join(t.rel, "/") }
func (t restTarget) fullName() string { return joinName(t.root(), t.relPath()) }

// parent is the collection's parent resource (documents root or a document).
func (t restTarget) parent() string {
	return joinName(t.root(), strings.Join(t.rel[:len(t.rel)-1], "/"))
}

func joinName(root, rel string) string {
	if rel == "" {
		return root
	}
	return root + "/" + rel
}

// restMethods are the custom methods of the documents API, and whether
// each also applies below the documents root (to a document).
var restMethods = map[string]bool{
	"batchGet": false, "beginTransaction": false, "commit": false, "rollback": false,
	"batchWrite": false, "listen": false, "write": false,
	"runQuery": true, "runAggregationQuery": true, "partitionQuery": true, "listCollectionIds": true,
}

// parseRESTPath parses projects/{p}/databases/{d}/documents[/path][:method].
func parseRESTPath(p string) (restTarget, error) {
	var t restTarget
	segs := strings.Split(p, "/")
	last := segs[len(segs)-1]
	if i := strings.LastIndexByte(last, ':'); i >= 0 {
		if _, known := restMethods[last[i+1:]]; known {
			t.method = last[i+1:]
			segs[len(segs)-1] = last[:i]
		}
	}
	if len(segs) >= 5 && segs[0] == "projects" && segs[2] == "databases" && segs[4] == "documents" && (segs[1] == "" || segs[3] == "") {
		// The route matches with an empty project or database id; the
		// official emulator then rejects the name in its parser's words.
		if len(segs) == 5 && t.method != "" {
			_, err := firestore.ParseDatabaseName(strings.Join(segs[:4], "/"))
			return t, Err(err)
		}
		_, _, err := firestore.ParseDocumentName(strings.Join(segs, "/"))
		return t, Err(err)
	}
	if len(segs) < 5 || segs[0] != "projects" || segs[2] != "databases" || segs[1] == "" || segs[3] == "" {
		return t, status.Errorf(codes.NotFound, "%q is not a Firestore resource: REST paths look like /v1/projects/{project}/databases/{database}/documents/{path}", "/v1/"+p)
	}
	t.db = firestore.DatabaseName{Project: segs[1], Database: segs[3]}
	if segs[4] != "documents" {
		return t, status.Errorf(codes.NotFound, "%q is not a Firestore resource: expected .../databases/%s/documents after the database", "/v1/"+p, segs[3])
	}
	t.rel = segs[5:]
	for _, s := range t.rel {
		if s == "" {
			return t, status.Errorf(codes.InvalidArgument, "Resource path %q has an empty segment.", "/v1/"+p)
		}
	}
	return t, nil
}

// rest serves /v1/... .
func (h *httpHandler) rest(w http.ResponseWriter, r *http.Request, p string) {
	t, err := parseRESTPath(p)
	if err != nil {
		writeError(w, err)
		return
	}
	who, err := IdentityFromHeader(r.Header.Get("Authorization"))
	if err != nil {
		writeError(w, err)
		return
	}
	who = who.ByInvocation(r.Header.Get(identity.InvocationHeader))
	ctx := r.Context()
	e := h.s.opts.Engine
	if t.method != "" {
		if r.Method != http.MethodPost {
			writeError(w, status.Errorf(codes.NotFound, "%s %s: :%s takes POST", r.Method, r.URL.Path, t.method))
			return
		}
		if len(t.rel) > 0 && (!restMethods[t.method] || !t.isDoc()) {
			writeError(w, status.Errorf(codes.NotFound, "%s: :%s applies to %s", r.URL.Path, t.method, methodScope(t.method)))
			return
		}
		h.restMethod(ctx, w, r, t, who)
		return
	}
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet && t.isDoc():
		req := &pb.GetDocumentRequest{}
		if !decodeQuery(w, q, req) {
			return
		}
		req.Name = t.fullName()
		d, err := e.GetDocument(ctx, who, req)
		respond(w, d, err)
	case r.Method == http.MethodGet && t.isColl():
		req := &pb.ListDocumentsRequest{}
		if !decodeQuery(w, q, req) {
			return
		}
		req.Parent, req.CollectionId = t.parent(), t.rel[len(t.rel)-1]
		resp, err := e.ListDocuments(ctx, who, req)
		respond(w, resp, err)
	case r.Method == http.MethodPost && t.isColl():
		req := &pb.CreateDocumentRequest{}
		doc := &pb.Document{}
		if !decodeQuery(w, q, req) || !decodeBody(w, r, doc) {
			return
		}
		if doc.Name != "" {
			writeError(w, status.Errorf(codes.InvalidArgument, "Document name %q must not be set when creating a document; give the id with ?documentId=.", doc.Name))
			return
		}
		req.Parent, req.CollectionId, req.Document = t.parent(), t.rel[len(t.rel)-1], doc
		d, err := e.CreateDocument(ctx, who, req)
		respond(w, d, err)
	case r.Method == http.MethodPatch && t.isDoc():
		req := &pb.UpdateDocumentRequest{}
		doc := &pb.Document{}
		if !decodeQuery(w, q, req) || !decodeBody(w, r, doc) {
			return
		}
		if doc.Name != "" && doc.Name != t.fullName() {
			writeError(w, status.Errorf(codes.InvalidArgument, "Document name %q in the body does not match %q in the URL.", doc.Name, t.fullName()))
			return
		}
		doc.Name = t.fullName()
		req.Document = doc
		d, err := e.UpdateDocument(ctx, who, req)
		respond(w, d, err)
	case r.Method == http.MethodDelete && t.isDoc():
		req := &pb.DeleteDocumentRequest{}
		if !decodeQuery(w, q, req) {
			return
		}
		req.Name = t.fullName()
		respond(w, &emptypb.Empty{}, e.DeleteDocument(ctx, who, req))
	default:
		what := "a document"
		if t.isColl() {
			what = "a collection"
		} else if len(t.rel) == 0 {
			what = "the documents root"
		}
		writeError(w, status.Errorf(codes.NotFound, "%s %s: no such method on %s (documents take GET, PATCH and DELETE; collections take GET to list and POST to create; the root takes POST :commit, :batchGet, :runQuery…)", r.Method, r.URL.Path, what))
	}
}

func methodScope(m string) string {
	if restMethods[m] {
		return "the documents root or a document"
	}
	return "the documents root only (.../documents:" + m + ")"
}

// restMethod serves POST ...:method.
func (h *httpHandler) restMethod(ctx context.Context, w http.ResponseWriter, r *http.Request, t restTarget, who identity.Identity) {
	e := h.s.opts.Engine
	switch t.method {
	case "batchGet":
		req := &pb.BatchGetDocumentsRequest{}
		if !decodeRPC(w, r, req, &req.Database, t.dbName()) {
			return
		}
		resp, err := e.BatchGetDocuments(ctx, who, req)
		respondArray(w, resp, err, 0)
	case "beginTransaction":
		req := &pb.BeginTransactionRequest{}
		if !decodeRPC(w, r, req, &req.Database, t.dbName()) {
			return
		}
		resp, err := e.BeginTransaction(ctx, who, req)
		respond(w, resp, err)
	case "commit":
		req := &pb.CommitRequest{}
		if !decodeRPC(w, r, req, &req.Database, t.dbName()) {
			return
		}
		resp, err := e.Commit(ctx, who, req)
		respond(w, resp, err)
	case "rollback":
		req := &pb.RollbackRequest{}
		if !decodeRPC(w, r, req, &req.Database, t.dbName()) {
			return
		}
		respond(w, &emptypb.Empty{}, e.Rollback(ctx, who, req))
	case "batchWrite":
		req := &pb.BatchWriteRequest{}
		if !decodeRPC(w, r, req, &req.Database, t.dbName()) {
			return
		}
		resp, err := e.BatchWrite(ctx, who, req)
		respond(w, resp, err)
	case "runQuery":
		req := &pb.RunQueryRequest{}
		if !decodeRPC(w, r, req, &req.Parent, t.fullName()) {
			return
		}
		resp, err := e.RunQuery(ctx, who, req)
		respondArray(w, resp, err, 0)
	case "runAggregationQuery":
		req := &pb.RunAggregationQueryRequest{}
		if !decodeRPC(w, r, req, &req.Parent, t.fullName()) {
			return
		}
		resp, err := e.RunAggregationQuery(ctx, who, req)
		respondArray(w, resp, err, doneLast)
	case "partitionQuery":
		req := &pb.PartitionQueryRequest{}
		if !decodeRPC(w, r, req, &req.Parent, t.fullName()) {
			return
		}
		resp, err := e.PartitionQuery(ctx, who, req)
		respond(w, resp, err)
	case "listCollectionIds":
		req := &pb.ListCollectionIdsRequest{}
		if !decodeRPC(w, r, req, &req.Parent, t.fullName()) {
			return
		}
		resp, err := e.ListCollectionIds(ctx, who, req)
		respond(w, resp, err)
	case "listen", "write":
		writeError(w, status.Errorf(codes.Unimplemented, "The %s stream is bidirectional: use gRPC (google.firestore.v1.Firestore/%s) or WebChannel (%s%s/channel); REST has no bidirectional streams.",
			t.method, strings.ToUpper(t.method[:1])+t.method[1:], webChannelPrefix, strings.ToUpper(t.method[:1])+t.method[1:]))
	}
}

// decodeRPC decodes a POST body into req and fills the resource field the
// URL names; a body that names a different resource is an error.
func decodeRPC(w http.ResponseWriter, r *http.Request, req proto.Message, field *string, fromURL string) bool {
	if !decodeBody(w, r, req) {
		return false
	}
	if *field != "" && *field != fromURL {
		writeError(w, status.Errorf(codes.InvalidArgument, "The request body names %q but the URL names %q.", *field, fromURL))
		return false
	}
	*field = fromURL
	return true
}

// doneLast marks the last element of a streamed answer "done": true. The
// official emulator does so for runAggregationQuery although the published
// RunAggregationQueryResponse has no such field (runQuery's has one).
const doneLast = 1

// respondArray answers a server-streaming RPC as the REST mapping does: a
// JSON array of the responses.
func respondArray[T proto.Message](w http.ResponseWriter, msgs []T, err error, flags int) {
	if err != nil {
		writeError(w, err)
		return
	}
	var b strings.Builder
	b.WriteString("[")
	for i, m := range msgs {
		if i > 0 {
			b.WriteString(",\n")
		}
		out, err := marshalJSON(m)
		if err != nil {
			writeError(w, status.Errorf(codes.Internal, "encoding response: %v", err))
			return
		}
		if flags&doneLast != 0 && i == len(msgs)-1 && len(out) >= 2 && out[len(out)-1] == '}' {
			sep := ","
			if len(out) == 2 {
				sep = ""
			}
			out = append(out[:len(out)-1], []byte(sep+`"done":true}`)...)
		}
		b.Write(out)
	}
	b.WriteString("]")
	api.Body(w, http.StatusOK, []byte(b.String()))
}

// respond answers a unary RPC.
func respond(w http.ResponseWriter, m proto.Message, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := marshalJSON(m)
	if err != nil {
		writeError(w, status.Errorf(codes.Internal, "encoding response: %v", err))
		return
	}
	api.Body(w, http.StatusOK, out)
}

// api is how Firestore's REST API writes JSON; emulatorAPI how the
// emulator's own endpoints do (pretty-printed).
var (
	api         = httpjson.Style{Charset: "utf-8", Newline: true, Length: true}
	emulatorAPI = httpjson.Style{Charset: "utf-8", Newline: true, Length: true, Indent: true}
)
