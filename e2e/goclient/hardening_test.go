package goclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// hardCase is one request the official emulator answers in a known way:
// run returns the error the client saw (nil for success), and check, when
// set, inspects what the call returned.
type hardCase struct {
	name string
	code codes.Code
	// msg fragments pyric's message must contain (the official emulator's
	// wording is logged, not enforced, unless same is set).
	msg []string
	run func(h *hctx) error
	// official is the code the official emulator answers when it differs
	// from code (it answers UNKNOWN, "Application error processing RPC",
	// where production and pyric answer INVALID_ARGUMENT).
	official codes.Code
	differs  bool
}

// hctx is one case's view of a target: a collection of its own and the
// database's resource names.
type hctx struct {
	tg   *target
	ctx  context.Context
	coll string
	db   string
	root string
}

func (h *hctx) doc(id string) string { return h.root + "/" + h.coll + "/" + id }

func (h *hctx) set(id string, fields map[string]*pb.Value) *pb.Write {
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: h.doc(id), Fields: fields}}}
}

func (h *hctx) commit(ws ...*pb.Write) (*pb.CommitResponse, error) {
	return h.tg.raw.Commit(h.ctx, &pb.CommitRequest{Database: h.db, Writes: ws})
}

func (h *hctx) query(sq *pb.StructuredQuery) ([]*pb.RunQueryResponse, error) {
	return h.queryUnder(h.root, sq)
}

func (h *hctx) queryUnder(parent string, sq *pb.StructuredQuery) ([]*pb.RunQueryResponse, error) {
	st, err := h.tg.raw.RunQuery(h.ctx, &pb.RunQueryRequest{Parent: parent, QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: sq}})
	if err != nil {
		return nil, err
	}
	var out []*pb.RunQueryResponse
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if r.Document != nil {
			out = append(out, r)
		}
	}
}

// aggregate runs aggregations over the test's collection and returns the
// first result's fields.
func (h *hctx) aggregate(aggs ...*pb.StructuredAggregationQuery_Aggregation) (map[string]*pb.Value, error) {
	st, err := h.tg.raw.RunAggregationQuery(h.ctx, &pb.RunAggregationQueryRequest{Parent: h.root, QueryType: &pb.RunAggregationQueryRequest_StructuredAggregationQuery{
		StructuredAggregationQuery: &pb.StructuredAggregationQuery{QueryType: &pb.StructuredAggregationQuery_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: h.from()}},
			Aggregations: aggs}}})
	if err != nil {
		return nil, err
	}
	r, err := st.Recv()
	if err != nil {
		return nil, err
	}
	return r.GetResult().GetAggregateFields(), nil
}

func countAgg(alias string) *pb.StructuredAggregationQuery_Aggregation {
	return &pb.StructuredAggregationQuery_Aggregation{Alias: alias, Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: &pb.StructuredAggregationQuery_Aggregation_Count{}}}
}

func sumAgg(alias, field string) *pb.StructuredAggregationQuery_Aggregation {
	return &pb.StructuredAggregationQuery_Aggregation{Alias: alias, Operator: &pb.StructuredAggregationQuery_Aggregation_Sum_{Sum: &pb.StructuredAggregationQuery_Aggregation_Sum{Field: fref(field)}}}
}

func avgAgg(alias, field string) *pb.StructuredAggregationQuery_Aggregation {
	return &pb.StructuredAggregationQuery_Aggregation{Alias: alias, Operator: &pb.StructuredAggregationQuery_Aggregation_Avg_{Avg: &pb.StructuredAggregationQuery_Aggregation_Avg{Field: fref(field)}}}
}

// ids returns the document ids of query results, in order.
func resultIDs(rs []*pb.RunQueryResponse) string {
	var ids []string
	for _, r := range rs {
		n := r.GetDocument().GetName()
		ids = append(ids, n[strings.LastIndexByte(n, '/')+1:])
	}
	return strings.Join(ids, ",")
}

func (h *hctx) from() []*pb.StructuredQuery_CollectionSelector {
	return []*pb.StructuredQuery_CollectionSelector{{CollectionId: h.coll}}
}

