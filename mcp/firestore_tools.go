package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
)

// MaxBatchOps is the most operations firestore_batch_write takes, as a
// production batch.
const MaxBatchOps = 500

// dbName names the sandbox's default Firestore database.
func (s *Server) dbName() firestore.DatabaseName {
	return firestore.DatabaseName{Project: s.sb.Project(), Database: firestore.DefaultDatabase}
}

// errNoFirestore is a Firestore tool called on a sandbox without Firestore.
var errNoFirestore = errors.New("the Firestore service is not running in this sandbox")

// engine is the sandbox's Firestore engine, or errNoFirestore.
func (s *Server) engine() (*firestore.Engine, error) {
	if e, ok := sandbox.Lookup[*firestore.Engine](s.sb); ok {
		return e, nil
	}
	return nil, errNoFirestore
}

func (s *Server) decode(data map[string]any) (map[string]*pb.Value, error) {
	if data == nil {
		return map[string]*pb.Value{}, nil
	}
	return firestore.DecodeFields(data, s.dbName())
}

func (s *Server) encode(fields map[string]*pb.Value) map[string]any {
	return firestore.EncodeFields(fields, s.dbName())
}

// getDoc reads a document as who; missing is (nil, nil).
func (s *Server) getDoc(ctx context.Context, who identity.Identity, path string) (map[string]any, error) {
	eng, err := s.engine()
	if err != nil {
		return nil, err
	}
	d, err := eng.GetDocument(ctx, who, &pb.GetDocumentRequest{Name: s.dbName().DocName(path)})
	if errors.Is(err, firestore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.encode(d.Fields), nil
}

func (s *Server) adminGet(ctx context.Context, path string) (map[string]any, error) {
	return s.getDoc(ctx, adminAgent(ctx), path)
}

// adminPut sets (or, for nil data, deletes) a document as the agent's admin.
func (s *Server) adminPut(ctx context.Context, path string, data map[string]any) error {
	kind := wSet
	if data == nil {
		kind = wDelete
	}
	w, err := s.buildWrite(kind, path, data)
	if err != nil {
		return err
	}
	return s.commit(ctx, adminAgent(ctx), []*pb.Write{w}, nil)
}

func (s *Server) commit(ctx context.Context, who identity.Identity, writes []*pb.Write, tx []byte) error {
	eng, err := s.engine()
	if err != nil {
		return err
	}
	_, err = eng.Commit(ctx, who, &pb.CommitRequest{Database: s.dbName().String(), Writes: writes, Transaction: tx})
	return err
}

type writeKind string

const (
	wSet    writeKind = "set"    // replace (create when missing)
	wCreate writeKind = "create" // fails when the document exists
	wUpdate writeKind = "update" // merge top-level fields; fails when missing
	wDelete writeKind = "delete"
)

func (s *Server) buildWrite(kind writeKind, path string, data map[string]any) (*pb.Write, error) {
	if err := firestore.ValidateDocumentPath(path); err != nil {
		return nil, err
	}
	name := s.dbName().DocName(path)
	if kind == wDelete {
		return &pb.Write{Operation: &pb.Write_Delete{Delete: name}}, nil
	}
	fields, err := s.decode(data)
	if err != nil {
		return nil, err
	}
	w := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: name, Fields: fields}}}
	switch kind {
	case wCreate:
		w.CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}
	case wUpdate:
		w.CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}
		mask := make([]string, 0, len(data))
		for k := range data {
			mask = append(mask, firestore.FieldPath{k}.String())
		}
		sort.Strings(mask)
		w.UpdateMask = &pb.DocumentMask{FieldPaths: mask}
	}
	return w, nil
}

// engineFailure maps an engine error to a tool failure. A denial carries
// the rules explanation (debugMessages, suggestedFix).
func engineFailure(err error, what string) *result { return engineFailureAs(err, what, true) }

