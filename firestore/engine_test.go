package firestore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/source"
)

func tr(fp string, t *pb.DocumentTransform_FieldTransform) *pb.DocumentTransform_FieldTransform {
	t.FieldPath = fp
	return t
}

func inc(n *pb.Value) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{TransformType: &pb.DocumentTransform_FieldTransform_Increment{Increment: n}}
}

func union(vs ...*pb.Value) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{TransformType: &pb.DocumentTransform_FieldTransform_AppendMissingElements{AppendMissingElements: &pb.ArrayValue{Values: vs}}}
}

func remove(vs ...*pb.Value) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{TransformType: &pb.DocumentTransform_FieldTransform_RemoveAllFromArray{RemoveAllFromArray: &pb.ArrayValue{Values: vs}}}
}

func serverTime() *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{TransformType: &pb.DocumentTransform_FieldTransform_SetToServerValue{SetToServerValue: pb.DocumentTransform_FieldTransform_REQUEST_TIME}}
}

func maxT(n *pb.Value) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{TransformType: &pb.DocumentTransform_FieldTransform_Maximum{Maximum: n}}
}

func minT(n *pb.Value) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{TransformType: &pb.DocumentTransform_FieldTransform_Minimum{Minimum: n}}
}

func M(kv ...any) map[string]*pb.Value {
	m := map[string]*pb.Value{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(*pb.Value)
	}
	return m
}

func mask(paths ...string) *pb.DocumentMask { return &pb.DocumentMask{FieldPaths: paths} }

func TestWritesAndMerges(t *testing.T) {
	t.Parallel()
	base := M("a", Map(M("b", Int(1), "c", Int(2))), "x", Int(1), "arr", Array(String("a"), String("b")))
	cases := []struct {
		name string
		w    *pb.Write
		want map[string]*pb.Value
		code codes.Code
	}{
		{"replace", upd("c/d", M("y", Int(2))), M("y", Int(2)), codes.OK},
		{"merge nested leaf", &pb.Write{Operation: upd("c/d", M("a", Map(M("b", Int(9))))).Operation, UpdateMask: mask("a.b")},
			M("a", Map(M("b", Int(9), "c", Int(2))), "x", Int(1), "arr", Array(String("a"), String("b"))), codes.OK},
		{"mask field absent deletes", &pb.Write{Operation: upd("c/d", nil).Operation, UpdateMask: mask("a.c", "x")},
			M("a", Map(M("b", Int(1))), "arr", Array(String("a"), String("b"))), codes.OK},
		{"mask top-level map replaces wholesale", &pb.Write{Operation: upd("c/d", M("a", Map(M("z", Int(0))))).Operation, UpdateMask: mask("a")},
			M("a", Map(M("z", Int(0))), "x", Int(1), "arr", Array(String("a"), String("b"))), codes.OK},
		{"empty mask keeps everything", &pb.Write{Operation: upd("c/d", M("x", Int(5))).Operation, UpdateMask: mask()}, base, codes.OK},
		{"update on missing", &pb.Write{Operation: upd("c/missing", M("x", Int(1))).Operation, UpdateMask: mask("x"),
			CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}}, nil, codes.NotFound},
		{"create existing", &pb.Write{Operation: upd("c/d", M("x", Int(1))).Operation,
			CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}}, nil, codes.AlreadyExists},
		{"stale update time", &pb.Write{Operation: upd("c/d", M("x", Int(1))).Operation,
			CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_UpdateTime{UpdateTime: timestamppb.New(time.Unix(1, 0))}}}, nil, codes.FailedPrecondition},
		{"nanosecond precondition", &pb.Write{Operation: upd("c/d", M("x", Int(1))).Operation,
			CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_UpdateTime{UpdateTime: &timestamppb.Timestamp{Seconds: 1, Nanos: 1}}}}, nil, codes.InvalidArgument},
		{"transforms", &pb.Write{Operation: upd("c/d", nil).Operation, UpdateMask: mask(), UpdateTransforms: []*pb.DocumentTransform_FieldTransform{
			tr("x", inc(Int(2))), tr("arr", union(String("b"), String("c"), String("c"))), tr("n.m", inc(Double(0.5)))}},
			M("a", Map(M("b", Int(1), "c", Int(2))), "x", Int(3), "arr", Array(String("a"), String("b"), String("c")), "n", Map(M("m", Double(0.5)))), codes.OK},
		{"array remove + increment on non-number", &pb.Write{Operation: upd("c/d", nil).Operation, UpdateMask: mask(), UpdateTransforms: []*pb.DocumentTransform_FieldTransform{
			tr("arr", remove(String("b"), String("z"))), tr("a", inc(Int(4)))}},
			M("a", Int(4), "x", Int(1), "arr", Array(String("a"))), codes.OK},
		{"reserved field", upd("c/d", M("__x__", Int(1))), nil, codes.InvalidArgument},
		{"nested array", upd("c/d", M("a", Array(Array(Int(1))))), nil, codes.InvalidArgument},
		{"invalid mask", &pb.Write{Operation: upd("c/d", nil).Operation, UpdateMask: mask("a..b")}, nil, codes.InvalidArgument},
		{"bad vector", upd("c/d", M("v", Map(M("__type__", String("zzz"))))), nil, codes.InvalidArgument},
		{"too big", upd("c/d", M("b", bytesv(strings.Repeat("x", 1<<20)))), nil, codes.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			setT(t, e, "c/d", base)
			_, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{c.w}})
			if Code(err) != c.code {
				t.Fatalf("code = %v (%v), want %v", Code(err), err, c.code)
			}
			if err != nil {
				return
			}
			got := getT(t, e, "c/d")
			if !fsvalue.IdenticalFields(got.Fields, c.want) {
				t.Errorf("fields = %v\nwant %v", got.Fields, c.want)
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "c/d", M("x", Int(1)))
	_, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{{Operation: upd("c/zz", nil).Operation, UpdateMask: mask(),
		CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}}}})
	if want := "No document to update: " + name("c/zz"); err == nil || err.Error() != want || !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want %q", err, want)
	}
	_, err = e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{upd("c/d", M("big", bytesv(strings.Repeat("x", 1<<20))))}})
	if err == nil || !strings.Contains(err.Error(), "cannot be written because its size (1,048,") || !strings.Contains(err.Error(), "c/d") {
		t.Errorf("size err = %v", err)
	}
	_, err = e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{upd("c/d", M("a", Map(M("__y__", Int(1)))))}})
	if err == nil || !strings.Contains(err.Error(), "a.__y__") {
		t.Errorf("reserved nested err = %v", err)
	}
}

