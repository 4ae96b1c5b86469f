package firestoreserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/source"
)

// The official emulator's extra endpoints (google.firestore.emulator.v1.
// FirestoreEmulator), as @firebase/rules-unit-testing and firebase-tools
// call them:
//
//	PUT|GET /emulator/v1/projects/{p}[/databases/{d}]:securityRules
//	DELETE  /emulator/v1/projects/{p}/databases/{d}/documents[/{path}]
//	POST    /emulator/v1/projects/{p}[/databases/{d}]:bulkDelete
//	GET     /emulator/v1/projects/{p}[/databases/{d}]:ruleCoverage[.html]
//
// Like the emulator they need no credentials, and rules are kept per
// project: a PUT for one project leaves the others' rules alone.

// rulesFile is a file of the emulator's Source message.
type rulesFile struct {
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
}

type rulesSource struct {
	Files []rulesFile `json:"files"`
}

// setRulesRequest is SetSecurityRulesRequest's JSON form.
type setRulesRequest struct {
	Rules        *rulesSource `json:"rules"`
	IgnoreErrors bool         `json:"ignoreErrors,omitempty"`
}

// sourcePosition is the emulator's SourcePosition.
type sourcePosition struct {
	FileName      string `json:"fileName,omitempty"`
	Line          int    `json:"line"`
	Column        int    `json:"column"`
	CurrentOffset int    `json:"currentOffset"`
	EndOffset     int    `json:"endOffset"`
}

// rulesIssue is the emulator's Issue: a compile warning.
type rulesIssue struct {
	SourcePosition sourcePosition `json:"sourcePosition"`
	Description    string         `json:"description"`
	Severity       string         `json:"severity"`
}

type rulesResponse struct {
	Rules  *rulesSource `json:"rules,omitempty"`
	Issues []rulesIssue `json:"issues,omitempty"`
}

// emulatorPath is a parsed /emulator/v1/projects/... path.
type emulatorPath struct {
	project, database string
	documents         bool   // .../documents[/path]
	docPath           string // the path below documents
	method            string // after ':'
}

func parseEmulatorPath(p string) (emulatorPath, bool) {
	var e emulatorPath
	rest, ok := strings.CutPrefix(p, "projects/")
	if !ok {
		return e, false
	}
	if i := strings.IndexByte(rest, '/'); i < 0 {
		e.project, e.method, _ = strings.Cut(rest, ":")
		return e, e.project != "" && e.method != ""
	} else {
		e.project, rest = rest[:i], rest[i+1:]
	}
	rest, ok = strings.CutPrefix(rest, "databases/")
	if !ok || e.project == "" {
		return e, false
	}
	i := strings.IndexAny(rest, "/:")
	if i < 0 {
		return e, false
	}
	e.database = rest[:i]
	if rest[i] == ':' {
		e.method = rest[i+1:]
		return e, e.database != ""
	}
	rest = rest[i+1:]
	if rest != "documents" && !strings.HasPrefix(rest, "documents/") {
		return e, false
	}
	e.documents = true
	e.docPath = strings.Trim(strings.TrimPrefix(rest, "documents"), "/")
	return e, e.database != ""
}

func (e emulatorPath) db() firestore.DatabaseName {
	d := e.database
	if d == "" {
		d = firestore.DefaultDatabase
	}
	return firestore.DatabaseName{Project: e.project, Database: d}
}

// emulator serves /emulator/v1/... .
func (h *httpHandler) emulator(w http.ResponseWriter, r *http.Request, p string) {
	ep, ok := parseEmulatorPath(p)
	if !ok {
		writeError(w, status.Errorf(codes.NotFound, "%s %s: no such emulator endpoint (try /emulator/v1/projects/{project}:securityRules)", r.Method, r.URL.Path))
		return
	}
	switch {
	case ep.documents && r.Method == http.MethodDelete:
		h.clearData(w, r, ep)
	case ep.method == "securityRules" && r.Method == http.MethodPut:
		h.putRules(w, r, ep)
	case ep.method == "securityRules" && r.Method == http.MethodGet:
		h.getRules(w, ep)
	case ep.method == "bulkDelete" && r.Method == http.MethodPost:
		h.bulkDelete(w, r, ep)
	case ep.method == "ruleCoverage" && r.Method == http.MethodGet:
		h.ruleCoverage(w, ep)
	case ep.method == "ruleCoverage.html" && r.Method == http.MethodGet:
		h.ruleCoverageHTML(w, ep)
	case ep.method == "import" || ep.method == "export" || ep.method == "indexUsage":
		writeError(w, status.Errorf(codes.Unimplemented, "The emulator's :%s endpoint is not supported by Pyric; Pyric persists its data itself (see `pyric serve`).", ep.method))
	default:
		writeError(w, status.Errorf(codes.NotFound, "%s %s: no such emulator endpoint", r.Method, r.URL.Path))
	}
}

