package firestore

import (
	"math"
	"slices"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// nearest is a query's find_nearest stage: after the filters, documents
// whose vector field has the query vector's dimension are ranked by
// distance, cut at the threshold and the limit, and optionally carry the
// distance in a result field.
type nearest struct {
	field     FieldPath
	vec       []float64
	measure   pb.StructuredQuery_FindNearest_DistanceMeasure
	limit     int
	result    FieldPath // nil: none
	threshold *float64
}

func compileNearest(fn *pb.StructuredQuery_FindNearest) (*nearest, error) {
	fp, err := ParseFieldPath(fn.GetVectorField().GetFieldPath())
	if err != nil {
		return nil, err
	}
	m := fn.GetQueryVector().GetMapValue()
	if m == nil || !fsvalue.IsVector(m) {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "find_nearest.query_vector must be a vector value.")
	}
	n := &nearest{field: fp, measure: fn.GetDistanceMeasure()}
	for _, v := range fsvalue.VectorElems(m) {
		f, ok := pbNumber(v)
		if !ok {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "find_nearest.query_vector must hold only numbers.")
		}
		n.vec = append(n.vec, f)
	}
	if len(n.vec) == 0 || len(n.vec) > 2048 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "find_nearest.query_vector must have between 1 and 2048 dimensions; it has %d.", len(n.vec))
	}
	switch n.measure {
	case pb.StructuredQuery_FindNearest_EUCLIDEAN, pb.StructuredQuery_FindNearest_COSINE, pb.StructuredQuery_FindNearest_DOT_PRODUCT:
	default:
		return nil, fsvalue.Errorf(ErrInvalidArgument, "find_nearest.distance_measure must be EUCLIDEAN, COSINE or DOT_PRODUCT.")
	}
	l := fn.GetLimit()
	if l == nil || l.GetValue() <= 0 || l.GetValue() > 1000 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "find_nearest.limit must be between 1 and 1000.")
	}
	n.limit = int(l.GetValue())
	if r := fn.GetDistanceResultField(); r != "" {
		if n.result, err = ParseFieldPath(r); err != nil {
			return nil, err
		}
	}
	if t := fn.GetDistanceThreshold(); t != nil {
		v := t.GetValue()
		n.threshold = &v
	}
	return n, nil
}

func pbNumber(v *pb.Value) (float64, bool) {
	switch x := v.GetValueType().(type) {
	case *pb.Value_DoubleValue:
		return x.DoubleValue, true
	case *pb.Value_IntegerValue:
		return float64(x.IntegerValue), true
	}
	return 0, false
}

// distance returns the document's distance, false when its field is not a
// vector of the query's dimension.
func (n *nearest) distance(d *pb.Document) (float64, bool) {
	m := fsvalue.GetField(d.Fields, n.field).GetMapValue()
	if m == nil || !fsvalue.IsVector(m) {
		return 0, false
	}
	elems := fsvalue.VectorElems(m)
	if len(elems) != len(n.vec) {
		return 0, false
	}
	var dot, na, nb, sq float64
	for i, e := range elems {
		x, ok := pbNumber(e)
		if !ok {
			return 0, false
		}
		y := n.vec[i]
		dot += x * y
		na += x * x
		nb += y * y
		sq += (x - y) * (x - y)
	}
	switch n.measure {
	case pb.StructuredQuery_FindNearest_EUCLIDEAN:
		return math.Sqrt(sq), true
	case pb.StructuredQuery_FindNearest_COSINE:
		if na == 0 || nb == 0 {
			return 0, false
		}
		return 1 - dot/(math.Sqrt(na)*math.Sqrt(nb)), true
	default:
		return dot, true
	}
}

// apply ranks docs (already filtered) and returns the nearest.
func (n *nearest) apply(docs []*pb.Document) []*pb.Document {
	type scored struct {
		d    *pb.Document
		dist float64
	}
	var xs []scored
	for _, d := range docs {
		dist, ok := n.distance(d)
		if !ok {
			continue
		}
		if t := n.threshold; t != nil {
			if n.measure == pb.StructuredQuery_FindNearest_DOT_PRODUCT && dist < *t ||
				n.measure != pb.StructuredQuery_FindNearest_DOT_PRODUCT && dist > *t {
				continue
			}
		}
		xs = append(xs, scored{d, dist})
	}
	slices.SortStableFunc(xs, func(a, b scored) int {
		c := fsvalue.CmpFloat(a.dist, b.dist)
		if n.measure == pb.StructuredQuery_FindNearest_DOT_PRODUCT {
			c = -c
		}
		if c == 0 {
			c = fsvalue.CompareNames(a.d.Name, b.d.Name)
		}
		return c
	})
	if len(xs) > n.limit {
		xs = xs[:n.limit]
	}
	out := make([]*pb.Document, len(xs))
	for i, x := range xs {
		d := x.d
		if n.result != nil {
			d = proto.Clone(d).(*pb.Document)
			if d.Fields == nil {
				d.Fields = map[string]*pb.Value{}
			}
			fsvalue.SetField(d.Fields, n.result, Double(x.dist))
		}
		out[i] = d
	}
	return out
}
