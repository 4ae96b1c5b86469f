package goclient

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/server/firestore/fstest"
)

// The differential fuzz: random queries and random multi-write commits,
// each sent to Pyric and to the official Cloud Firestore emulator, whose
// answers must agree (results in order, or the error code). The seed is
// logged; PYRIC_FUZZ_SEED replays one, PYRIC_FUZZ_N sets the number of
// cases of each kind.

// fuzzSeed returns the run's seed and case count.
func fuzzSeed(t *testing.T) (uint64, int) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PYRIC_FUZZ_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PYRIC_FUZZ_SEED: %v", err)
		}
		seed = v
	}
	n := 150
	if s := os.Getenv("PYRIC_FUZZ_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("PYRIC_FUZZ_N: %v", err)
		}
		n = v
	}
	t.Logf("seed %d (PYRIC_FUZZ_SEED=%d replays it), %d cases", seed, seed, n)
	return seed, n
}

// fuzzPair is Pyric and the official emulator, as owner.
func fuzzPair(t *testing.T) (ours, theirs *target) {
	if testing.Short() {
		t.Skip("starts the official emulator")
	}
	theirs = official(t)
	s := fstest.Start(t, fstest.Options{Project: "demo-fuzz"})
	return dial(t, s.Addr, "demo-fuzz"), theirs
}

// fuzzFields are the fields the query fuzz filters and orders on: two
// top-level ones, a nested one and the document key.
var fuzzFields = []string{"a", "b", "m.x", firestore.DocumentID}

// fuzzIDs are the documents' ids: mixed case, digits and underscores so
// that the key order differs from the field orders.
var fuzzIDs = []string{"A1", "B", "_z", "a0", "a10", "a2", "b", "c", "d9", "e", "f", "g", "h", "Zed", "x_1", "y", "0", "9"}

// fuzzValue is a small field value: mostly ints, some doubles, strings,
// nulls, so that type order matters too.
func fuzzValue(r *rand.Rand) any {
	switch r.IntN(10) {
	case 0:
		return "s" + strconv.Itoa(r.IntN(3))
	case 1:
		return float64(r.IntN(4)) + 0.5
	case 2:
		return nil
	default:
		return int64(r.IntN(4))
	}
}

// fuzzDoc is a random document; a field is sometimes missing.
func fuzzDoc(r *rand.Rand) map[string]any {
	d := map[string]any{}
	if r.IntN(6) > 0 {
		d["a"] = fuzzValue(r)
	}
	if r.IntN(6) > 0 {
		d["b"] = fuzzValue(r)
	}
	if r.IntN(4) > 0 {
		d["m"] = map[string]any{"x": fuzzValue(r)}
	}
	d["c"] = int64(r.IntN(3))
	return d
}

var fuzzOps = []string{"<", "<=", ">", ">=", "!="}

// fuzzQuery is one random query, built the same way on each target.
type fuzzQuery struct {
	desc  string
	build func(tg *target, coll string) (firestore.Query, error)
}

func randomQuery(r *rand.Rand) fuzzQuery {
	type filt struct {
		field, op string
		v         any
		id        string
	}
	type ord struct {
		field string
		dir   firestore.Direction
	}
	var fs []filt
	for _, i := range r.Perm(len(fuzzFields))[:1+r.IntN(3)] {
		f := filt{field: fuzzFields[i], op: fuzzOps[r.IntN(len(fuzzOps))]}
		if f.field == firestore.DocumentID {
			f.id = fuzzIDs[r.IntN(len(fuzzIDs))]
		} else {
			f.v = int64(r.IntN(4))
		}
		fs = append(fs, f)
	}
	var os []ord
	orderable := append([]string{"c"}, fuzzFields...)
	for _, i := range r.Perm(len(orderable))[:r.IntN(3)] {
		d := firestore.Asc
		if r.IntN(2) == 0 {
			d = firestore.Desc
		}
		os = append(os, ord{orderable[i], d})
	}
	limit, last := 0, false
	switch r.IntN(4) {
	case 0, 1:
		limit = 1 + r.IntN(6)
	case 2:
		if len(os) > 0 {
			limit, last = 1+r.IntN(6), true
		}
	}
	cursor, cursorDoc := r.IntN(5), fuzzIDs[r.IntN(len(fuzzIDs))]
	var desc []string
	for _, f := range fs {
		v := fmt.Sprint(f.v)
		if f.id != "" {
			v = "ref:" + f.id
		}
		desc = append(desc, fmt.Sprintf("where(%s %s %s)", f.field, f.op, v))
	}
	for _, o := range os {
		desc = append(desc, fmt.Sprintf("orderBy(%s %v)", o.field, map[firestore.Direction]string{firestore.Asc: "asc", firestore.Desc: "desc"}[o.dir]))
	}
	if limit > 0 {
		desc = append(desc, fmt.Sprintf("limit(%d last=%v)", limit, last))
	}
	desc = append(desc, []string{"", "startAfter(" + cursorDoc + ")", "endBefore(" + cursorDoc + ")", "startAt(" + cursorDoc + ")", ""}[cursor])
	return fuzzQuery{desc: strings.Join(desc, "."), build: func(tg *target, coll string) (firestore.Query, error) {
		c := tg.owner.Collection(coll)
		q := c.Query
		for _, f := range fs {
			var v any = f.v
			if f.id != "" {
				v = c.Doc(f.id)
			}
			q = q.Where(f.field, f.op, v)
		}
		for _, o := range os {
			q = q.OrderBy(o.field, o.dir)
		}
		if cursor >= 1 && cursor <= 3 {
			snap, err := c.Doc(cursorDoc).Get(bg)
			if err != nil && status.Code(err) != 5 {
				return q, err
			}
			if snap != nil && snap.Exists() {
				switch cursor {
				case 1:
					q = q.StartAfter(snap)
				case 2:
					q = q.EndBefore(snap)
				case 3:
					q = q.StartAt(snap)
				}
			}
		}
		if limit > 0 {
			if last {
				q = q.LimitToLast(limit)
			} else {
				q = q.Limit(limit)
			}
		}
		return q, nil
	}}
}