func ival(n int64) *pb.Value  { return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: n}} }
func sval(s string) *pb.Value { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}} }
func fref(p string) *pb.StructuredQuery_FieldReference {
	return &pb.StructuredQuery_FieldReference{FieldPath: p}
}
func ffilter(p string, op pb.StructuredQuery_FieldFilter_Operator, v *pb.Value) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{Field: fref(p), Op: op, Value: v}}}
}
func and(fs ...*pb.StructuredQuery_Filter) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{
		Op: pb.StructuredQuery_CompositeFilter_AND, Filters: fs}}}
}
func ref(h *hctx, id string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: h.doc(id)}}
}

// nested returns a map value nested depth levels deep: depth 1 is {a: 1}.
func nested(depth int) *pb.Value {
	v := ival(1)
	for range depth {
		v = &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{"a": v}}}}
	}
	return v
}

// rawCodec sends and receives bytes as they are, to put malformed protobuf
// on the wire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(b []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), b...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func (h *hctx) rawCommit(b []byte) error {
	var out []byte
	return h.tg.conn.Invoke(h.ctx, "/google.firestore.v1.Firestore/Commit", &b, &out, grpc.ForceCodec(rawCodec{}))
}

// commitBytes encodes a CommitRequest of one update of document name whose
// field f holds the already encoded Value v.
func commitBytes(db, name, f string, v []byte) []byte {
	var entry, doc, w, req []byte
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, f)
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendBytes(entry, v)
	doc = protowire.AppendTag(doc, 1, protowire.BytesType)
	doc = protowire.AppendString(doc, name)
	doc = protowire.AppendTag(doc, 2, protowire.BytesType)
	doc = protowire.AppendBytes(doc, entry)
	w = protowire.AppendTag(w, 1, protowire.BytesType)
	w = protowire.AppendBytes(w, doc)
	req = protowire.AppendTag(req, 1, protowire.BytesType)
	req = protowire.AppendString(req, db)
	req = protowire.AppendTag(req, 2, protowire.BytesType)
	req = protowire.AppendBytes(req, w)
	return req
}

// deepValueBytes encodes a Value of maps nested depth levels ({a: {a: ...
// 1}}) without building the tree, so depths past any decoder's recursion
// limit stay cheap: lengths are computed inside out, bytes written outside in.
func deepValueBytes(depth int) []byte {
	leaf := []byte{0x10, 0x01} // integer_value: 1
	// v[k] is the size of the Value at level k; entry and map sizes follow.
	vs := make([]int, depth+1)
	vs[0] = len(leaf)
	entry := func(k int) int { return 3 + 1 + protowire.SizeVarint(uint64(vs[k-1])) + vs[k-1] }
	mapv := func(k int) int { e := entry(k); return 1 + protowire.SizeVarint(uint64(e)) + e }
	for k := 1; k <= depth; k++ {
		m := mapv(k)
		vs[k] = 1 + protowire.SizeVarint(uint64(m)) + m
	}
	out := make([]byte, 0, vs[depth])
	for k := depth; k >= 1; k-- {
		out = append(out, 0x32) // Value.map_value
		out = protowire.AppendVarint(out, uint64(mapv(k)))
		out = append(out, 0x0a) // MapValue.fields
		out = protowire.AppendVarint(out, uint64(entry(k)))
		out = append(out, 0x0a, 0x01, 'a', 0x12) // key "a", value
		out = protowire.AppendVarint(out, uint64(vs[k-1]))
	}
	return append(out, leaf...)
}

// badUTF8 marshals m and replaces the placeholder XXXX (which m must hold
// in exactly one string) by four bytes that are not UTF-8.
func badUTF8(m proto.Message) []byte {
	b, _ := proto.Marshal(m)
	return bytes.Replace(b, []byte("XXXX"), []byte{0xff, 0xfe, 0xc0, 0x80}, 1)
}