// engineFailureAs is engineFailure knowing whether the caller was signed in.
func engineFailureAs(err error, what string, authed bool) *result {
	if d, ok := firestore.DenialOf(err); ok {
		fd := explanationOf(d.Decision)
		r := failure("PERMISSION_DENIED", fmt.Sprintf("%s: denied by Security Rules (%s %s)", what, d.Method, d.Path), true,
			suggestFix(fixInfoOf(fd), string(d.Method), d.Path, authed))
		r.data = map[string]any{"allowed": false, "method": d.Method, "path": d.Path, "reason": d.Decision.Reason, "debugMessages": debugMessages(d.Decision)}
		return r
	}
	if errors.Is(err, errNoFirestore) {
		return failure("SERVICE_UNAVAILABLE", what+": "+err.Error(), false, "start pyric with the firestore service enabled")
	}
	code := firestore.Code(err)
	name := strings.ToUpper(code.String())
	switch {
	case errors.Is(err, firestore.ErrNotFound):
		return failure("NOT_FOUND", what+": "+err.Error(), true, "check the path, or create the document first")
	case errors.Is(err, firestore.ErrAlreadyExists):
		return failure("ALREADY_EXISTS", what+": "+err.Error(), true, "use firestore_create_document (set) or firestore_update_document instead")
	case errors.Is(err, firestore.ErrInvalidArgument):
		return failure("INVALID_ARGUMENT", what+": "+err.Error(), true, "correct the argument and call again")
	case errors.Is(err, firestore.ErrFailedPrecondition):
		return failure("FAILED_PRECONDITION", what+": "+err.Error(), true, "")
	case errors.Is(err, firestore.ErrAborted):
		return failure("ABORTED", what+": "+err.Error(), true, "a concurrent write conflicted: call again")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return failure("CANCELLED", what+": "+err.Error(), true, "call again")
	}
	return failure(name, what+": "+err.Error(), false, "")
}

type getDocumentIn struct {
	Path string `json:"path" jsonschema:"document path relative to the database root, e.g. users/alice"`
	As   *As    `json:"as,omitempty" jsonschema:"identity to read as; absent = admin (rules bypassed)"`
}

type listDocumentsIn struct {
	Collection string `json:"collection" jsonschema:"collection path, e.g. users or users/alice/posts"`
	OrderBy    string `json:"orderBy,omitempty" jsonschema:"field to order by, optionally followed by ' desc'"`
	Limit      int    `json:"limit,omitempty" jsonschema:"maximum number of documents (default 100, at most 1000)"`
	As         *As    `json:"as,omitempty" jsonschema:"identity to list as; absent = admin"`
}

type writeDocIn struct {
	Path string         `json:"path" jsonschema:"document path, e.g. users/alice"`
	Data map[string]any `json:"data" jsonschema:"fields in Pyric's JSON form: plain JSON, plus markers such as {\"__type\": \"timestamp\", \"seconds\": 1} and {\"__type\": \"reference\", \"path\": \"users/a\"}"`
	As   *As            `json:"as,omitempty" jsonschema:"identity to write as; absent = admin"`
}

type addDocIn struct {
	Collection string         `json:"collection" jsonschema:"collection path to add to"`
	Data       map[string]any `json:"data" jsonschema:"fields of the new document"`
	As         *As            `json:"as,omitempty" jsonschema:"identity to write as; absent = admin"`
}

type deleteDocIn struct {
	Path string `json:"path" jsonschema:"document path"`
	As   *As    `json:"as,omitempty" jsonschema:"identity to delete as; absent = admin"`
}

type batchOp struct {
	Op   string         `json:"op" jsonschema:"set (replace), update (merge top-level fields; the document must exist) or delete"`
	Path string         `json:"path" jsonschema:"document path"`
	Data map[string]any `json:"data,omitempty" jsonschema:"fields, for set and update"`
}

type batchWriteIn struct {
	Operations []batchOp `json:"operations" jsonschema:"at most 500 operations, applied in order, each on its own (not atomic); stops at the first failure"`
	As         *As       `json:"as,omitempty" jsonschema:"identity to write as; absent = admin"`
}

type whereClause struct {
	Field string `json:"field" jsonschema:"field path, e.g. age or address.city"`
	Op    string `json:"op" jsonschema:"one of == != < <= > >= array-contains array-contains-any in not-in"`
	Value any    `json:"value" jsonschema:"the value to compare with (JSON form)"`
}

type queryWhereIn struct {
	Collection string        `json:"collection" jsonschema:"collection path to query"`
	Where      []whereClause `json:"where" jsonschema:"filters, all of which must hold (AND)"`
	OrderBy    string        `json:"orderBy,omitempty" jsonschema:"field to order by, optionally followed by ' desc'"`
	Limit      int           `json:"limit,omitempty" jsonschema:"maximum number of documents (default 100, at most 1000)"`
	As         *As           `json:"as,omitempty" jsonschema:"identity to query as; absent = admin"`
}

var whereOps = map[string]pb.StructuredQuery_FieldFilter_Operator{
	"==": pb.StructuredQuery_FieldFilter_EQUAL, "!=": pb.StructuredQuery_FieldFilter_NOT_EQUAL,
	"<": pb.StructuredQuery_FieldFilter_LESS_THAN, "<=": pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
	">": pb.StructuredQuery_FieldFilter_GREATER_THAN, ">=": pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL,
	"array-contains": pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, "array-contains-any": pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY,
	"in": pb.StructuredQuery_FieldFilter_IN, "not-in": pb.StructuredQuery_FieldFilter_NOT_IN,
}