// seedCollection writes the fuzz documents to coll on tg.
func seedCollection(t *testing.T, tg *target, coll string, docs map[string]map[string]any) {
	b := tg.owner.BulkWriter(bg)
	for id, d := range docs {
		if _, err := b.Set(tg.owner.Collection(coll).Doc(id), d); err != nil {
			t.Fatal(err)
		}
	}
	b.End()
}

// TestQueryFuzzDifferential runs random queries with several inequality
// filters (on top-level and nested fields and the document key), explicit
// orders in either direction, limit, limitToLast and cursors built from
// document snapshots on both servers, and compares the documents each
// returns, in order. It also sends raw queries with positional cursors
// as long as the normalized order (explicit, implicit inequality fields,
// __name__), so that a difference in the implicit order shows.
func TestQueryFuzzDifferential(t *testing.T) {
	ours, theirs := fuzzPair(t)
	seed, n := fuzzSeed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	coll := fmt.Sprintf("qf%d", time.Now().UnixNano())
	docs := map[string]map[string]any{}
	for _, id := range fuzzIDs {
		if r.IntN(8) > 0 {
			docs[id] = fuzzDoc(r)
		}
	}
	seedCollection(t, ours, coll, docs)
	seedCollection(t, theirs, coll, docs)
	run := func(tg *target, fq fuzzQuery) (string, string) {
		q, err := fq.build(tg, coll)
		if err != nil {
			return normalize(tg.project, nil, err)
		}
		got, err := q.Documents(bg).GetAll()
		var ids []string
		for _, d := range got {
			ids = append(ids, d.Ref.ID)
		}
		return normalize(tg.project, ids, err)
	}
	agree, errs, deviations := 0, 0, 0
	for i := 0; i < n; i++ {
		fq := randomQuery(r)
		o, om := run(ours, fq)
		th, tm := run(theirs, fq)
		if th == "error FailedPrecondition" && strings.Contains(tm, "descending key scans") {
			// The emulator cannot scan keys in descending order (an
			// equality filter makes it use an index); production orders
			// by __name__ descending, and so does Pyric.
			deviations++
			continue
		}
		if o != th {
			t.Errorf("query %d %s:\n  pyric:    %s %s\n  official: %s %s", i, fq.desc, o, om, th, tm)
			continue
		}
		agree++
		if strings.HasPrefix(o, "error") {
			errs++
		}
	}
	for i := 0; i < n; i++ {
		sq, desc := randomRawQuery(r, coll)
		o, om := rawQuery(ours, sq)
		th, tm := rawQuery(theirs, sq)
		if o != th {
			t.Errorf("raw query %d %s:\n  pyric:    %s %s\n  official: %s %s", i, desc, o, om, th, tm)
			continue
		}
		if os.Getenv("PYRIC_FUZZ_LOG") != "" {
			t.Logf("raw query %d %s: %s %s", i, desc, o, om)
		}
		agree++
		if strings.HasPrefix(o, "error") {
			errs++
		}
	}
	t.Logf("%d/%d queries agree (%d of them errors on both); %d descending key scans the emulator cannot run", agree, 2*n, errs, deviations)
}