func hardeningCases() []hardCase {
	asc := pb.StructuredQuery_ASCENDING
	lt, gt, eq := pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_EQUAL
	return []hardCase{
		{name: "commit of 501 writes", code: codes.OK, run: func(h *hctx) error {
			var ws []*pb.Write
			for i := range 501 {
				ws = append(ws, h.set(fmt.Sprint("d", i), map[string]*pb.Value{"n": ival(int64(i))}))
			}
			_, err := h.commit(ws...)
			return err
		}},
		{name: "maps nested 20 deep", code: codes.OK, run: func(h *hctx) error {
			_, err := h.commit(h.set("deep", map[string]*pb.Value{"m": nested(20)}))
			return err
		}},
		{name: "maps nested 21 deep", code: codes.InvalidArgument, msg: []string{"m.a.a"}, run: func(h *hctx) error {
			_, err := h.commit(h.set("deep", map[string]*pb.Value{"m": nested(21)}))
			return err
		}},
		{name: "invalid UTF-8 in a string value", code: codes.InvalidArgument, official: codes.Unknown, differs: true, msg: []string{"UTF-8"}, run: func(h *hctx) error {
			return h.rawCommit(badUTF8(&pb.CommitRequest{Database: h.db, Writes: []*pb.Write{h.set("u", map[string]*pb.Value{"s": sval("XXXX")})}}))
		}},
		{name: "invalid UTF-8 in a field name", code: codes.InvalidArgument, official: codes.Unknown, differs: true, msg: []string{"UTF-8"}, run: func(h *hctx) error {
			return h.rawCommit(badUTF8(&pb.CommitRequest{Database: h.db, Writes: []*pb.Write{h.set("u", map[string]*pb.Value{"XXXX": ival(1)})}}))
		}},
		{name: "invalid UTF-8 in a document name", code: codes.InvalidArgument, official: codes.Unknown, differs: true, msg: []string{"UTF-8"}, run: func(h *hctx) error {
			return h.rawCommit(badUTF8(&pb.CommitRequest{Database: h.db, Writes: []*pb.Write{h.set("XXXX", nil)}}))
		}},
		{name: "garbage bytes", code: codes.InvalidArgument, official: codes.Unknown, differs: true, run: func(h *hctx) error {
			return h.rawCommit([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01})
		}},
		{name: "maps nested 150 deep on the wire", code: codes.InvalidArgument, run: func(h *hctx) error {
			return h.rawCommit(commitBytes(h.db, h.doc("n"), "m", deepValueBytes(150)))
		}},
		{name: "maps nested 20000 deep on the wire", code: codes.InvalidArgument, official: codes.Unknown, differs: true, run: func(h *hctx) error {
			return h.rawCommit(commitBytes(h.db, h.doc("n"), "m", deepValueBytes(20000)))
		}},
		{name: "unknown orderBy direction", code: codes.InvalidArgument, msg: []string{"Unrecognized ordering"}, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), OrderBy: []*pb.StructuredQuery_Order{{Field: fref("a"), Direction: 7}}})
			return err
		}},
		{name: "negative pageSize in listDocuments", code: codes.InvalidArgument, msg: []string{"Page size must be nonnegative"}, run: func(h *hctx) error {
			_, err := h.tg.raw.ListDocuments(h.ctx, &pb.ListDocumentsRequest{Parent: h.root, CollectionId: h.coll, PageSize: -1}).Next()
			return err
		}},
		{name: "negative pageSize in listCollectionIds", code: codes.InvalidArgument, msg: []string{"page_size must be greater than or equal to zero"}, run: func(h *hctx) error {
			_, err := h.tg.raw.ListCollectionIds(h.ctx, &pb.ListCollectionIdsRequest{Parent: h.root, PageSize: -1}).Next()
			return err
		}},
		{name: "foreign pageToken in listDocuments", code: codes.InvalidArgument, msg: []string{"invalid page token"}, run: func(h *hctx) error {
			_, err := h.tg.raw.ListDocuments(h.ctx, &pb.ListDocumentsRequest{Parent: h.root, CollectionId: h.coll, PageToken: "bm90LWEtdG9rZW4"}).Next()
			return err
		}},
		{name: "foreign pageToken in listCollectionIds", code: codes.InvalidArgument, msg: []string{"invalid page token"}, run: func(h *hctx) error {
			_, err := h.tg.raw.ListCollectionIds(h.ctx, &pb.ListCollectionIdsRequest{Parent: h.root, PageToken: "bm90LWEtdG9rZW4"}).Next()
			return err
		}},
		{name: "first write-stream request carries writes", code: codes.InvalidArgument, official: codes.Unknown, differs: true, run: func(h *hctx) error {
			ws, err := h.tg.raw.Write(h.ctx)
			if err != nil {
				return err
			}
			if err := ws.Send(&pb.WriteRequest{Database: h.db, Writes: []*pb.Write{h.set("w", nil)}}); err != nil {
				return err
			}
			for {
				if _, err := ws.Recv(); err != nil {
					return err
				}
			}
		}},
		{name: "garbage stream_token", code: codes.InvalidArgument, official: codes.Unknown, differs: true, msg: []string{"stream_token"}, run: func(h *hctx) error {
			ws, err := h.tg.raw.Write(h.ctx)
			if err != nil {
				return err
			}
			if err := ws.Send(&pb.WriteRequest{Database: h.db}); err != nil {
				return err
			}
			if _, err := ws.Recv(); err != nil {
				return err
			}
			if err := ws.Send(&pb.WriteRequest{StreamToken: []byte("garbage!"), Writes: []*pb.Write{h.set("w", nil)}}); err != nil {
				return err
			}
			for {
				if _, err := ws.Recv(); err != nil {
					return err
				}
			}
		}},
		{name: "Listen target id added twice", code: codes.InvalidArgument, official: codes.Unknown, differs: true, msg: []string{"Target id 7"}, run: func(h *hctx) error {
			ls, err := h.tg.raw.Listen(h.ctx)
			if err != nil {
				return err
			}
			add := &pb.ListenRequest{Database: h.db, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 7,
				TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{h.doc("l")}}}}}}
			if err := ls.Send(add); err != nil {
				return err
			}
			if err := ls.Send(add); err != nil {
				return err
			}
			for {
				if _, err := ls.Recv(); err != nil {
					return err
				}
			}
		}},
		{name: "delete then update in one commit", code: codes.InvalidArgument, msg: []string{"Cannot delete then update an entity in the same request."}, run: func(h *hctx) error {
			if _, err := h.commit(h.set("x", nil)); err != nil {
				return err
			}
			_, err := h.commit(&pb.Write{Operation: &pb.Write_Delete{Delete: h.doc("x")}}, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: h.doc("x")}},
				UpdateMask: &pb.DocumentMask{}, CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}})
			return err
		}},
		{name: "orderBy after __name__ with several inequalities", code: codes.InvalidArgument, msg: []string{"order by clause cannot contain more fields after the key"}, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), Where: and(ffilter("a", gt, ival(1)), ffilter("b", lt, ival(2))),
				OrderBy: []*pb.StructuredQuery_Order{{Field: fref("__name__"), Direction: asc}, {Field: fref("a"), Direction: asc}}})
			return err
		}},
		{name: "equality on key with other inequalities", code: codes.InvalidArgument, msg: []string{"Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."}, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), Where: and(ffilter("a", gt, ival(1)), ffilter("b", lt, ival(2)), ffilter("__name__", eq, ref(h, "x")))})
			return err
		}},
		{name: "orderBy after __name__ with one inequality", code: codes.InvalidArgument, msg: []string{"order by clause cannot contain more fields after the key"}, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), Where: ffilter("a", gt, ival(1)),
				OrderBy: []*pb.StructuredQuery_Order{{Field: fref("a"), Direction: asc}, {Field: fref("__name__"), Direction: asc}, {Field: fref("b"), Direction: asc}}})
			return err
		}},
		{name: "orderBy after __name__ without inequalities", code: codes.InvalidArgument, msg: []string{"order by clause cannot contain more fields after the key"}, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), Where: ffilter("a", eq, ival(1)),
				OrderBy: []*pb.StructuredQuery_Order{{Field: fref("__name__"), Direction: asc}, {Field: fref("b"), Direction: asc}}})
			return err
		}},
		{name: "equality on key with one inequality", code: codes.InvalidArgument, msg: []string{"Equality on key is not allowed"}, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), Where: and(ffilter("a", gt, ival(1)), ffilter("__name__", eq, ref(h, "x")))})
			return err
		}},
		{name: "equality on key with inequalities on it and another field", code: codes.OK, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), Where: and(ffilter("a", gt, ival(1)), ffilter("__name__", gt, ref(h, "a")), ffilter("__name__", eq, ref(h, "x")))})
			return err
		}},
		{name: "numeric document ids", code: codes.OK, run: func(h *hctx) error {
			for _, id := range []string{"b", "__id7__", "__id-9223372036854775808__", "a", "__id12__"} {
				if _, err := h.commit(h.set(id, map[string]*pb.Value{"n": ival(1)})); err != nil {
					return err
				}
			}
			rs, err := h.query(&pb.StructuredQuery{From: h.from()})
			if err != nil {
				return err
			}
			if got, want := resultIDs(rs), "__id-9223372036854775808__,__id7__,__id12__,a,b"; got != want {
				return fmt.Errorf("order %s, want %s", got, want)
			}
			rs, err = h.query(&pb.StructuredQuery{From: h.from(), Where: ffilter("__name__", gt, ref(h, "__id7__"))})
			if err != nil {
				return err
			}
			if got, want := resultIDs(rs), "__id12__,a,b"; got != want {
				return fmt.Errorf("__name__ > __id7__: %s, want %s", got, want)
			}
			return nil
		}},
		{name: "other __.*__ ids stay reserved", code: codes.InvalidArgument, run: func(h *hctx) error {
			_, err := h.commit(h.set("__idx__", nil))
			return err
		}},
		{name: "kindless collection-group query under a parent", code: codes.OK, run: func(h *hctx) error {
			if _, err := h.commit(h.set("p", nil), &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: h.doc("p") + "/a/1"}}},
				&pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: h.doc("p") + "/b/2/c/3"}}},
				h.set("q", nil), &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: h.doc("q") + "/a/4"}}}); err != nil {
				return err
			}
			rs, err := h.queryUnder(h.doc("p"), &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{AllDescendants: true}}})
			if err != nil {
				return err
			}
			if got, want := resultIDs(rs), "1,3"; got != want {
				return fmt.Errorf("descendants of p: %s, want %s", got, want)
			}
			return nil
		}},
		{name: "implicit order with several inequalities puts __name__ last", code: codes.OK, run: func(h *hctx) error {
			docs := map[string][2]int64{"a": {2, 1}, "b": {1, 2}, "c": {1, 1}, "d": {2, 2}}
			for id, v := range docs {
				if _, err := h.commit(h.set(id, map[string]*pb.Value{"x": ival(v[0]), "y": ival(v[1])})); err != nil {
					return err
				}
			}
			rs, err := h.query(&pb.StructuredQuery{From: h.from(), Where: and(ffilter("y", gt, ival(0)), ffilter("x", gt, ival(0)))})
			if err != nil {
				return err
			}
			if got, want := resultIDs(rs), "c,b,a,d"; got != want {
				return fmt.Errorf("order %s, want %s", got, want)
			}
			return nil
		}},
		{name: "multi-field aggregation over docs having every field", code: codes.OK, run: func(h *hctx) error {
			if _, err := h.commit(h.set("1", map[string]*pb.Value{"a": ival(1), "b": ival(10)}), h.set("2", map[string]*pb.Value{"a": ival(2)}),
				h.set("3", map[string]*pb.Value{"b": ival(30)}), h.set("4", nil)); err != nil {
				return err
			}
			f, err := h.aggregate(countAgg("n"), sumAgg("sa", "a"), avgAgg("ab", "b"))
			if err != nil {
				return err
			}
			if f["n"].GetIntegerValue() != 1 || f["sa"].GetIntegerValue() != 1 || f["ab"].GetDoubleValue() != 10 {
				return fmt.Errorf("aggregates %v, want n=1 sa=1 ab=10", f)
			}
			return nil
		}},
		{name: "count and one sum count only docs having the field", code: codes.OK, run: func(h *hctx) error {
			if _, err := h.commit(h.set("1", map[string]*pb.Value{"a": ival(1)}), h.set("2", map[string]*pb.Value{"a": sval("x")}), h.set("3", nil)); err != nil {
				return err
			}
			f, err := h.aggregate(countAgg("n"), sumAgg("sa", "a"))
			if err != nil {
				return err
			}
			if f["n"].GetIntegerValue() != 2 || f["sa"].GetIntegerValue() != 1 {
				return fmt.Errorf("aggregates %v, want n=2 sa=1", f)
			}
			return nil
		}},
		{name: "commit result of a delete has no update_time", code: codes.OK, run: func(h *hctx) error {
			r, err := h.commit(h.set("s", nil), &pb.Write{Operation: &pb.Write_Delete{Delete: h.doc("gone")}})
			if err != nil {
				return err
			}
			if r.GetWriteResults()[0].GetUpdateTime() == nil || r.GetWriteResults()[1].GetUpdateTime() != nil {
				return fmt.Errorf("write results %v: want an update_time on the set only", r.GetWriteResults())
			}
			return nil
		}},
		{name: "delete then set in one commit", code: codes.OK, run: func(h *hctx) error {
			_, err := h.commit(&pb.Write{Operation: &pb.Write_Delete{Delete: h.doc("x")}}, h.set("x", nil))
			return err
		}},
		{name: "BatchWrite delete result has no update_time", code: codes.OK, run: func(h *hctx) error {
			r, err := h.tg.raw.BatchWrite(h.ctx, &pb.BatchWriteRequest{Database: h.db, Writes: []*pb.Write{
				h.set("s", nil), {Operation: &pb.Write_Delete{Delete: h.doc("gone")}}}})
			if err != nil {
				return err
			}
			if r.GetWriteResults()[0].GetUpdateTime() == nil || r.GetWriteResults()[1].GetUpdateTime() != nil {
				return fmt.Errorf("write results %v: want an update_time on the set only", r.GetWriteResults())
			}
			return nil
		}},
		{name: "more than 5 aggregations", code: codes.InvalidArgument, official: codes.Unknown, differs: true, msg: []string{"maximum number of aggregations"}, run: func(h *hctx) error {
			var aggs []*pb.StructuredAggregationQuery_Aggregation
			for i := range 6 {
				aggs = append(aggs, countAgg(fmt.Sprint("c", i)))
			}
			_, err := h.aggregate(aggs...)
			return err
		}},
		{name: "limit still fits in a request", code: codes.OK, run: func(h *hctx) error {
			_, err := h.query(&pb.StructuredQuery{From: h.from(), Limit: wrapperspb.Int32(10)})
			return err
		}},
	}
}