func TestTransformsEdgeCases(t *testing.T) {
	t.Parallel()
	e := New(Options{Rules: AllowAll, Now: (&fakeClock{t: time.Unix(1000, 0)}).Now})
	setT(t, e, "c/d", M("arr", Array(Double(1), Double(nan), Int(2)), "n", Int(math.MaxInt64-1), "mx", String("s"), "mn", Int(5)))
	r := commitT(t, e, admin, &pb.Write{Operation: upd("c/d", nil).Operation, UpdateMask: mask(), UpdateTransforms: []*pb.DocumentTransform_FieldTransform{
		tr("arr", union(Int(1), Int(2), Double(nan))), tr("n", inc(Int(5))), tr("mx", maxT(Int(5))), tr("mn", minT(Double(5))), tr("ts", serverTime())}})
	res := r.WriteResults[0].TransformResults
	if !fsvalue.IsNull(res[0]) || res[1].GetIntegerValue() != math.MaxInt64 || res[2].GetIntegerValue() != 5 || res[3].GetIntegerValue() != 5 {
		t.Errorf("transform results = %v", res)
	}
	if !proto.Equal(res[4].GetTimestampValue(), r.CommitTime) {
		t.Errorf("server timestamp %v != commit time %v", res[4], r.CommitTime)
	}
	d := getT(t, e, "c/d")
	if n := len(d.Fields["arr"].GetArrayValue().GetValues()); n != 3 {
		t.Errorf("arrayUnion with numerically equal values and NaN added elements: %v", d.Fields["arr"])
	}
	commitT(t, e, admin, &pb.Write{Operation: upd("c/d", nil).Operation, UpdateMask: mask(), UpdateTransforms: []*pb.DocumentTransform_FieldTransform{
		tr("arr", remove(Double(nan), Double(2))), tr("n", inc(Double(0.5)))}})
	d = getT(t, e, "c/d")
	if got := d.Fields["arr"]; !proto.Equal(got, Array(Double(1))) {
		t.Errorf("arrayRemove(NaN, 2.0) = %v, want [1.0]", got)
	}
	if _, ok := d.Fields["n"].GetValueType().(*pb.Value_DoubleValue); !ok {
		t.Errorf("int + double increment = %v, want a double", d.Fields["n"])
	}
}

func TestBatchAtomicAndRules(t *testing.T) {
	t.Parallel()
	fake := &FakeRules{Decide: func(r *AuthzRequest) AuthzDecision {
		if r.Path == "c/denied" {
			return AuthzDecision{Verdict: Deny, Reason: "path is denied", Explanation: "trace"}
		}
		return AuthzDecision{Verdict: Allow}
	}}
	e := New(Options{Rules: fake})
	alice := identity.NewUser("alice", nil)
	setT(t, e, "c/other", M("v", Int(1)))
	_, err := e.Commit(bg, alice, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{upd("c/ok", M("v", Int(1))), upd("c/denied", M("v", Int(1)))}})
	if !errors.Is(err, ErrPermissionDenied) || err.Error() != PermissionDeniedMessage {
		t.Fatalf("err = %v", err)
	}
	den, ok := DenialOf(err)
	if !ok || den.Path != "c/denied" || den.Decision.Explanation != "trace" || den.Method != MethodCreate {
		t.Errorf("denial = %+v", den)
	}
	if getT(t, e, "c/ok") != nil {
		t.Error("a denied batch applied a write")
	}
	// getAfter sees the whole batch; get sees committed state; request.resource is the post-write doc.
	fake.Reset()
	commitT(t, e, alice, upd("c/a", M("v", Int(1))), &pb.Write{Operation: upd("c/other", M("w", Int(2))).Operation, UpdateMask: mask("w"),
		UpdateTransforms: []*pb.DocumentTransform_FieldTransform{tr("t", serverTime())}}, del("c/gone"))
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("rules asked %d times, want 3", len(reqs))
	}
	if reqs[0].Method != MethodCreate || reqs[1].Method != MethodUpdate || reqs[2].Method != MethodDelete {
		t.Errorf("methods = %v %v %v", reqs[0].Method, reqs[1].Method, reqs[2].Method)
	}
	after := reqs[1].After
	if after.Fields["v"].GetIntegerValue() != 1 || after.Fields["w"].GetIntegerValue() != 2 || !reqs[1].Time.Equal(after.Fields["t"].GetTimestampValue().AsTime()) {
		t.Errorf("request.resource = %v (time %v)", after, reqs[1].Time)
	}
	if reqs[1].Resource.Fields["v"].GetIntegerValue() != 1 || reqs[1].Resource.Fields["w"] != nil {
		t.Errorf("resource = %v", reqs[1].Resource)
	}
	if reqs[0].Group == nil || reqs[0].Group.Kind != "batch" {
		t.Errorf("group = %v", reqs[0].Group)
	}
	// No rules loaded: everything but admin is denied, with the reason.
	e2 := New(Options{})
	_, err = e2.Commit(bg, alice, &pb.CommitRequest{Database: testDB.String(), Writes: []*pb.Write{upd("c/a", nil)}})
	if den, ok := DenialOf(err); !ok || den.Decision.Reason != NoRulesReason {
		t.Errorf("no-rules err = %v", err)
	}
	commitT(t, e2, admin, upd("c/a", nil))
}

