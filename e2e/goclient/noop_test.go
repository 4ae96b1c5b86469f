package goclient

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// noopCase is a commit of writes to documents p and q (set up first with
// n=2, s="x", arr=[1]); the case's writes name them by id.
type noopCase struct {
	name   string
	txn    bool // commit inside a read-write transaction that read p
	writes func(doc func(id string) string) []*pb.Write
}

func intValue(v int64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: v}}
}

// transformWrite is a transform-only write (an update with an empty mask).
func transformWrite(name string, fts ...*pb.DocumentTransform_FieldTransform) *pb.Write {
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: name}}, UpdateMask: &pb.DocumentMask{}, UpdateTransforms: fts}
}

func fieldMax(f string, v int64) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{FieldPath: f, TransformType: &pb.DocumentTransform_FieldTransform_Maximum{Maximum: intValue(v)}}
}

func fieldMin(f string, v int64) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{FieldPath: f, TransformType: &pb.DocumentTransform_FieldTransform_Minimum{Minimum: intValue(v)}}
}

func fieldInc(f string, v int64) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{FieldPath: f, TransformType: &pb.DocumentTransform_FieldTransform_Increment{Increment: intValue(v)}}
}

func fieldUnion(f string, v int64) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{FieldPath: f, TransformType: &pb.DocumentTransform_FieldTransform_AppendMissingElements{AppendMissingElements: &pb.ArrayValue{Values: []*pb.Value{intValue(v)}}}}
}

func fieldRemove(f string, v int64) *pb.DocumentTransform_FieldTransform {
	return &pb.DocumentTransform_FieldTransform{FieldPath: f, TransformType: &pb.DocumentTransform_FieldTransform_RemoveAllFromArray{RemoveAllFromArray: &pb.ArrayValue{Values: []*pb.Value{intValue(v)}}}}
}

var noopFields = map[string]*pb.Value{"n": intValue(2), "s": {ValueType: &pb.Value_StringValue{StringValue: "x"}},
	"arr": {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: []*pb.Value{intValue(1)}}}}}

var noopCases = []noopCase{
	{name: "maximum below", writes: func(d func(string) string) []*pb.Write { return []*pb.Write{transformWrite(d("p"), fieldMax("n", 1))} }},
	{name: "maximum equal", writes: func(d func(string) string) []*pb.Write { return []*pb.Write{transformWrite(d("p"), fieldMax("n", 2))} }},
	{name: "minimum above", writes: func(d func(string) string) []*pb.Write { return []*pb.Write{transformWrite(d("p"), fieldMin("n", 3))} }},
	{name: "arrayUnion present", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldUnion("arr", 1))}
	}},
	{name: "arrayRemove absent", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldRemove("arr", 7))}
	}},
	{name: "increment by 0", writes: func(d func(string) string) []*pb.Write { return []*pb.Write{transformWrite(d("p"), fieldInc("n", 0))} }},
	{name: "all no-op transforms in one write", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldMax("n", 0), fieldUnion("arr", 1))}
	}},
	{name: "set with identical data", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: d("p"), Fields: noopFields}}}}
	}},
	{name: "no-op transform then a changing write to the same document", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldMax("n", 1)), transformWrite(d("p"), fieldInc("n", 1))}
	}},
	{name: "changing write then a no-op transform to the same document", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldInc("n", 1)), transformWrite(d("p"), fieldUnion("arr", 1))}
	}},
	{name: "no-op transform beside a change to another document", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldRemove("arr", 7)), transformWrite(d("q"), fieldInc("n", 1))}
	}},
	{name: "two writes that change and restore the document", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldMin("arr", 2), fieldMin("n", 2)), transformWrite(d("p"), fieldUnion("arr", 1))}
	}},
	{name: "increment then decrement", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldInc("n", 3)), transformWrite(d("p"), fieldInc("n", -3))}
	}},
	{name: "delete then set with identical data", writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{{Operation: &pb.Write_Delete{Delete: d("p")}}, {Operation: &pb.Write_Update{Update: &pb.Document{Name: d("p"), Fields: noopFields}}}}
	}},
	{name: "transaction no-op transform", txn: true, writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldMax("n", 1))}
	}},
	{name: "transaction change and restore", txn: true, writes: func(d func(string) string) []*pb.Write {
		return []*pb.Write{transformWrite(d("p"), fieldInc("n", 5)), transformWrite(d("p"), fieldMin("n", 2))}
	}},
}

