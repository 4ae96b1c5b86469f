package discover

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	gfs "cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/iterator"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ClientSource reads a live Firestore endpoint through the official Go
// client: a real project with credentials, or an emulator (the Firestore
// emulator or pyric) when FIRESTORE_EMULATOR_HOST is set.
type ClientSource struct {
	Client *gfs.Client
}

var _ GroupSource = ClientSource{}

// ListCollectionIDs implements Source.
func (s ClientSource) ListCollectionIDs(ctx context.Context, docPath string) ([]string, error) {
	var it *gfs.CollectionIterator
	if docPath == "" {
		it = s.Client.Collections(ctx)
	} else {
		it = s.Client.Doc(docPath).Collections(ctx)
	}
	var out []string
	for {
		c, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c.ID)
	}
}

// ListDocumentIDs implements Source.
func (s ClientSource) ListDocumentIDs(ctx context.Context, collPath string) ([]string, error) {
	it := s.Client.Collection(collPath).DocumentRefs(ctx)
	var out []string
	for {
		d, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d.ID)
	}
}

// GetDocument implements Source.
func (s ClientSource) GetDocument(ctx context.Context, docPath string) (map[string]*pb.Value, bool, error) {
	snap, err := s.Client.Doc(docPath).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := map[string]*pb.Value{}
	for k, v := range snap.Data() {
		pv, err := toProto(v)
		if err != nil {
			return nil, false, fmt.Errorf("%s.%s: %w", docPath, k, err)
		}
		out[k] = pv
	}
	return out, true, nil
}

// CollectionGroupDocs implements GroupSource.
func (s ClientSource) CollectionGroupDocs(ctx context.Context, collectionID string, limit int) ([]string, error) {
	q := s.Client.CollectionGroup(collectionID).Select()
	if limit > 0 {
		q = q.Limit(limit)
	}
	it := q.Documents(ctx)
	var out []string
	for {
		d, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		p := d.Ref.Path
		if i := strings.Index(p, "/documents/"); i >= 0 {
			p = p[i+len("/documents/"):]
		}
		out = append(out, p)
	}
}

// toProto converts what DocumentSnapshot.Data returns back to the wire
// value, keeping integers and doubles apart as the wire does.
func toProto(v any) (*pb.Value, error) {
	switch x := v.(type) {
	case nil:
		return &pb.Value{ValueType: &pb.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}, nil
	case bool:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: x}}, nil
	case int64:
		return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: x}}, nil
	case float64:
		return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: x}}, nil
	case string:
		return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: x}}, nil
	case []byte:
		return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: x}}, nil
	case time.Time:
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(x)}}, nil
	case *latlng.LatLng:
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: x}}, nil
	case *gfs.DocumentRef:
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: x.Path}}, nil
	case gfs.Vector64:
		vals := make([]*pb.Value, len(x))
		for i, f := range x {
			vals[i] = &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: f}}
		}
		return vectorValue(vals), nil
	case gfs.Vector32:
		vals := make([]*pb.Value, len(x))
		for i, f := range x {
			vals[i] = &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: float64(f)}}
		}
		return vectorValue(vals), nil
	case []any:
		vals := make([]*pb.Value, len(x))
		for i, e := range x {
			pv, err := toProto(e)
			if err != nil {
				return nil, err
			}
			vals[i] = pv
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vals}}}, nil
	case map[string]any:
		fields := make(map[string]*pb.Value, len(x))
		for k, e := range x {
			pv, err := toProto(e)
			if err != nil {
				return nil, err
			}
			fields[k] = pv
		}
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: fields}}}, nil
	}
	if f, ok := v.(float32); ok && !math.IsNaN(float64(f)) {
		return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: float64(f)}}, nil
	}
	return nil, fmt.Errorf("unexpected value of type %T", v)
}

func vectorValue(vals []*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		"__type__": {ValueType: &pb.Value_StringValue{StringValue: "__vector__"}},
		"value":    {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vals}}},
	}}}}
}