// randomRawQuery is a query with two or three inequality filters (among
// them, at times, one on the key) sent as is, without the orders a client
// SDK would add: the server's implicit order (inequality fields by path,
// then __name__, in the direction of the last explicit order) decides
// which documents a small limit keeps among ties of the explicit orders
// and of the cursor. Now and then the cursor has one value more than the
// explicit orders, which the official emulator rejects.
func randomRawQuery(r *rand.Rand, coll string) (func(project string) *pb.StructuredQuery, string) {
	fields := append([]string(nil), fuzzFields...)
	r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	ineq := fields[:2+r.IntN(2)]
	ops := make([]pb.StructuredQuery_FieldFilter_Operator, len(ineq))
	vals := make([]int64, len(ineq))
	for i := range ineq {
		ops[i] = []pb.StructuredQuery_FieldFilter_Operator{pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
			pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, pb.StructuredQuery_FieldFilter_NOT_EQUAL}[r.IntN(5)]
		vals[i] = int64(r.IntN(4))
	}
	keyID := fuzzIDs[r.IntN(len(fuzzIDs))]
	var explicit []string
	var desc []bool
	for _, f := range []string{"c", "a"}[:r.IntN(3)] {
		explicit = append(explicit, f)
		desc = append(desc, r.IntN(2) == 0)
	}
	ncur := r.IntN(len(explicit) + 1)
	if r.IntN(6) == 0 {
		ncur = len(explicit) + 1
	}
	cur := make([]int64, ncur)
	for i := range cur {
		cur[i] = int64(r.IntN(4))
	}
	before := r.IntN(2) == 0
	limit := int32(1 + r.IntN(5))
	d := fmt.Sprintf("ineq%v ops%v vals%v key %s order%v desc%v cursor%v before=%v limit %d", ineq, ops, vals, keyID, explicit, desc, cur, before, limit)
	return func(project string) *pb.StructuredQuery {
		ref := func(id string) *pb.Value {
			return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: "projects/" + project + "/databases/(default)/documents/" + coll + "/" + id}}
		}
		var fs []*pb.StructuredQuery_Filter
		for i, f := range ineq {
			v := &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: vals[i]}}
			if f == firestore.DocumentID {
				v = ref(keyID)
			}
			fs = append(fs, &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
				Field: &pb.StructuredQuery_FieldReference{FieldPath: f}, Op: ops[i], Value: v}}})
		}
		sq := &pb.StructuredQuery{
			From:  []*pb.StructuredQuery_CollectionSelector{{CollectionId: coll}},
			Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{Op: pb.StructuredQuery_CompositeFilter_AND, Filters: fs}}},
			Limit: wrapperspb.Int32(limit),
		}
		for i, f := range explicit {
			dir := pb.StructuredQuery_ASCENDING
			if desc[i] {
				dir = pb.StructuredQuery_DESCENDING
			}
			sq.OrderBy = append(sq.OrderBy, &pb.StructuredQuery_Order{Field: &pb.StructuredQuery_FieldReference{FieldPath: f}, Direction: dir})
		}
		if ncur > 0 {
			c := &pb.Cursor{Before: before}
			for _, v := range cur {
				c.Values = append(c.Values, &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: v}})
			}
			sq.StartAt = c
		}
		return sq
	}, d
}

// rawQuery runs sq on tg and renders the ids or the error code.
func rawQuery(tg *target, mk func(project string) *pb.StructuredQuery) (string, string) {
	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	s, err := tg.raw.RunQuery(ctx, &pb.RunQueryRequest{
		Parent:    "projects/" + tg.project + "/databases/(default)/documents",
		QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: mk(tg.project)},
	})
	if err != nil {
		return normalize(tg.project, nil, err)
	}
	var ids []string
	for {
		m, err := s.Recv()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return normalize(tg.project, nil, err)
		}
		if d := m.GetDocument(); d != nil {
			ids = append(ids, d.Name[strings.LastIndex(d.Name, "/")+1:])
		}
	}
	return normalize(tg.project, ids, nil)
}