func (s *Server) addFirestoreTools() {
	addTool(s, "firestore_get_document", "Read one Firestore document. As admin by default; with `as` the read is judged by Security Rules and a denial is explained.",
		func(ctx context.Context, in *getDocumentIn, _ []byte) *result {
			who, bad := in.As.identity(ctx)
			if bad != nil {
				return bad
			}
			path := relPath(in.Path)
			if err := firestore.ValidateDocumentPath(path); err != nil {
				return invalid("path: %v", err)
			}
			data, err := s.getDoc(ctx, who, path)
			if err != nil {
				return withWho(engineFailureAs(err, "get "+path, who.IsAuthenticated()), who)
			}
			if data == nil {
				return withWho(okResult("no document at "+path, map[string]any{"path": path, "exists": false}), who)
			}
			return withWho(okResult(fmt.Sprintf("read %s (%d fields) as %s", path, len(data), describeWho(who)), map[string]any{"path": path, "exists": true, "data": data}), who)
		})

	addTool(s, "firestore_list_documents", "List the documents of a collection, optionally ordered and limited.",
		func(ctx context.Context, in *listDocumentsIn, _ []byte) *result {
			return s.query(ctx, in.Collection, nil, in.OrderBy, in.Limit, in.As)
		})

	addTool(s, "firestore_query_where", "Query a collection with AND-ed where filters, optional orderBy and limit. With `as`, Security Rules judge the query as production does (rules are not filters).",
		func(ctx context.Context, in *queryWhereIn, _ []byte) *result {
			return s.query(ctx, in.Collection, in.Where, in.OrderBy, in.Limit, in.As)
		})

	addTool(s, "firestore_create_document", "Create or replace a document (set without merge).",
		func(ctx context.Context, in *writeDocIn, _ []byte) *result {
			return s.writeOne(ctx, wSet, relPath(in.Path), in.Data, in.As)
		})
	addTool(s, "firestore_update_document", "Merge fields into an existing document (Firestore update: top-level fields given replace theirs; the document must exist).",
		func(ctx context.Context, in *writeDocIn, _ []byte) *result {
			return s.writeOne(ctx, wUpdate, relPath(in.Path), in.Data, in.As)
		})
	addTool(s, "firestore_add_document", "Add a document with a minted id to a collection; returns its path.",
		func(ctx context.Context, in *addDocIn, _ []byte) *result {
			coll := relPath(in.Collection)
			if err := firestore.ValidateCollectionPath(coll); err != nil {
				return invalid("collection: %v", err)
			}
			return s.writeOne(ctx, wCreate, coll+"/"+s.sb.NewID(), in.Data, in.As)
		})
	addTool(s, "firestore_delete_document", "Delete a document (deleting a missing document succeeds, as in Firestore).",
		func(ctx context.Context, in *deleteDocIn, _ []byte) *result {
			return s.writeOne(ctx, wDelete, relPath(in.Path), nil, in.As)
		})

	addTool(s, "firestore_batch_write", "Apply up to 500 set/update/delete operations in order, each on its own (not atomic); stops at the first failure and reports which operations were applied.",
		func(ctx context.Context, in *batchWriteIn, _ []byte) *result {
			who, bad := in.As.identity(ctx)
			if bad != nil {
				return bad
			}
			if len(in.Operations) == 0 || len(in.Operations) > MaxBatchOps {
				return invalid("operations: give 1 to %d operations, got %d", MaxBatchOps, len(in.Operations))
			}
			var results []map[string]any
			for i, op := range in.Operations {
				kind := writeKind(op.Op)
				if kind != wSet && kind != wUpdate && kind != wDelete {
					return withWho(invalid("operations[%d].op: want set, update or delete, got %q", i, op.Op), who)
				}
				path := relPath(op.Path)
				r := s.applyWrite(ctx, who, kind, path, op.Data)
				if r != nil {
					r.summary = fmt.Sprintf("operation %d (%s %s) failed after %d applied: %s", i, op.Op, path, i, r.summary)
					data, _ := r.data.(map[string]any)
					if data == nil {
						data = map[string]any{}
					}
					data["applied"] = results
					data["failedAt"] = i
					r.data = data
					return withWho(r, who)
				}
				results = append(results, map[string]any{"op": op.Op, "path": path})
			}
			return withWho(okResult(fmt.Sprintf("applied %d operations as %s", len(results), describeWho(who)), map[string]any{"applied": results, "count": len(results)}), who)
		})
}