func TestGetAfterAndLookups(t *testing.T) {
	t.Parallel()
	var sawGet, sawAfter *pb.Document
	e := New(Options{Rules: RulesFunc(func(_ context.Context, r *AuthzRequest) AuthzDecision {
		if r.Path == "c/a" && r.Method != MethodGet {
			sawGet, _ = r.Get("c/b")
			sawAfter, _ = r.GetAfter("c/b")
		}
		return AuthzDecision{Verdict: Allow}
	})})
	setT(t, e, "c/b", M("x", Int(1), "y", Int(1)))
	commitT(t, e, identity.NewUser("u", nil), upd("c/a", nil), &pb.Write{Operation: upd("c/b", M("x", Int(2))).Operation, UpdateMask: mask("x")})
	if sawGet.Fields["x"].GetIntegerValue() != 1 || sawAfter.Fields["x"].GetIntegerValue() != 2 || sawAfter.Fields["y"].GetIntegerValue() != 1 {
		t.Errorf("get = %v, getAfter = %v", sawGet, sawAfter)
	}
}

func seedQueryDocs(t testing.TB, e *Engine) {
	vals := map[string]*pb.Value{
		"null": Null(), "bool": Bool(true), "nan": Double(nan), "int": Int(5), "dbl": Double(5.5), "ninf": Double(math.Inf(-1)),
		"ts": tsv(100), "str": String("x"), "bytes": bytesv("x"), "ref": refv("a/b"), "geo": geov(1, 2), "arr": Array(Int(1)),
		"vec": Vector(1, 2), "vec1": Vector(9), "map": Map(M("a", Int(1))), "emptymap": Map(nil),
	}
	for k, v := range vals {
		setT(t, e, "ord/"+k, M("v", v))
	}
	setT(t, e, "ord/missing", M("w", Int(1)))
}

// TestFiltersMatchEmulator locks results observed on the official emulator
// for the same data and queries.
func TestFiltersMatchEmulator(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	seedQueryDocs(t, e)
	F := pb.StructuredQuery_FieldFilter_EQUAL
	_ = F
	type op = pb.StructuredQuery_FieldFilter_Operator
	cases := []struct {
		name string
		sq   *pb.StructuredQuery
		want string
	}{
		{"order by v", &pb.StructuredQuery{OrderBy: []*pb.StructuredQuery_Order{orderBy("v", false)}},
			"null bool nan ninf int dbl ts str bytes ref geo arr vec1 vec emptymap map"},
		{"!= 5", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_NOT_EQUAL, Int(5))},
			"bool nan ninf dbl ts str bytes ref geo arr vec1 vec emptymap map"},
		{"not-in [5]", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_NOT_IN, Array(Int(5)))},
			"bool nan ninf dbl ts str bytes ref geo arr vec1 vec emptymap map"},
		{"not-in [5, null]", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_NOT_IN, Array(Int(5), Null()))}, ""},
		{"is not nan", &pb.StructuredQuery{Where: unary("v", pb.StructuredQuery_UnaryFilter_IS_NOT_NAN)},
			"bool ninf int dbl ts str bytes ref geo arr vec1 vec emptymap map"},
		{"is not null", &pb.StructuredQuery{Where: unary("v", pb.StructuredQuery_UnaryFilter_IS_NOT_NULL)},
			"bool nan ninf int dbl ts str bytes ref geo arr vec1 vec emptymap map"},
		{"is null", &pb.StructuredQuery{Where: unary("v", pb.StructuredQuery_UnaryFilter_IS_NULL)}, "null"},
		{"is nan", &pb.StructuredQuery{Where: unary("v", pb.StructuredQuery_UnaryFilter_IS_NAN)}, "nan"},
		{"== NaN", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_EQUAL, Double(nan))}, ""},
		{"== null", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_EQUAL, Null())}, ""},
		{"> null", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN, Null())}, ""},
		{">= NaN", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, Double(nan))}, ""},
		{"> -inf", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN, Double(math.Inf(-1)))}, "int dbl"},
		{"< map", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_LESS_THAN, Map(M("z", Int(1))))}, "emptymap map"},
		{"in [5, null, nan]", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_IN, Array(Int(5), Null(), Double(nan)))}, "int"},
		{"== 5.0", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_EQUAL, Double(5))}, "int"},
		{"array-contains 1.0", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, Double(1))}, "arr"},
		{"array-contains-any", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY, Array(Int(7), Int(1)))}, "arr"},
		{"or", &pb.StructuredQuery{Where: or(where("v", pb.StructuredQuery_FieldFilter_EQUAL, Int(5)), where("w", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)))}, "int missing"},
		{"and empty result", &pb.StructuredQuery{Where: and(where("v", pb.StructuredQuery_FieldFilter_EQUAL, Int(5)), where("w", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)))}, ""},
		{"string range", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, String(""))}, "str"},
		{"__name__ range", &pb.StructuredQuery{Where: where("__name__", pb.StructuredQuery_FieldFilter_GREATER_THAN, refv("ord/str"))}, "ts vec vec1"},
		{"desc limit", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(0)), OrderBy: []*pb.StructuredQuery_Order{orderBy("v", true)}, Limit: limit(1)}, "dbl"},
		{"offset", &pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(0)), Offset: 1}, "dbl"},
	}
	for _, c := range cases {
		c.sq.From = from("ord")
		got := strings.Join(ids(t, e, c.sq), " ")
		if got != c.want {
			t.Errorf("%s: got [%s]\nwant [%s]", c.name, got, c.want)
		}
	}
	errs := []struct {
		sq  *pb.StructuredQuery
		msg string
	}{
		{&pb.StructuredQuery{Where: and(where("a", pb.StructuredQuery_FieldFilter_NOT_IN, Array(Int(1))), where("b", pb.StructuredQuery_FieldFilter_NOT_IN, Array(Int(1))))},
			"Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."},
		{&pb.StructuredQuery{Where: where("v", pb.StructuredQuery_FieldFilter_IN, Int(1))}, "'IN' requires an ArrayValue."},
		{&pb.StructuredQuery{StartAt: &pb.Cursor{Values: []*pb.Value{Int(1), Int(2)}}}, "Cursor has too many values."},
		{&pb.StructuredQuery{Where: where("__name__", pb.StructuredQuery_FieldFilter_EQUAL, String("x"))}, "__key__ filter value must be a Key"},
	}
	for _, c := range errs {
		c.sq.From = from("ord")
		_, err := queryIDs(e, admin, testDB.Documents(), c.sq)
		if err == nil || err.Error() != c.msg || Code(err) != codes.InvalidArgument {
			t.Errorf("query error = %v, want %q", err, c.msg)
		}
	}
}