// putRules compiles and installs new rules. A compile error answers 400
// with the emulator's "Error compiling rules:\nL1:53 …" message and keeps
// the previous rules live; success answers the warnings as issues.
func (h *httpHandler) putRules(w http.ResponseWriter, r *http.Request, ep emulatorPath) {
	data, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req setRulesRequest
	if err := json.Unmarshal(data, &req); err != nil {
		writeError(w, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received for SetSecurityRulesRequest: %v; want {\"rules\": {\"files\": [{\"name\": \"firestore.rules\", \"content\": \"…\"}]}}.", err))
		return
	}
	if req.Rules == nil || len(req.Rules.Files) == 0 {
		writeError(w, status.Error(codes.InvalidArgument, "rules.files is empty: send {\"rules\": {\"files\": [{\"content\": \"<firestore.rules source>\"}]}}."))
		return
	}
	if len(req.Rules.Files) > 1 {
		writeError(w, status.Errorf(codes.InvalidArgument, "rules.files has %d files; Pyric loads one firestore.rules file.", len(req.Rules.Files)))
		return
	}
	f := req.Rules.Files[0]
	name := f.Name
	diags, err := h.s.Rules().SetProject(ep.project, name, f.Content)
	var ce *firestore.CompileError
	if errors.As(err, &ce) {
		writeError(w, status.Error(codes.InvalidArgument, ce.EmulatorMessage()))
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	h.cov.start()
	out := rulesResponse{Issues: issues(name, diags)}
	emulatorAPI.JSON(w, http.StatusOK, out)
}

// issues renders warnings as the emulator's issues.
func issues(name string, diags source.Diagnostics) []rulesIssue {
	if name == "" {
		name = "firestore.rules"
	}
	var out []rulesIssue
	for _, d := range diags {
		if d.Severity == source.Error {
			continue
		}
		end := d.Span.End.Offset - 1
		if end < d.Span.Start.Offset {
			end = d.Span.Start.Offset
		}
		out = append(out, rulesIssue{
			SourcePosition: sourcePosition{FileName: name, Line: d.Span.Start.Line, Column: d.Span.Start.Column,
				CurrentOffset: d.Span.Start.Offset, EndOffset: end},
			Description: d.Message, Severity: "WARNING"})
	}
	return out
}

func (h *httpHandler) getRules(w http.ResponseWriter, ep emulatorPath) {
	name, text, loaded := h.s.Rules().Source(ep.project)
	if !loaded {
		emulatorAPI.JSON(w, http.StatusOK, rulesResponse{})
		return
	}
	emulatorAPI.JSON(w, http.StatusOK, rulesResponse{Rules: &rulesSource{Files: []rulesFile{{Name: name, Content: text}}},
		Issues: issues(name, h.s.Rules().Warnings(ep.project))})
}

// clearData deletes every document of a database, or of the subtree a path
// names, as admin: listeners see the deletions and persistence records
// them, as for any other write.
func (h *httpHandler) clearData(w http.ResponseWriter, r *http.Request, ep emulatorPath) {
	db := ep.db()
	prefix := ep.docPath
	err := h.deleteWhere(r.Context(), db, func(rel string) bool {
		return prefix == "" || rel == prefix || strings.HasPrefix(rel, prefix+"/")
	})
	if err != nil {
		writeError(w, err)
		return
	}
	api.Body(w, http.StatusOK, []byte("{}"))
}

// bulkDelete deletes every document of the named collection groups.
func (h *httpHandler) bulkDelete(w http.ResponseWriter, r *http.Request, ep emulatorPath) {
	data, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req struct {
		CollectionIDs []string `json:"collectionIds"`
		NamespaceIDs  []string `json:"namespaceIds"`
	}
	if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &req); err != nil {
			writeError(w, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received for BulkDeleteRequest: %v.", err))
			return
		}
	}
	groups := map[string]bool{}
	for _, c := range req.CollectionIDs {
		groups[c] = true
	}
	err = h.deleteWhere(r.Context(), ep.db(), func(rel string) bool {
		segs := strings.Split(rel, "/")
		return len(groups) == 0 || groups[segs[len(segs)-2]]
	})
	if err != nil {
		writeError(w, err)
		return
	}
	api.Body(w, http.StatusOK, []byte("{}"))
}

// deleteWhere deletes, as admin, the current documents whose relative path
// matches, in commits of at most firestore.MaxWritesPerCommit writes.
func (h *httpHandler) deleteWhere(ctx context.Context, db firestore.DatabaseName, match func(rel string) bool) error {
	e := h.s.opts.Engine
	root := db.String() + "/documents/"
	var writes []*pb.Write
	flush := func() error {
		if len(writes) == 0 {
			return nil
		}
		_, err := e.Commit(ctx, identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(), Writes: writes})
		writes = writes[:0]
		return err
	}
	for _, d := range e.Dump(db) {
		rel := strings.TrimPrefix(d.GetName(), root)
		if !match(rel) {
			continue
		}
		writes = append(writes, &pb.Write{Operation: &pb.Write_Delete{Delete: d.GetName()}})
		if len(writes) == firestore.MaxWritesPerCommit {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