func withWho(r *result, who identity.Identity) *result {
	r.who = &who
	return r
}

// applyWrite performs one write as who, recording it for undo; nil on
// success.
func (s *Server) applyWrite(ctx context.Context, who identity.Identity, kind writeKind, path string, data map[string]any) *result {
	w, err := s.buildWrite(kind, path, data)
	if err != nil {
		return engineFailureAs(err, string(kind)+" "+path, who.IsAuthenticated())
	}
	before, _ := s.adminGet(ctx, path)
	if err := s.commit(ctx, who, []*pb.Write{w}, nil); err != nil {
		return engineFailureAs(err, string(kind)+" "+path, who.IsAuthenticated())
	}
	after, _ := s.adminGet(ctx, path)
	s.record([]docChange{{Path: path, Before: before, After: after}})
	return nil
}

func (s *Server) writeOne(ctx context.Context, kind writeKind, path string, data map[string]any, as *As) *result {
	who, bad := as.identity(ctx)
	if bad != nil {
		return bad
	}
	if r := s.applyWrite(ctx, who, kind, path, data); r != nil {
		return withWho(r, who)
	}
	verb := map[writeKind]string{wSet: "set", wCreate: "created", wUpdate: "updated", wDelete: "deleted"}[kind]
	return withWho(okResult(fmt.Sprintf("%s %s as %s", verb, path, describeWho(who)), map[string]any{"path": path}), who)
}

func (s *Server) query(ctx context.Context, collection string, where []whereClause, orderBy string, limit int, as *As) *result {
	who, bad := as.identity(ctx)
	if bad != nil {
		return bad
	}
	coll := relPath(collection)
	if err := firestore.ValidateCollectionPath(coll); err != nil {
		return invalid("collection: %v", err)
	}
	if limit == 0 {
		limit = 100
	}
	if limit < 0 || limit > 1000 {
		return invalid("limit: want 1 to 1000, got %d", limit)
	}
	parent, id := "", coll
	if i := strings.LastIndexByte(coll, '/'); i >= 0 {
		parent, id = coll[:i], coll[i+1:]
	}
	q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: id}}, Limit: wrapperspb.Int32(int32(limit))}
	var filters []*pb.StructuredQuery_Filter
	for i, w := range where {
		op, ok := whereOps[w.Op]
		if !ok {
			return invalid("where[%d].op: %q is not one of == != < <= > >= array-contains array-contains-any in not-in", i, w.Op)
		}
		fp, err := firestore.ParseFieldPath(w.Field)
		if err != nil {
			return invalid("where[%d].field: %v", i, err)
		}
		v, err := firestore.DecodeValue(w.Value, s.dbName())
		if err != nil {
			return invalid("where[%d].value: %v", i, err)
		}
		filters = append(filters, &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: fp.String()}, Op: op, Value: v}}})
	}
	switch len(filters) {
	case 0:
	case 1:
		q.Where = filters[0]
	default:
		q.Where = &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{
			Op: pb.StructuredQuery_CompositeFilter_AND, Filters: filters}}}
	}
	if orderBy != "" {
		field, dir := orderBy, pb.StructuredQuery_ASCENDING
		if f, ok := strings.CutSuffix(strings.TrimSpace(orderBy), " desc"); ok {
			field, dir = strings.TrimSpace(f), pb.StructuredQuery_DESCENDING
		} else if f, ok := strings.CutSuffix(strings.TrimSpace(orderBy), " asc"); ok {
			field = strings.TrimSpace(f)
		}
		fp, err := firestore.ParseFieldPath(field)
		if err != nil {
			return invalid("orderBy: %v", err)
		}
		q.OrderBy = []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: fp.String()}, Direction: dir}}
	}
	eng, err := s.engine()
	if err != nil {
		return engineFailure(err, "query "+coll)
	}
	rs, err := eng.RunQuery(ctx, who, &pb.RunQueryRequest{Parent: s.dbName().DocName(parent), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: q}})
	if err != nil {
		return withWho(engineFailure(err, "query "+coll), who)
	}
	docs := []map[string]any{}
	prefix := s.dbName().Documents() + "/"
	for _, r := range rs {
		if d := r.GetDocument(); d != nil {
			docs = append(docs, map[string]any{"path": strings.TrimPrefix(d.Name, prefix), "data": s.encode(d.Fields)})
		}
	}
	return withWho(okResult(fmt.Sprintf("%d document(s) in %s as %s", len(docs), coll, describeWho(who)), map[string]any{"documents": docs, "count": len(docs)}), who)
}