func TestCursorsAndScopes(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	for i := 1; i <= 5; i++ {
		setT(t, e, fmt.Sprintf("c/%d", i), M("pos", Int(int64(i)), "g", Int(int64(i%2))))
	}
	setT(t, e, "c/1/sub/x", M("pos", Int(1)))
	setT(t, e, "other/y/sub/z", M("pos", Int(2)))
	setT(t, e, "c/9/sub/w", M("pos", Int(3))) // parent c/9 is missing
	by := []*pb.StructuredQuery_Order{orderBy("pos", false)}
	cur := func(before bool, vs ...*pb.Value) *pb.Cursor { return &pb.Cursor{Values: vs, Before: before} }
	cases := []struct {
		name string
		sq   *pb.StructuredQuery
		want string
	}{
		{"startAt", &pb.StructuredQuery{OrderBy: by, StartAt: cur(true, Int(3))}, "3 4 5"},
		{"startAfter", &pb.StructuredQuery{OrderBy: by, StartAt: cur(false, Int(3))}, "4 5"},
		{"endAt", &pb.StructuredQuery{OrderBy: by, EndAt: cur(false, Int(3))}, "1 2 3"},
		{"endBefore", &pb.StructuredQuery{OrderBy: by, EndAt: cur(true, Int(3))}, "1 2"},
		{"doc cursor with __name__", &pb.StructuredQuery{OrderBy: []*pb.StructuredQuery_Order{orderBy("g", false), orderBy("__name__", false)}, StartAt: cur(false, Int(0), refv("c/2"))}, "4 1 3 5"},
		{"desc startAt", &pb.StructuredQuery{OrderBy: []*pb.StructuredQuery_Order{orderBy("pos", true)}, StartAt: cur(true, Int(2))}, "2 1"},
		{"implicit order by inequality", &pb.StructuredQuery{Where: where("pos", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(1)), Limit: limit(2)}, "2 3"},
	}
	for _, c := range cases {
		c.sq.From = from("c")
		got := strings.Join(ids(t, e, c.sq), " ")
		if got != c.want {
			t.Errorf("%s: got [%s], want [%s]", c.name, got, c.want)
		}
	}
	group := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "sub", AllDescendants: true}}, OrderBy: by}
	if got := strings.Join(ids(t, e, group), " "); got != "x z w" {
		t.Errorf("collection group = %s", got)
	}
	under, err := queryIDs(e, admin, name("c/1"), &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "sub", AllDescendants: true}}})
	if err != nil || strings.Join(under, " ") != "x" {
		t.Errorf("group under c/1 = %v %v", under, err)
	}
	list, err := e.ListDocuments(bg, admin, &pb.ListDocumentsRequest{Parent: testDB.Documents(), CollectionId: "c", ShowMissing: true, Mask: &pb.DocumentMask{}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range list.Documents {
		names = append(names, fsvalue.DocID(d.Name))
		if fsvalue.DocID(d.Name) == "9" && d.UpdateTime != nil {
			t.Error("missing document has an update time")
		}
	}
	if strings.Join(names, " ") != "1 2 3 4 5 9" {
		t.Errorf("list documents (show missing) = %v", names)
	}
	cols, err := e.ListCollectionIds(bg, admin, &pb.ListCollectionIdsRequest{Parent: testDB.Documents()})
	if err != nil || strings.Join(cols.CollectionIds, " ") != "c other" {
		t.Errorf("collection ids = %v %v", cols, err)
	}
	parts, err := e.PartitionQuery(bg, admin, &pb.PartitionQueryRequest{Parent: testDB.Documents(), PartitionCount: 3,
		QueryType: &pb.PartitionQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "c", AllDescendants: true}}, OrderBy: []*pb.StructuredQuery_Order{orderBy("__name__", false)}}}})
	if err != nil || len(parts.Partitions) != 2 {
		t.Errorf("partitions = %v %v", parts, err)
	}
}

