package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/expr"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/source"
)

// maxUndo bounds the undo and redo stacks.
const maxUndo = 100

// docChange is one document's state before and after a write (nil: absent).
type docChange struct {
	Path   string         `json:"path"`
	Before map[string]any `json:"before"`
	After  map[string]any `json:"after"`
}

// change is one undoable step: the documents one call changed.
type change []docChange

func (s *Server) record(c change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.undo = append(s.undo, c)
	if len(s.undo) > maxUndo {
		s.undo = s.undo[len(s.undo)-maxUndo:]
	}
	s.redo = nil
}

func explanationOf(d firestore.AuthzDecision) *fsrules.Decision {
	fd, _ := d.Explanation.(*fsrules.Decision)
	return fd
}

type simCreateIn struct {
	Rules     string                    `json:"rules" jsonschema:"firestore.rules source (rules_version = '2')"`
	Documents map[string]map[string]any `json:"documents,omitempty" jsonschema:"documents to seed, {path: fields}, written as admin"`
}

type simExecuteIn struct {
	Method string         `json:"method" jsonschema:"create, update (merge top-level fields into the existing document) or delete"`
	Path   string         `json:"path" jsonschema:"document path, e.g. users/alice"`
	Auth   *Auth          `json:"auth" jsonschema:"request.auth: {uid, token} for a signed-in user, null for signed out"`
	Data   map[string]any `json:"data,omitempty" jsonschema:"fields written by create or update"`
}

type simReadIn struct {
	Path          string `json:"path" jsonschema:"document path (get) or collection path (list)"`
	Method        string `json:"method,omitempty" jsonschema:"get (default) or list"`
	Auth          *Auth  `json:"auth,omitempty" jsonschema:"request.auth when evaluateRules is true: {uid, token} or null"`
	EvaluateRules bool   `json:"evaluateRules,omitempty" jsonschema:"judge the read with Security Rules as auth (default false: admin read)"`
}

type simOp struct {
	Method string         `json:"method" jsonschema:"create, update or delete"`
	Path   string         `json:"path" jsonschema:"document path"`
	Data   map[string]any `json:"data,omitempty" jsonschema:"fields, for create and update"`
}

type simBatchIn struct {
	Operations []simOp `json:"operations" jsonschema:"writes applied atomically: if any is denied none applies; each is judged against the state before the batch (getAfter sees the whole batch)"`
	Auth       *Auth   `json:"auth" jsonschema:"request.auth: {uid, token} or null"`
}

type autoIDIn struct {
	Collection string         `json:"collection" jsonschema:"collection path"`
	Auth       *Auth          `json:"auth" jsonschema:"request.auth: {uid, token} or null"`
	Data       map[string]any `json:"data" jsonschema:"fields of the new document"`
}

type txWrite struct {
	Method string         `json:"method" jsonschema:"create, update (merge top-level fields), set (replace) or delete"`
	Path   string         `json:"path" jsonschema:"document path"`
	Data   map[string]any `json:"data,omitempty" jsonschema:"fields; any value may be {\"$expr\": \"...\"}, computed from the reads ($alias.field), now and auth, e.g. {\"$expr\": \"$acct.balance - 30\"}"`
}

type simTxIn struct {
	Reads        map[string]string `json:"reads,omitempty" jsonschema:"documents read first, {alias: path}; an expression reads one as $alias (null when missing)"`
	Writes       []txWrite         `json:"writes,omitempty" jsonschema:"writes committed atomically after the reads"`
	Auth         *Auth             `json:"auth" jsonschema:"request.auth: {uid, token} or null"`
	ReadOnly     bool              `json:"readOnly,omitempty" jsonschema:"refuse any write (readOnlyViolation) and only read"`
	IncludeReads bool              `json:"includeReads,omitempty" jsonschema:"return what each alias read"`
}

type eventsIn struct {
	Limit              int    `json:"limit,omitempty" jsonschema:"most recent events to return (default 20, at most 500)"`
	Kind               string `json:"kind,omitempty" jsonschema:"only events of this kind: request, commit, listener, mutation, boundary"`
	Verdict            string `json:"verdict,omitempty" jsonschema:"only requests with this verdict: allow, deny, bypassed (admin), unsupported, error"`
	IncludeExplanation bool   `json:"includeExplanation,omitempty" jsonschema:"include the rules engine's full explanation (large)"`
}