// Commits whose writes leave a document as it was (no-op transforms,
// writes that undo each other, alone, beside changes, in a transaction):
// Pyric answers as the official emulator does, each write result's
// update_time and the stored document's update_time compared with the
// setup's and the commit's times.
// conformance: firestore.write.no-op
func TestNoopWriteUpdateTimeDifferential(t *testing.T) {
	ours, theirs := fuzzPair(t)
	coll := fmt.Sprintf("noop%d", time.Now().UnixNano())
	for i, c := range noopCases {
		base := fmt.Sprintf("%s/c%d", coll, i)
		o, err := runNoop(ours, base, c)
		if err != nil {
			t.Fatalf("%s: pyric: %v", c.name, err)
		}
		th, err := runNoop(theirs, base, c)
		if err != nil {
			t.Fatalf("%s: official: %v", c.name, err)
		}
		if o != th {
			t.Errorf("%s:\n  pyric:    %s\n  official: %s", c.name, o, th)
		} else {
			t.Logf("%s: %s", c.name, o)
		}
	}
}

// runNoop sets p and q up, runs the case's commit and renders each write
// result and each document read back, times reduced to "setup", "commit",
// "unset" or "other".
func runNoop(tg *target, base string, c noopCase) (string, error) {
	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	db := "projects/" + tg.project + "/databases/(default)"
	doc := func(id string) string { return db + "/documents/" + base + id }
	setup, err := tg.raw.Commit(ctx, &pb.CommitRequest{Database: db, Writes: []*pb.Write{
		{Operation: &pb.Write_Update{Update: &pb.Document{Name: doc("p"), Fields: noopFields}}},
		{Operation: &pb.Write_Update{Update: &pb.Document{Name: doc("q"), Fields: noopFields}}},
	}})
	if err != nil {
		return "", fmt.Errorf("setup: %w", err)
	}
	setupTime := setup.GetCommitTime()
	req := &pb.CommitRequest{Database: db, Writes: c.writes(doc)}
	if c.txn {
		tx, err := tg.raw.BeginTransaction(ctx, &pb.BeginTransactionRequest{Database: db})
		if err != nil {
			return "", fmt.Errorf("begin: %w", err)
		}
		if _, err := tg.raw.GetDocument(ctx, &pb.GetDocumentRequest{Name: doc("p"), ConsistencySelector: &pb.GetDocumentRequest_Transaction{Transaction: tx.GetTransaction()}}); err != nil {
			return "", fmt.Errorf("read in transaction: %w", err)
		}
		req.Transaction = tx.GetTransaction()
	}
	resp, err := tg.raw.Commit(ctx, req)
	out := map[string]any{}
	var commit *timestamppb.Timestamp
	mark := func(x *timestamppb.Timestamp) string {
		switch {
		case x == nil:
			return "unset"
		case x.AsTime().Equal(setupTime.AsTime()):
			return "setup"
		case commit != nil && x.AsTime().Equal(commit.AsTime()):
			return "commit"
		}
		return "other"
	}
	if err != nil {
		out["error"] = status.Code(err).String()
	} else {
		commit = resp.GetCommitTime()
		if !commit.AsTime().After(setupTime.AsTime()) {
			out["commitTime"] = "not after setup"
		}
		var results []any
		for _, wr := range resp.GetWriteResults() {
			var trs []any
			for _, v := range wr.GetTransformResults() {
				trs = append(trs, plainValue(v, commit.AsTime()))
			}
			results = append(results, map[string]any{"transforms": trs, "updateTime": mark(wr.GetUpdateTime())})
		}
		out["results"] = results
	}
	after := map[string]any{}
	for _, id := range []string{"p", "q"} {
		d, err := tg.raw.GetDocument(ctx, &pb.GetDocumentRequest{Name: doc(id)})
		if err != nil {
			after[id] = status.Code(err).String()
			continue
		}
		fields := map[string]any{}
		for k, v := range d.GetFields() {
			fields[k] = plainValue(v, time.Time{})
		}
		after[id] = map[string]any{"fields": fields, "createTime": mark(d.GetCreateTime()), "updateTime": mark(d.GetUpdateTime())}
	}
	out["after"] = after
	b, _ := json.Marshal(out)
	return string(b), nil
}