func TestAggregations(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "sum/a", M("i", Int(math.MaxInt64), "s", String("x"), "d", Double(1.5), "m", Int(1), "neg", Int(math.MinInt64)))
	setT(t, e, "sum/b", M("i", Int(1), "s", String("y"), "d", Int(2), "m", Int(2), "neg", Int(-1)))
	setT(t, e, "sum/c", M("i", Int(-5)))
	agg := func(aggs ...*pb.StructuredAggregationQuery_Aggregation) map[string]*pb.Value {
		r, err := e.RunAggregationQuery(bg, admin, &pb.RunAggregationQueryRequest{Parent: testDB.Documents(), QueryType: &pb.RunAggregationQueryRequest_StructuredAggregationQuery{
			StructuredAggregationQuery: &pb.StructuredAggregationQuery{QueryType: &pb.StructuredAggregationQuery_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("sum")}}, Aggregations: aggs}}})
		if err != nil {
			t.Fatal(err)
		}
		return r[0].Result.AggregateFields
	}
	sum := func(f, alias string) *pb.StructuredAggregationQuery_Aggregation {
		return &pb.StructuredAggregationQuery_Aggregation{Alias: alias, Operator: &pb.StructuredAggregationQuery_Aggregation_Sum_{Sum: &pb.StructuredAggregationQuery_Aggregation_Sum{Field: fref(f)}}}
	}
	avg := func(f, alias string) *pb.StructuredAggregationQuery_Aggregation {
		return &pb.StructuredAggregationQuery_Aggregation{Alias: alias, Operator: &pb.StructuredAggregationQuery_Aggregation_Avg_{Avg: &pb.StructuredAggregationQuery_Aggregation_Avg{Field: fref(f)}}}
	}
	count := &pb.StructuredAggregationQuery_Aggregation{Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: &pb.StructuredAggregationQuery_Aggregation_Count{}}}
	// One aggregation at a time: each sees every document of the query.
	alone := func(aggs ...*pb.StructuredAggregationQuery_Aggregation) map[string]*pb.Value {
		out := map[string]*pb.Value{}
		for _, a := range aggs {
			for k, v := range agg(a) {
				out[k] = v
			}
		}
		return out
	}
	got := alone(sum("i", "si"), sum("s", "ss"), sum("d", "sd"), sum("neg", "sn"), count)
	want := M("si", Int(9223372036854775803), "ss", Int(0), "sd", Double(3.5), "sn", Double(-9.223372036854775808e18), "field_1", Int(3))
	if !fsvalue.IdenticalFields(got, want) {
		t.Errorf("sums = %v\nwant %v", got, want)
	}
	got = alone(avg("m", "am"), avg("s", "as"), avg("zz", "az"), avg("i", "ai"))
	want = M("am", Double(1.5), "as", Null(), "az", Null(), "ai", Double(3.0744573456182584e+18))
	if !fsvalue.IdenticalFields(got, want) {
		t.Errorf("avgs = %v\nwant %v", got, want)
	}
	// Together they see only the documents having every aggregated field
	// (sum/a and sum/b), count included, as on the official emulator.
	got = agg(sum("i", "si"), sum("s", "ss"), sum("d", "sd"), sum("neg", "sn"), count)
	want = M("si", Double(9.223372036854775808e18), "ss", Int(0), "sd", Double(3.5), "sn", Double(-9.223372036854775808e18), "field_5", Int(2))
	if !fsvalue.IdenticalFields(got, want) {
		t.Errorf("sums together = %v\nwant %v", got, want)
	}
	got = agg(avg("m", "am"), count)
	want = M("am", Double(1.5), "field_2", Int(2))
	if !fsvalue.IdenticalFields(got, want) {
		t.Errorf("avg and count = %v\nwant %v", got, want)
	}
}

// runTxn is a client-side retry loop like the Go SDK's: retry on ABORTED.
func runTxn(e *Engine, who identity.Identity, fn func(tx []byte) ([]*pb.Write, error)) error {
	for attempt := 0; attempt < 100; attempt++ {
		b, err := e.BeginTransaction(bg, who, &pb.BeginTransactionRequest{Database: testDB.String()})
		if err != nil {
			return err
		}
		ws, err := fn(b.Transaction)
		if err != nil {
			_ = e.Rollback(bg, who, &pb.RollbackRequest{Database: testDB.String(), Transaction: b.Transaction})
			return err
		}
		_, err = e.Commit(bg, who, &pb.CommitRequest{Database: testDB.String(), Writes: ws, Transaction: b.Transaction})
		if errors.Is(err, ErrAborted) {
			continue
		}
		return err
	}
	return errors.New("too many attempts")
}

func TestTransactionCountersUnderContention(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "c/counter", M("n", Int(0)))
	var wg sync.WaitGroup
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				err := runTxn(e, admin, func(tx []byte) ([]*pb.Write, error) {
					r, err := e.BatchGetDocuments(bg, admin, &pb.BatchGetDocumentsRequest{Database: testDB.String(), Documents: []string{name("c/counter")},
						ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: tx}})
					if err != nil {
						return nil, err
					}
					n := r[0].GetFound().Fields["n"].GetIntegerValue()
					time.Sleep(50 * time.Microsecond) // widen the read-to-commit window so the transactions contend
					return []*pb.Write{upd("c/counter", M("n", Int(n+1)))}, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := getT(t, e, "c/counter").Fields["n"].GetIntegerValue(); n != 40 {
		t.Fatalf("counter = %d, want 40", n)
	}
}

func TestTransactionSemantics(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(5000, 0)}
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock.Now() }
	e := New(Options{Rules: AllowAll, Now: now})
	setT(t, e, "c/a", M("v", Int(1)))
	// A query read is validated at commit: an insert into the result aborts.
	b, _ := e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String()})
	_, err := e.RunQuery(bg, admin, &pb.RunQueryRequest{Parent: testDB.Documents(), QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("c")}},
		ConsistencySelector: &pb.RunQueryRequest_Transaction{Transaction: b.Transaction}})
	if err != nil {
		t.Fatal(err)
	}
	setT(t, e, "c/b", M("v", Int(2)))
	_, err = e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Transaction: b.Transaction, Writes: []*pb.Write{upd("c/x", nil)}})
	if Code(err) != codes.Aborted {
		t.Errorf("phantom commit err = %v, want ABORTED", err)
	}
	// Read-only transaction at a read time sees the past.
	before := getT(t, e, "c/a").UpdateTime
	setT(t, e, "c/a", M("v", Int(3)))
	ro, err := e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String(), Options: &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{
		ConsistencySelector: &pb.TransactionOptions_ReadOnly_ReadTime{ReadTime: before}}}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.BatchGetDocuments(bg, admin, &pb.BatchGetDocumentsRequest{Database: testDB.String(), Documents: []string{name("c/a")}, ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: ro.Transaction}})
	if err != nil || r[0].GetFound().Fields["v"].GetIntegerValue() != 1 {
		t.Errorf("read-only read = %v %v", r, err)
	}
	_, err = e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Transaction: ro.Transaction, Writes: []*pb.Write{upd("c/x", nil)}})
	if Code(err) != codes.InvalidArgument {
		t.Errorf("write in read-only txn err = %v", err)
	}
	// Rollback ends the transaction.
	b, _ = e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String()})
	if err := e.Rollback(bg, admin, &pb.RollbackRequest{Database: testDB.String(), Transaction: b.Transaction}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Transaction: b.Transaction}); Code(err) != codes.InvalidArgument {
		t.Errorf("commit after rollback err = %v", err)
	}
	// Expiry.
	b, _ = e.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: testDB.String()})
	mu.Lock()
	clock.t = clock.t.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := e.Commit(bg, admin, &pb.CommitRequest{Database: testDB.String(), Transaction: b.Transaction}); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired commit err = %v", err)
	}
}