type noArgs struct{}

func (s *Server) addSimulatorTools() {
	addTool(s, "firestore_simulator_create", "Reset the sandbox and load firestore.rules plus seed documents. Returns the rules' lint diagnostics and the number of documents seeded; rules that don't compile load nothing.",
		func(ctx context.Context, in *simCreateIn, _ []byte) *result {
			file := source.NewFile("firestore.rules", in.Rules)
			lres := lint.Lint(file, lint.Options{Service: lint.Firestore})
			diags := diagnostics(lres.Diagnostics)
			gate, cdiags := firestore.NewRulesGate(file)
			if gate == nil {
				r := failure("RULES_INVALID", fmt.Sprintf("the rules do not compile (%d error(s)); nothing was loaded", countErrors(cdiags)), true, "fix the diagnostics in data.lint and call again")
				r.data = map[string]any{"lint": diags}
				return r
			}
			for p := range in.Documents {
				if err := firestore.ValidateDocumentPath(relPath(p)); err != nil {
					return invalid("documents[%q]: %v", p, err)
				}
			}
			eng, err := s.engine()
			if err != nil {
				return engineFailure(err, "load the simulator")
			}
			if err := s.sb.Reset(); err != nil {
				return failure("INTERNAL", "reset: "+err.Error(), false, "")
			}
			eng.SetRules(gate)
			s.mu.Lock()
			s.undo, s.redo = nil, nil
			s.mu.Unlock()
			paths := make([]string, 0, len(in.Documents))
			for p := range in.Documents {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				if err := s.adminPut(ctx, relPath(p), nonNil(in.Documents[p])); err != nil {
					return engineFailure(err, "seed "+p)
				}
			}
			return okResult(fmt.Sprintf("loaded rules (%d lint diagnostic(s)) and %d document(s)", len(diags), len(paths)),
				map[string]any{"lint": diags, "documentCount": len(paths)})
		})

	addTool(s, "firestore_simulator_execute", "Run one write as auth through Security Rules against the sandbox's data. A denial returns allowed=false with debugMessages naming the deciding rule's line, its condition and the sub-expressions that failed.",
		func(ctx context.Context, in *simExecuteIn, _ []byte) *result {
			kind := writeKind(in.Method)
			if kind != wCreate && kind != wUpdate && kind != wDelete {
				return invalid("method: want create, update or delete, got %q", in.Method)
			}
			who := authIdentity(ctx, in.Auth)
			path := relPath(in.Path)
			return withWho(s.simWrites(ctx, who, []simOp{{Method: in.Method, Path: path, Data: in.Data}}, false), who)
		})

	addTool(s, "firestore_simulator_batch", "Run several writes atomically as auth: any denial means none apply.",
		func(ctx context.Context, in *simBatchIn, _ []byte) *result {
			if len(in.Operations) == 0 || len(in.Operations) > MaxBatchOps {
				return invalid("operations: give 1 to %d operations, got %d", MaxBatchOps, len(in.Operations))
			}
			for i, op := range in.Operations {
				if k := writeKind(op.Method); k != wCreate && k != wUpdate && k != wDelete {
					return invalid("operations[%d].method: want create, update or delete, got %q", i, op.Method)
				}
			}
			who := authIdentity(ctx, in.Auth)
			return withWho(s.simWrites(ctx, who, in.Operations, true), who)
		})

	addTool(s, "firestore_create_with_auto_id", "Create a document with a minted id in a collection, as auth through Security Rules.",
		func(ctx context.Context, in *autoIDIn, _ []byte) *result {
			coll := relPath(in.Collection)
			if err := firestore.ValidateCollectionPath(coll); err != nil {
				return invalid("collection: %v", err)
			}
			who := authIdentity(ctx, in.Auth)
			r := s.simWrites(ctx, who, []simOp{{Method: "create", Path: coll + "/" + s.sb.NewID(), Data: in.Data}}, false)
			return withWho(r, who)
		})

	addTool(s, "firestore_simulator_read", "Read a document (get) or a collection (list): as admin by default, or as auth through Security Rules when evaluateRules is true.",
		func(ctx context.Context, in *simReadIn, _ []byte) *result {
			method := in.Method
			if method == "" {
				method = "get"
			}
			who := adminAgent(ctx)
			if in.EvaluateRules {
				who = authIdentity(ctx, in.Auth)
			}
			path := relPath(in.Path)
			switch method {
			case "get":
				if err := firestore.ValidateDocumentPath(path); err != nil {
					return invalid("path: %v", err)
				}
				data, err := s.getDoc(ctx, who, path)
				if err != nil {
					if r := engineFailureAs(err, "get "+path, who.IsAuthenticated()); r.err.Code == "PERMISSION_DENIED" {
						r.ok, r.err, r.summary = false, nil, "DENIED get "+path
						return withWho(r, who)
					}
					return withWho(engineFailureAs(err, "get "+path, who.IsAuthenticated()), who)
				}
				return withWho(okResult(fmt.Sprintf("get %s: %s", path, existsWord(data != nil)), map[string]any{"allowed": true, "exists": data != nil, "data": data}), who)
			case "list":
				var as *As
				if in.EvaluateRules {
					if in.Auth == nil {
						as = &As{Anonymous: true}
					} else {
						as = &As{UID: in.Auth.UID, Claims: in.Auth.Token}
					}
				}
				r := s.query(ctx, path, nil, "", 1000, as)
				if r.err != nil && r.err.Code == "PERMISSION_DENIED" {
					r.ok, r.err, r.summary = false, nil, "DENIED list "+path
				} else if r.err == nil {
					r.data.(map[string]any)["allowed"] = true
				}
				return r
			}
			return invalid("method: want get or list, got %q", method)
		})

	addTool(s, "firestore_simulator_transaction", "A declarative transaction as auth: read the documents in reads (judged by rules), compute write values with $expr from them, then commit every write atomically through Security Rules.",
		func(ctx context.Context, in *simTxIn, _ []byte) *result {
			who := authIdentity(ctx, in.Auth)
			return withWho(s.transaction(ctx, who, in), who)
		})

	addTool(s, "firestore_simulator_undo", "Undo the last write made through these tools (restores the documents it changed, as admin).",
		func(ctx context.Context, _ *noArgs, _ []byte) *result { return s.step(ctx, true) })
	addTool(s, "firestore_simulator_redo", "Redo the last undone write.",
		func(ctx context.Context, _ *noArgs, _ []byte) *result { return s.step(ctx, false) })

	addTool(s, "firestore_simulator_events", "Recent sandbox events (requests with their rules verdicts, commits, listener deliveries), newest last.",
		func(ctx context.Context, in *eventsIn, _ []byte) *result {
			limit := in.Limit
			if limit == 0 {
				limit = 20
			}
			if limit < 0 || limit > 500 {
				return invalid("limit: want 1 to 500, got %d", limit)
			}
			var out []event.Event
			for _, e := range s.history() {
				if (in.Kind == "" || string(e.Kind) == in.Kind) && (in.Verdict == "" || string(verdictOf(&e)) == in.Verdict) {
					out = append(out, e)
				}
			}
			if len(out) > limit {
				out = out[len(out)-limit:]
			}
			if !in.IncludeExplanation {
				out = stripExplanations(out)
			}
			if out == nil {
				out = []event.Event{}
			}
			return okResult(fmt.Sprintf("%d event(s)", len(out)), map[string]any{"events": out})
		})
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func existsWord(b bool) string {
	if b {
		return "exists"
	}
	return "missing"
}

// simWrites commits ops as who (atomically when batch) and reports the
// simulator's {allowed, debugMessages, writes}.
func (s *Server) simWrites(ctx context.Context, who identity.Identity, ops []simOp, batch bool) *result {
	writes := make([]*pb.Write, len(ops))
	paths := make([]string, len(ops))
	for i, op := range ops {
		paths[i] = relPath(op.Path)
		w, err := s.buildWrite(writeKind(op.Method), paths[i], op.Data)
		if err != nil {
			return invalid("operations[%d]: %v", i, err)
		}
		writes[i] = w
	}
	return s.commitSim(ctx, who, ops, paths, writes, nil, nil)
}

// commitSim commits writes (in tx when given) and shapes the simulator's
// result; applied writes are recorded for undo.
func (s *Server) commitSim(ctx context.Context, who identity.Identity, ops []simOp, paths []string, writes []*pb.Write, tx []byte, extra map[string]any) *result {
	before := make([]map[string]any, len(paths))
	for i, p := range paths {
		before[i], _ = s.adminGet(ctx, p)
	}
	err := s.commit(ctx, who, writes, tx)
	perWrite := make([]map[string]any, len(ops))
	for i, op := range ops {
		perWrite[i] = map[string]any{"path": paths[i], "method": op.Method}
	}
	data := map[string]any{"writes": perWrite}
	for k, v := range extra {
		data[k] = v
	}
	if d, denied := firestore.DenialOf(err); denied {
		msgs := debugMessages(d.Decision)
		for i := range ops {
			if paths[i] == d.Path {
				perWrite[i]["allowed"] = false
				perWrite[i]["debugMessages"] = msgs
			} else {
				perWrite[i]["allowed"] = nil
				perWrite[i]["error"] = "not applied: another write of the request was denied"
			}
		}
		data["allowed"] = false
		data["debugMessages"] = msgs
		data["suggestedFix"] = suggestFix(fixInfoOf(explanationOf(d.Decision)), string(d.Method), d.Path, who.IsAuthenticated())
		return &result{ok: false, summary: fmt.Sprintf("DENIED %s %s as %s: %s", d.Method, d.Path, describeWho(who), d.Decision.Reason), data: data}
	}
	if err != nil {
		r := engineFailure(err, "commit")
		data["allowed"] = true
		data["error"] = r.err
		r.data = data
		return r
	}
	var ch change
	for i, p := range paths {
		after, _ := s.adminGet(ctx, p)
		ch = append(ch, docChange{Path: p, Before: before[i], After: after})
		perWrite[i]["allowed"] = true
	}
	s.record(ch)
	data["allowed"] = true
	data["debugMessages"] = []string{"Simulated: ALLOW"}
	what := fmt.Sprintf("%s %s", ops[0].Method, paths[0])
	if len(ops) > 1 {
		what = fmt.Sprintf("%d writes", len(ops))
	}
	return okResult(fmt.Sprintf("ALLOWED %s as %s", what, describeWho(who)), data)
}

func (s *Server) transaction(ctx context.Context, who identity.Identity, in *simTxIn) *result {
	if len(in.Writes) > MaxBatchOps {
		return invalid("writes: at most %d, got %d", MaxBatchOps, len(in.Writes))
	}
	if len(in.Reads) > MaxBatchOps {
		return invalid("reads: at most %d, got %d", MaxBatchOps, len(in.Reads))
	}
	for i, w := range in.Writes {
		if k := writeKind(w.Method); k != wCreate && k != wUpdate && k != wSet && k != wDelete {
			return invalid("writes[%d].method: want create, update, set or delete, got %q", i, w.Method)
		}
		if err := firestore.ValidateDocumentPath(relPath(w.Path)); err != nil {
			return invalid("writes[%d].path: %v", i, err)
		}
	}
	aliases := make([]string, 0, len(in.Reads))
	for a, p := range in.Reads {
		if !validAlias(a) {
			return invalid("reads: alias %q must be a name of letters, digits and _ (read it as $%s)", a, a)
		}
		if err := firestore.ValidateDocumentPath(relPath(p)); err != nil {
			return invalid("reads[%q]: %v", a, err)
		}
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	if in.ReadOnly && len(in.Writes) > 0 {
		return &result{ok: false, summary: "readOnly transaction has writes: nothing was read or written",
			data: map[string]any{"allowed": false, "readOnlyViolation": true, "writes": []any{}}}
	}
	eng, err := s.engine()
	if err != nil {
		return engineFailure(err, "transaction")
	}
	bt, err := eng.BeginTransaction(ctx, who, &pb.BeginTransactionRequest{Database: s.dbName().String()})
	if err != nil {
		return engineFailure(err, "begin transaction")
	}
	tx := bt.Transaction
	committed := false
	defer func() {
		if !committed {
			_ = eng.Rollback(context.WithoutCancel(ctx), who, &pb.RollbackRequest{Database: s.dbName().String(), Transaction: tx})
		}
	}()
	env := expr.Env{"now": s.sb.Now().UTC()}
	if who.IsAuthenticated() {
		env["auth"] = map[string]any{"uid": who.UID, "token": who.Token}
	} else {
		env["auth"] = nil
	}
	reads := map[string]any{}
	for _, a := range aliases {
		p := relPath(in.Reads[a])
		rs, err := eng.BatchGetDocuments(ctx, who, &pb.BatchGetDocumentsRequest{Database: s.dbName().String(), Documents: []string{s.dbName().DocName(p)},
			ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: tx}})
		if d, denied := firestore.DenialOf(err); denied {
			return &result{ok: false, summary: fmt.Sprintf("DENIED read of $%s (%s) as %s: %s", a, p, describeWho(who), d.Decision.Reason),
				data: map[string]any{"allowed": false, "writes": []any{}, "deniedRead": map[string]any{"alias": a, "path": p},
					"debugMessages": debugMessages(d.Decision)}}
		}
		if err != nil {
			return engineFailure(err, "read "+p)
		}
		var docPlain any
		if f := rs[0].GetFound(); f != nil {
			docPlain = plainFields(f.Fields)
			reads[a] = map[string]any{"path": p, "exists": true, "data": s.encode(f.Fields)}
		} else {
			reads[a] = map[string]any{"path": p, "exists": false}
		}
		env["$"+a] = docPlain
	}
	ops := make([]simOp, len(in.Writes))
	paths := make([]string, len(in.Writes))
	writes := make([]*pb.Write, len(in.Writes))
	for i, w := range in.Writes {
		data := w.Data
		if data != nil && expr.HasExpr(data) {
			resolved, err := expr.Resolve(data, env)
			if err != nil {
				r := failure("EXPR_ERROR", fmt.Sprintf("writes[%d].data.%v", i, err), true, "fix the expression; reads are $alias (null when the document is missing), plus now and auth")
				r.data = map[string]any{"allowed": false, "writeIndex": i, "expression": exprDetail(err)}
				return r
			}
			m, _ := resolved.(map[string]any)
			data = toWireNatives(m)
		}
		ops[i] = simOp{Method: w.Method, Path: w.Path, Data: data}
		paths[i] = relPath(w.Path)
		pw, err := s.buildWrite(writeKind(w.Method), paths[i], data)
		if err != nil {
			return invalid("writes[%d]: %v", i, err)
		}
		writes[i] = pw
	}
	extra := map[string]any{}
	if in.IncludeReads {
		extra["reads"] = reads
	}
	if len(writes) == 0 {
		committed = true
		_ = eng.Rollback(ctx, who, &pb.RollbackRequest{Database: s.dbName().String(), Transaction: tx})
		extra["allowed"] = true
		extra["writes"] = []any{}
		return okResult(fmt.Sprintf("read %d document(s), no writes", len(aliases)), extra)
	}
	r := s.commitSim(ctx, who, ops, paths, writes, tx, extra)
	committed = true
	return r
}

func validAlias(a string) bool {
	if a == "" {
		return false
	}
	for i, c := range a {
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

func exprDetail(err error) map[string]any {
	out := map[string]any{"message": err.Error()}
	var we *expr.WalkError
	if errors.As(err, &we) {
		out["path"] = we.Path
	}
	var le *expr.LexError
	var pe *expr.ParseError
	var ee *expr.EvalError
	switch {
	case errors.As(err, &le):
		out["kind"], out["position"] = "lex", le.Pos
	case errors.As(err, &pe):
		out["kind"], out["position"] = "parse", pe.Pos
	case errors.As(err, &ee):
		out["kind"], out["position"] = "eval", ee.Pos
	default:
		out["kind"] = "shape"
	}
	out["limit"] = errors.Is(err, expr.ErrLimit)
	return out
}

// plainFields converts document fields to the plain values expressions
// compute with: int64, float64, string, bool, nil, time.Time, []any,
// map[string]any (references as their relative path, bytes as []byte).
func plainFields(f map[string]*pb.Value) map[string]any {
	out := make(map[string]any, len(f))
	for k, v := range f {
		out[k] = plain(v)
	}
	return out
}

func plain(v *pb.Value) any {
	switch x := v.GetValueType().(type) {
	case *pb.Value_BooleanValue:
		return x.BooleanValue
	case *pb.Value_IntegerValue:
		return x.IntegerValue
	case *pb.Value_DoubleValue:
		return x.DoubleValue
	case *pb.Value_StringValue:
		return x.StringValue
	case *pb.Value_TimestampValue:
		return x.TimestampValue.AsTime().UTC()
	case *pb.Value_BytesValue:
		return x.BytesValue
	case *pb.Value_ReferenceValue:
		if i := strings.Index(x.ReferenceValue, "/documents/"); i >= 0 {
			return x.ReferenceValue[i+len("/documents/"):]
		}
		return x.ReferenceValue
	case *pb.Value_GeoPointValue:
		return map[string]any{"latitude": x.GeoPointValue.GetLatitude(), "longitude": x.GeoPointValue.GetLongitude()}
	case *pb.Value_ArrayValue:
		out := make([]any, len(x.ArrayValue.GetValues()))
		for i, e := range x.ArrayValue.GetValues() {
			out[i] = plain(e)
		}
		return out
	case *pb.Value_MapValue:
		return plainFields(x.MapValue.GetFields())
	}
	return nil
}

// toWireNatives makes expression results decodable as document fields:
// timestamps become wire values (the JSON form has no Go time).
func toWireNatives(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = wireNative(v)
	}
	return out
}

func wireNative(v any) any {
	switch x := v.(type) {
	case time.Time:
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(x)}}
	case map[string]any:
		return toWireNatives(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wireNative(e)
		}
		return out
	}
	return v
}