// TestCommitFuzzDifferential commits random sequences of writes to one or
// two documents in one commit (set, set with a merge mask, update with a
// mask and an exists precondition, transform-only writes, deletes; every
// transform kind, on fields a mask also names or not) on both servers and
// compares the commit's outcome, each write result's transform results,
// and the documents read afterwards.
func TestCommitFuzzDifferential(t *testing.T) {
	ours, theirs := fuzzPair(t)
	seed, n := fuzzSeed(t)
	r := rand.New(rand.NewPCG(seed, 2))
	coll := fmt.Sprintf("cf%d", time.Now().UnixNano())
	agree := 0
	for i := 0; i < n; i++ {
		c := randomCommit(r, fmt.Sprintf("%s/c%d", coll, i))
		o, om := c.run(ours)
		th, tm := c.run(theirs)
		if o != th {
			t.Errorf("commit %d %s:\n  pyric:    %s %s\n  official: %s %s", i, c.desc, o, om, th, tm)
			continue
		}
		agree++
	}
	t.Logf("%d/%d commits agree", agree, n)
}

type fuzzCommit struct {
	desc  string
	docs  []string
	setup map[string]map[string]*pb.Value // initial documents (nil: missing)
	build func(root string) []*pb.Write
}

var commitFields = []string{"n", "t", "arr", "m.x", "s"}

func randomCommit(r *rand.Rand, base string) fuzzCommit {
	docs := []string{base + "p"}
	if r.IntN(3) == 0 {
		docs = append(docs, base+"q")
	}
	c := fuzzCommit{docs: docs, setup: map[string]map[string]*pb.Value{}}
	for _, d := range docs {
		if r.IntN(4) == 0 {
			continue
		}
		f := map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(r.IntN(5))}}, "s": {ValueType: &pb.Value_StringValue{StringValue: "x"}}}
		if r.IntN(2) == 0 {
			f["arr"] = &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: []*pb.Value{{ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}}}}}
		}
		c.setup[d] = f
	}
	type w struct {
		doc, kind  string
		fields     map[string]int64
		mask       []string
		transforms [][2]string // field, kind
		v          int64
	}
	var ws []w
	var desc []string
	for k := 0; k < 2+r.IntN(3); k++ {
		x := w{doc: docs[r.IntN(len(docs))], kind: []string{"set", "merge", "update", "delete", "transform"}[r.IntN(5)], fields: map[string]int64{}, v: int64(1 + r.IntN(3))}
		if x.kind != "delete" && x.kind != "transform" {
			for _, f := range []string{"n", "s", "t"} {
				if r.IntN(2) == 0 {
					x.fields[f] = int64(r.IntN(9))
				}
			}
		}
		if x.kind == "merge" || x.kind == "update" {
			for _, f := range commitFields {
				if r.IntN(2) == 0 {
					x.mask = append(x.mask, f)
				}
			}
		}
		if x.kind != "delete" {
			for _, i := range r.Perm(len(commitFields))[:r.IntN(3)] {
				x.transforms = append(x.transforms, [2]string{commitFields[i], []string{"inc", "time", "max", "min", "union", "remove"}[r.IntN(6)]})
			}
		}
		if x.kind == "transform" && len(x.transforms) == 0 {
			x.transforms = [][2]string{{"n", "inc"}}
		}
		ws = append(ws, x)
		desc = append(desc, fmt.Sprintf("%s(%s fields=%v mask=%v transforms=%v)", x.kind, x.doc[len(base):], x.fields, x.mask, x.transforms))
	}
	c.desc = fmt.Sprintf("setup=%v %s", c.setup, strings.Join(desc, " "))
	c.build = func(root string) []*pb.Write {
		var out []*pb.Write
		for _, x := range ws {
			name := root + "/" + x.doc
			if x.kind == "delete" {
				out = append(out, &pb.Write{Operation: &pb.Write_Delete{Delete: name}})
				continue
			}
			f := map[string]*pb.Value{}
			for k, v := range x.fields {
				f[k] = &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: v}}
			}
			pw := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: name, Fields: f}}}
			switch x.kind {
			case "merge":
				pw.UpdateMask = &pb.DocumentMask{FieldPaths: x.mask}
			case "update":
				pw.UpdateMask = &pb.DocumentMask{FieldPaths: x.mask}
				pw.CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}
			case "transform":
				pw.Operation = &pb.Write_Update{Update: &pb.Document{Name: name}}
				pw.UpdateMask = &pb.DocumentMask{}
			}
			operand := &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: x.v}}
			arr := &pb.ArrayValue{Values: []*pb.Value{operand}}
			for _, t := range x.transforms {
				ft := &pb.DocumentTransform_FieldTransform{FieldPath: t[0]}
				switch t[1] {
				case "inc":
					ft.TransformType = &pb.DocumentTransform_FieldTransform_Increment{Increment: operand}
				case "time":
					ft.TransformType = &pb.DocumentTransform_FieldTransform_SetToServerValue{SetToServerValue: pb.DocumentTransform_FieldTransform_REQUEST_TIME}
				case "max":
					ft.TransformType = &pb.DocumentTransform_FieldTransform_Maximum{Maximum: operand}
				case "min":
					ft.TransformType = &pb.DocumentTransform_FieldTransform_Minimum{Minimum: operand}
				case "union":
					ft.TransformType = &pb.DocumentTransform_FieldTransform_AppendMissingElements{AppendMissingElements: arr}
				case "remove":
					ft.TransformType = &pb.DocumentTransform_FieldTransform_RemoveAllFromArray{RemoveAllFromArray: arr}
				}
				pw.UpdateTransforms = append(pw.UpdateTransforms, ft)
			}
			out = append(out, pw)
		}
		return out
	}
	return c
}

