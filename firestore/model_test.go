package firestore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// TestModelRandomized drives random writes, transactions and queries
// against the engine and a trivial reference model (a map of int fields,
// filtered and sorted by hand) and requires identical results.
func TestModelRandomized(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			runModel(t, seed)
		})
	}
}

func runModel(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 99))
	e := newTestEngine(t)
	model := map[string]map[string]int64{}
	id := func() string { return fmt.Sprintf("d%d", r.IntN(12)) }
	for step := 0; step < 300; step++ {
		switch r.IntN(6) {
		case 0, 1: // set with random fields
			d := id()
			doc := map[string]int64{}
			fields := map[string]*pb.Value{}
			for _, f := range []string{"v", "w"} {
				if r.IntN(4) > 0 {
					n := int64(r.IntN(6))
					doc[f], fields[f] = n, Int(n)
				}
			}
			commitT(t, e, admin, upd("m/"+d, fields))
			model[d] = doc
		case 2:
			d := id()
			commitT(t, e, admin, del("m/"+d))
			delete(model, d)
		case 3: // increment transform (creates if missing)
			d := id()
			commitT(t, e, admin, &pb.Write{Operation: upd("m/"+d, nil).Operation, UpdateMask: mask(),
				UpdateTransforms: []*pb.DocumentTransform_FieldTransform{tr("v", inc(Int(1)))}})
			if model[d] == nil {
				model[d] = map[string]int64{}
			}
			model[d]["v"]++
		case 4: // transaction: copy v from one doc into w of another
			a, b := id(), id()
			err := runTxn(e, admin, func(tx []byte) ([]*pb.Write, error) {
				res, err := e.BatchGetDocuments(bg, admin, &pb.BatchGetDocumentsRequest{Database: testDB.String(), Documents: []string{name("m/" + a)},
					ConsistencySelector: &pb.BatchGetDocumentsRequest_Transaction{Transaction: tx}})
				if err != nil {
					return nil, err
				}
				v := res[0].GetFound().GetFields()["v"].GetIntegerValue()
				return []*pb.Write{{Operation: upd("m/"+b, M("w", Int(v))).Operation, UpdateMask: mask("w")}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			v := model[a]["v"]
			if model[b] == nil {
				model[b] = map[string]int64{}
			}
			model[b]["w"] = v
		case 5: // query
			ops := []pb.StructuredQuery_FieldFilter_Operator{pb.StructuredQuery_FieldFilter_EQUAL, pb.StructuredQuery_FieldFilter_LESS_THAN,
				pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, pb.StructuredQuery_FieldFilter_NOT_EQUAL}
			op := ops[r.IntN(len(ops))]
			val := int64(r.IntN(6))
			desc := r.IntN(2) == 0
			lim := int32(r.IntN(5))
			sq := &pb.StructuredQuery{From: from("m"), Where: where("v", op, Int(val)), OrderBy: []*pb.StructuredQuery_Order{orderBy("v", desc)}}
			if lim > 0 {
				sq.Limit = limit(lim)
			}
			got := ids(t, e, sq)
			var want []string
			for d, f := range model {
				v, ok := f["v"]
				if !ok {
					continue
				}
				keep := map[pb.StructuredQuery_FieldFilter_Operator]bool{
					pb.StructuredQuery_FieldFilter_EQUAL: v == val, pb.StructuredQuery_FieldFilter_LESS_THAN: v < val,
					pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL: v >= val, pb.StructuredQuery_FieldFilter_NOT_EQUAL: v != val}[op]
				if keep {
					want = append(want, d)
				}
			}
			sort.Slice(want, func(i, j int) bool {
				vi, vj := model[want[i]]["v"], model[want[j]]["v"]
				if vi != vj {
					return (vi < vj) != desc
				}
				return (want[i] < want[j]) != desc
			})
			if lim > 0 && int(lim) < len(want) {
				want = want[:lim]
			}
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: query v %v %d desc=%v limit=%d\n got %v\nwant %v", step, op, val, desc, lim, got, want)
			}
		}
	}
	// Final state equals the model.
	for d, f := range model {
		doc := getT(t, e, "m/"+d)
		if doc == nil || len(doc.Fields) != len(f) {
			t.Fatalf("doc %s = %v, model %v", d, doc, f)
		}
		for k, v := range f {
			if doc.Fields[k].GetIntegerValue() != v {
				t.Fatalf("doc %s.%s = %v, model %d", d, k, doc.Fields[k], v)
			}
		}
	}
}