func TestListeners(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	type snap struct {
		ids     []string
		changes []string
	}
	var mu sync.Mutex
	var got []snap
	w, err := e.Watch(admin, &pb.Target{TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: testDB.Documents(),
		QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("c"), Where: where("v", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(0))}}}}},
		func(s *Snapshot, err error) {
			if err != nil {
				t.Error(err)
				return
			}
			var sn snap
			for _, d := range s.Docs {
				sn.ids = append(sn.ids, fsvalue.DocID(d.Name))
			}
			for _, c := range s.Changes {
				sn.changes = append(sn.changes, fmt.Sprintf("%s:%s:%d>%d", c.Kind, fsvalue.DocID(c.Doc.Name), c.OldIndex, c.NewIndex))
			}
			mu.Lock()
			got = append(got, sn)
			mu.Unlock()
		})
	if err != nil {
		t.Fatal(err)
	}
	e.Quiesce()
	setT(t, e, "c/a", M("v", Int(2)))
	setT(t, e, "c/b", M("v", Int(1)))
	setT(t, e, "c/a", M("v", Int(0)))  // leaves the query
	setT(t, e, "c/z", M("v", Int(-1))) // never matches: suppressed
	commitT(t, e, admin, del("c/b"))
	e.Quiesce()
	w.Stop()
	setT(t, e, "c/q", M("v", Int(5)))
	e.Quiesce()
	want := []string{
		"[] []",
		"[a] [added:a:-1>0]",
		"[b a] [added:b:-1>0]",
		"[b] [removed:a:1>-1]",
		"[] [removed:b:0>-1]",
	}
	mu.Lock()
	defer mu.Unlock()
	var have []string
	for _, s := range got {
		have = append(have, fmt.Sprintf("%v %v", orEmpty(s.ids), orEmpty(s.changes)))
	}
	if !slices.Equal(have, want) {
		t.Errorf("snapshots:\n%s\nwant\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestListenStreamProtocol(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "c/a", M("v", Int(1)))
	s, err := e.Listen(admin, testDB.String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Handle(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 1002,
		TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{name("c/missing")}}}}}}))
	must(s.Handle(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 1004,
		TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: testDB.Documents(), QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("c")}}}}}}}))
	e.Quiesce()
	setT(t, e, "c/b", M("v", Int(1)))
	commitT(t, e, admin, del("c/a"))
	e.Quiesce()
	var seq []string
	for {
		ctx, cancel := contextWithTimeout(50 * time.Millisecond)
		r, err := s.Recv(ctx)
		cancel()
		if err != nil {
			break
		}
		seq = append(seq, describe(r))
	}
	want := []string{
		"TC ADD [1002]", "DEL c/missing rm[1002]", "TC CURRENT [1002] token",
		"NO_CHANGE token",
		"TC ADD [1004]", "DC c/a [1004]", "TC CURRENT [1004] token",
		"NO_CHANGE token",
		"DC c/b [1004]", "NO_CHANGE token",
		"DEL c/a rm[1004]", "NO_CHANGE token",
	}
	if !slices.Equal(seq, want) {
		t.Errorf("listen responses:\n%s\nwant\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
}

func describe(r *pb.ListenResponse) string {
	switch x := r.ResponseType.(type) {
	case *pb.ListenResponse_TargetChange:
		tc := x.TargetChange
		s := "TC " + tc.TargetChangeType.String() + fmt.Sprint(" ", tc.TargetIds)
		if tc.TargetChangeType == pb.TargetChange_NO_CHANGE && len(tc.TargetIds) == 0 {
			s = "NO_CHANGE"
		}
		if len(tc.ResumeToken) > 0 && tc.ReadTime != nil {
			s += " token"
		}
		return s
	case *pb.ListenResponse_DocumentChange:
		_, rel, _ := ParseDocumentName(x.DocumentChange.Document.Name)
		return fmt.Sprint("DC ", rel, " ", x.DocumentChange.TargetIds)
	case *pb.ListenResponse_DocumentDelete:
		_, rel, _ := ParseDocumentName(x.DocumentDelete.Document)
		return fmt.Sprint("DEL ", rel, " rm", x.DocumentDelete.RemovedTargetIds)
	case *pb.ListenResponse_DocumentRemove:
		_, rel, _ := ParseDocumentName(x.DocumentRemove.Document)
		return fmt.Sprint("REM ", rel, " rm", x.DocumentRemove.RemovedTargetIds)
	}
	return "?"
}

// conformance: firestore.query.indexes
func TestIndexEnforcement(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "c/a", M("x", Int(1), "q", Int(2)))
	sq := &pb.StructuredQuery{From: from("c"), Select: &pb.StructuredQuery_Projection{Fields: []*pb.StructuredQuery_FieldReference{fref("q")}},
		Where: where("x", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)), OrderBy: []*pb.StructuredQuery_Order{orderBy("q", false)}}
	if got := ids(t, e, sq); len(got) != 1 {
		t.Fatalf("without enforcement: %v", got)
	}
	cfg, err := ParseIndexConfig([]byte(`{"indexes": []}`))
	if err != nil {
		t.Fatal(err)
	}
	e.SetIndexes(cfg)
	e.WaitIndexes()
	_, err = queryIDs(e, admin, testDB.Documents(), sq)
	want := `{"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"x","order":"ASCENDING"},{"fieldPath":"q","order":"ASCENDING"}]}`
	if Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want FAILED_PRECONDITION containing %s", err, want)
	}
	// Single-field queries and equality-only queries need nothing.
	for _, ok := range []*pb.StructuredQuery{
		{From: from("c"), OrderBy: []*pb.StructuredQuery_Order{orderBy("q", true)}},
		{From: from("c"), Where: and(where("x", pb.StructuredQuery_FieldFilter_EQUAL, Int(1)), where("q", pb.StructuredQuery_FieldFilter_EQUAL, Int(2)))},
		{From: from("c"), Where: where("x", pb.StructuredQuery_FieldFilter_GREATER_THAN, Int(0))},
	} {
		if _, err := queryIDs(e, admin, testDB.Documents(), ok); err != nil {
			t.Errorf("query needing no composite index failed: %v", err)
		}
	}
	cfg, _ = ParseIndexConfig([]byte(`{"indexes":[` + want + `]}`))
	e.SetIndexes(cfg)
	e.WaitIndexes()
	if got, err := queryIDs(e, admin, testDB.Documents(), sq); err != nil || len(got) != 1 {
		t.Errorf("with the index: %v %v", got, err)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	e := New(Options{Rules: AllowAll, Events: bus})
	alice := identity.NewUser("alice", nil)
	commitT(t, e, alice, &pb.Write{Operation: upd("c/a", M("v", Int(1))).Operation, UpdateTransforms: []*pb.DocumentTransform_FieldTransform{tr("t", serverTime())}})
	h := bus.History()
	if len(h) != 2 || h[0].Kind != event.KindRequest || h[1].Kind != event.KindCommit {
		t.Fatalf("events = %+v", h)
	}
	if h[0].Method != "create" || h[0].Verdict != event.Allow || h[0].Identity.UID != "alice" || h[0].Seen == nil || h[0].Seen.Before.Exists {
		t.Errorf("request = %+v", h[0])
	}
	if d, _ := h[0].Seen.Data.(map[string]any); d["t"] == nil {
		t.Errorf("the request's data lacks the sentinel marker: %+v", h[0].Seen.Data)
	}
	if c := h[1].Commit; c == nil || len(c.Sentinels) != 1 || c.Sentinels[0].Kind != event.ServerTimestamp || c.Before != nil || c.After == nil || c.RequestTime.IsZero() {
		t.Errorf("commit = %+v", h[1])
	}
}