// run sets the documents up, commits, reads them back and renders it all
// with server times reduced to whether they equal the commit time.
func (c fuzzCommit) run(tg *target) (string, string) {
	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	root := "projects/" + tg.project + "/databases/(default)/documents"
	var setup []*pb.Write
	for _, d := range c.docs {
		if f, ok := c.setup[d]; ok {
			setup = append(setup, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: root + "/" + d, Fields: f}}})
		} else {
			setup = append(setup, &pb.Write{Operation: &pb.Write_Delete{Delete: root + "/" + d}})
		}
	}
	if _, err := tg.raw.Commit(ctx, &pb.CommitRequest{Database: "projects/" + tg.project + "/databases/(default)", Writes: setup}); err != nil {
		return "setup " + status.Code(err).String(), err.Error()
	}
	resp, err := tg.raw.Commit(ctx, &pb.CommitRequest{Database: "projects/" + tg.project + "/databases/(default)", Writes: c.build(root)})
	out := map[string]any{}
	var ct time.Time
	if err != nil {
		out["error"] = status.Code(err).String()
	} else {
		ct = resp.GetCommitTime().AsTime()
		var results []any
		for _, wr := range resp.GetWriteResults() {
			var trs []any
			for _, v := range wr.GetTransformResults() {
				trs = append(trs, plainValue(v, ct))
			}
			results = append(results, map[string]any{"transforms": trs, "updateTime": timeMark(wr.GetUpdateTime().AsTime(), wr.GetUpdateTime() != nil, ct)})
		}
		out["results"] = results
	}
	got := map[string]any{}
	for _, d := range c.docs {
		doc, err := tg.raw.GetDocument(ctx, &pb.GetDocumentRequest{Name: root + "/" + d})
		if err != nil {
			got[d[strings.LastIndex(d, "/")+1:]] = status.Code(err).String()
			continue
		}
		fields := map[string]any{}
		for k, v := range doc.GetFields() {
			fields[k] = plainValue(v, ct)
		}
		got[d[strings.LastIndex(d, "/")+1:]] = fields
	}
	out["after"] = got
	b, _ := json.Marshal(out)
	msg := ""
	if err != nil {
		msg = status.Convert(err).Message()
	}
	return string(b), msg
}

// timeMark says whether a server time is the commit time.
func timeMark(t time.Time, set bool, commit time.Time) string {
	switch {
	case !set:
		return "unset"
	case t.Equal(commit):
		return "commit"
	default:
		return "earlier"
	}
}

// plainValue renders a value with its type; timestamps become whether
// they equal the commit time.
func plainValue(v *pb.Value, commit time.Time) any {
	switch x := v.GetValueType().(type) {
	case *pb.Value_IntegerValue:
		return fmt.Sprintf("int:%d", x.IntegerValue)
	case *pb.Value_DoubleValue:
		return fmt.Sprintf("double:%v", x.DoubleValue)
	case *pb.Value_StringValue:
		return "str:" + x.StringValue
	case *pb.Value_NullValue:
		return "null"
	case *pb.Value_TimestampValue:
		// A server timestamp is the commit time on Pyric (as in
		// production) and the request's arrival, a little earlier, on the
		// official emulator: both count as "now".
		if d := commit.Sub(x.TimestampValue.AsTime()); d >= 0 && d < 10*time.Second {
			return "ts:now"
		}
		return "ts:" + x.TimestampValue.AsTime().Format(time.RFC3339Nano)
	case *pb.Value_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, plainValue(e, commit))
		}
		return out
	case *pb.Value_MapValue:
		out := map[string]any{}
		keys := make([]string, 0, len(x.MapValue.GetFields()))
		for k := range x.MapValue.GetFields() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = plainValue(x.MapValue.GetFields()[k], commit)
		}
		return out
	}
	return fmt.Sprintf("%T", v.GetValueType())
}