// official returns a target on the official emulator: the one named by
// PYRIC_OFFICIAL_FIRESTORE (host:port, project pyric-oracle) when set,
// otherwise one this binary starts (skipping when it is not installed).
func official(t *testing.T) *target {
	if h := os.Getenv("PYRIC_OFFICIAL_FIRESTORE"); h != "" {
		return dial(t, h, "pyric-oracle")
	}
	e := emulator.Start(t)
	return dial(t, e.Host, e.Project)
}

func runHard(t *testing.T, tg *target, i int, c hardCase) error {
	h := &hctx{tg: tg, coll: fmt.Sprintf("hard%d_%d", i, time.Now().UnixNano()), db: "projects/" + tg.project + "/databases/(default)"}
	h.root = h.db + "/documents"
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	h.ctx = ctx
	return c.run(h)
}

// TestHardening sends each bad (or formerly mishandled) request to pyric
// and checks the code and message, and, unless -short, sends it to the
// official emulator too and checks that it answers with the same code.
func TestHardening(t *testing.T) {
	s := fstest.Start(t, fstest.Options{Project: "demo-hard"})
	ours := dial(t, s.Addr, "demo-hard")
	var theirs *target
	if !testing.Short() {
		theirs = official(t)
	}
	for i, c := range hardeningCases() {
		t.Run(c.name, func(t *testing.T) {
			err := runHard(t, ours, i, c)
			if got := status.Code(err); got != c.code {
				t.Errorf("pyric: %v, want %v", err, c.code)
			}
			for _, f := range c.msg {
				if !strings.Contains(status.Convert(err).Message(), f) {
					t.Errorf("pyric message %q lacks %q", status.Convert(err).Message(), f)
				}
			}
			if theirs == nil {
				return
			}
			terr := runHard(t, theirs, i, c)
			want := c.code
			if c.differs {
				want = c.official
			}
			if got := status.Code(terr); got != want {
				t.Errorf("official emulator: %v, want %v", terr, c.code)
			}
			t.Logf("pyric: %v\nofficial: %v", status.Convert(err).Message(), status.Convert(terr).Message())
		})
	}
}