// TestDenialEventExplains: a denied write's event carries the deciding
// rule, its trace and the failing sub-expression with its values.
func TestDenialEventExplains(t *testing.T) {
	t.Parallel()
	gate, diags := NewRulesGate(source.NewFile("firestore.rules", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow create: if request.auth != null && request.resource.data.title.size() < 20;
    }
  }
}`))
	if gate == nil {
		t.Fatal(diags)
	}
	bus := event.NewBus(event.Options{})
	e := New(Options{Rules: gate, Events: bus})
	_, err := e.Commit(context.Background(), identity.NewUser("alice", nil), &pb.CommitRequest{Database: testDB.String(),
		Writes: []*pb.Write{upd("posts/p", M("title", String(strings.Repeat("a", 33))))}})
	if Code(err) != codes.PermissionDenied {
		t.Fatalf("err = %v", err)
	}
	h := bus.History()
	if len(h) != 1 || h[0].Request == nil || h[0].Verdict != event.Deny {
		t.Fatalf("events = %+v", h)
	}
	r := h[0].Request
	if r.Rule == nil || r.Rule.Line != 5 || r.Rule.MatchPath == "" || len(r.Trace) == 0 || r.Decision.Reason != "false for 'create' @ L5" {
		t.Fatalf("request = %+v", r)
	}
	if r.Decision.Bindings["id"] != "'p'" {
		t.Errorf("bindings = %v", r.Decision.Bindings)
	}
	if f := r.Decision.Failing; len(f) != 1 || f[0].Text != "request.resource.data.title.size() < 20" || f[0].Value != "false" {
		t.Fatalf("failing = %+v", f)
	}
}

// conformance: firestore.listen.resume
func TestListenResume(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	setT(t, e, "c/a", M("v", Int(1)))
	setT(t, e, "c/b", M("v", Int(1)))
	token := encodeToken(getT(t, e, "c/b").UpdateTime.AsTime())
	setT(t, e, "c/a", M("v", Int(2)))
	commitT(t, e, admin, del("c/b"))
	setT(t, e, "c/c", M("v", Int(3)))
	s, _ := e.Listen(admin, testDB.String())
	defer s.Close()
	if err := s.Handle(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 7,
		TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: testDB.Documents(), QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: from("c")}}}},
		ResumeType: &pb.Target_ResumeToken{ResumeToken: token}}}}); err != nil {
		t.Fatal(err)
	}
	e.Quiesce()
	var seq []string
	for {
		ctx, cancel := contextWithTimeout(50 * time.Millisecond)
		r, err := s.Recv(ctx)
		cancel()
		if err != nil {
			break
		}
		seq = append(seq, describe(r))
	}
	want := []string{"TC ADD [7]", "DEL c/b rm[7]", "DC c/a [7]", "DC c/c [7]", "TC CURRENT [7] token", "NO_CHANGE token"}
	if !slices.Equal(seq, want) {
		t.Errorf("resumed responses:\n%s\nwant\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
}

func TestNoOpWriteKeepsUpdateTime(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	r1 := commitT(t, e, admin, upd("c/a", M("x", Int(1))))
	r2 := commitT(t, e, admin, upd("c/a", M("x", Int(1))))
	if !proto.Equal(r1.WriteResults[0].UpdateTime, r2.WriteResults[0].UpdateTime) || !r2.CommitTime.AsTime().After(r1.CommitTime.AsTime()) {
		t.Errorf("no-op write: %v then %v (commit %v)", r1.WriteResults[0].UpdateTime, r2.WriteResults[0].UpdateTime, r2.CommitTime)
	}
}

// Writes of one commit that change a document and change it back leave
// it as it was: each write result carries its earlier update time, the
// stored document keeps it, and no commit event is raised for it; the
// other document of the commit, changed, gets the commit time.
func TestWritesThatUndoEachOtherKeepUpdateTime(t *testing.T) {
	t.Parallel()
	bus := event.NewBus(event.Options{})
	e := New(Options{Rules: AllowAll, Events: bus})
	r1 := commitT(t, e, admin, upd("c/a", M("n", Int(2))), upd("c/b", M("n", Int(2))))
	was := r1.WriteResults[0].UpdateTime
	transform := func(rel string, ft *pb.DocumentTransform_FieldTransform) *pb.Write {
		return &pb.Write{Operation: upd(rel, nil).Operation, UpdateMask: &pb.DocumentMask{}, UpdateTransforms: []*pb.DocumentTransform_FieldTransform{ft}}
	}
	before := len(bus.History())
	r2 := commitT(t, e, admin, transform("c/a", tr("n", inc(Int(3)))), transform("c/a", tr("n", inc(Int(-3)))), transform("c/b", tr("n", inc(Int(1)))))
	for i, wr := range r2.WriteResults[:2] {
		if !proto.Equal(wr.UpdateTime, was) {
			t.Errorf("write %d: update time %v, want the earlier %v (commit %v)", i, wr.UpdateTime, was, r2.CommitTime)
		}
	}
	if !proto.Equal(r2.WriteResults[2].UpdateTime, r2.CommitTime) {
		t.Errorf("changed document: update time %v, want the commit time %v", r2.WriteResults[2].UpdateTime, r2.CommitTime)
	}
	if got := getT(t, e, "c/a"); !proto.Equal(got.UpdateTime, was) || !proto.Equal(got.Fields["n"], Int(2)) {
		t.Errorf("stored c/a = %v, want n=2 at %v", got, was)
	}
	for _, ev := range bus.History()[before:] {
		if ev.Kind == event.KindCommit && ev.Path == "c/a" {
			t.Errorf("commit event for the unchanged c/a: %+v", ev)
		}
	}
}

// TestListDocumentsPages walks a collection page by page (each page
// selects its first names instead of sorting them all) and compares the
// walk with the collection in name order, missing documents included.
func TestListDocumentsPages(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t)
	var all, present []string
	for i := 0; i < 200; i++ {
		id := fmt.Sprintf("%d", (i*7919)%1000) // numeric ids sort by value, not text
		if i%10 == 0 {
			setT(t, e, "p/"+id+"/sub/x", M("n", Int(1))) // p/id itself is missing
		} else {
			setT(t, e, "p/"+id, M("n", Int(int64(i))))
			present = append(present, id)
		}
		all = append(all, id)
	}
	setT(t, e, "q/1", M("n", Int(1))) // another collection stays out
	byName := func(a, b string) int { return fsvalue.CompareNames("p/"+a, "p/"+b) }
	slices.SortFunc(all, byName)
	slices.SortFunc(present, byName)
	for _, missing := range []bool{true, false} {
		want := present
		if missing {
			want = all
		}
		for _, size := range []int32{0, 1, 7, 179, 180, 199, 200, 500} {
			var got []string
			tok := ""
			for pages := 0; ; pages++ {
				if pages > 300 {
					t.Fatalf("size %d: no end of pages", size)
				}
				list, err := e.ListDocuments(bg, admin, &pb.ListDocumentsRequest{Parent: testDB.Documents(), CollectionId: "p", ShowMissing: missing, PageSize: size, PageToken: tok})
				if err != nil {
					t.Fatal(err)
				}
				if size > 0 && len(list.Documents) > int(size) {
					t.Fatalf("size %d: a page of %d", size, len(list.Documents))
				}
				for _, d := range list.Documents {
					got = append(got, fsvalue.DocID(d.Name))
				}
				if tok = list.NextPageToken; tok == "" {
					break
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("missing %v, size %d: walked %v\nwant %v", missing, size, got, want)
			}
		}
	}
}

// TestGroupID checks a group's id, its prefix and the engine's next
// sequence number, made in one allocation.
func TestGroupID(t *testing.T) {
	e := newTestEngine(t)
	first := e.groupID("txn")
	var n uint64
	if _, err := fmt.Sscanf(first, "txn-%d", &n); err != nil {
		t.Fatalf("groupID = %q: %v", first, err)
	}
	if got, want := e.groupID("batch"), fmt.Sprintf("batch-%d", n+1); got != want {
		t.Errorf("next groupID = %q, want %q", got, want)
	}
	long := "a-prefix-longer-than-the-buffer-kept-for-it"
	if got, want := e.groupID(long), fmt.Sprintf("%s-%d", long, n+2); got != want {
		t.Errorf("groupID(long prefix) = %q, want %q", got, want)
	}
	e.seq.Store(1 << 40) // a number past the runtime's small shared ones
	if a := testing.AllocsPerRun(100, func() { groupIDSink = e.groupID("txn") }); a != 1 {
		t.Errorf("groupID allocates %v times, want 1", a)
	}
}

var groupIDSink string