// step undoes (or redoes) the last change as admin.
func (s *Server) step(ctx context.Context, undo bool) *result {
	s.mu.Lock()
	from, name := &s.undo, "undo"
	if !undo {
		from, name = &s.redo, "redo"
	}
	if len(*from) == 0 {
		s.mu.Unlock()
		return failure("NOTHING_TO_"+strings.ToUpper(name), "nothing to "+name, true, "make a write with the simulator or data tools first")
	}
	c := (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	s.mu.Unlock()
	var paths []string
	for i := range c {
		d := c[i]
		if undo {
			d = c[len(c)-1-i]
		}
		state := d.After
		if undo {
			state = d.Before
		}
		if err := s.adminPut(ctx, d.Path, state); err != nil {
			return engineFailure(err, name+" "+d.Path)
		}
		paths = append(paths, d.Path)
	}
	s.mu.Lock()
	if undo {
		s.redo = append(s.redo, c)
	} else {
		s.undo = append(s.undo, c)
	}
	remaining := len(s.undo)
	redoable := len(s.redo)
	s.mu.Unlock()
	return okResult(fmt.Sprintf("%s restored %s", name, strings.Join(paths, ", ")), map[string]any{"paths": paths, "undoable": remaining, "redoable": redoable})
}

// lintDiag is a diagnostic as tools return it.
type lintDiag struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Fix      string `json:"fix,omitempty"`
}

func diagnostics(ds source.Diagnostics) []lintDiag {
	out := make([]lintDiag, 0, len(ds))
	for _, d := range ds {
		out = append(out, lintDiag{Severity: d.Severity.String(), Code: d.Code, Message: d.Message, Line: d.Span.Start.Line, Column: d.Span.Start.Column, Fix: d.Fix})
	}
	return out
}

func countErrors(ds source.Diagnostics) int {
	n := 0
	for _, d := range ds {
		if d.Severity == source.Error {
			n++
		}
	}
	return n
}
