package firestore

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// MarshalFields writes exactly what json.Marshal(EncodeFields(…)) does,
// for every kind of value and the strings encoding/json escapes, so a
// capture appends the same records either way.
func TestMarshalFieldsMatchesEncodeFields(t *testing.T) {
	t.Parallel()
	db := DatabaseName{Project: "demo", Database: DefaultDatabase}
	ts := &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: 1700000000, Nanos: 123000}}}
	for name, v := range map[string]*pb.Value{
		"null":            Null(),
		"unset":           {},
		"bool":            Bool(true),
		"int":             Int(-1 << 62),
		"double":          Double(1.5),
		"double tiny":     Double(1e-300),
		"double huge":     Double(1e300),
		"double integral": Double(3),
		"double big int":  Double(1e21),
		"nan":             Double(math.NaN()),
		"inf":             Double(math.Inf(1)),
		"-inf":            Double(math.Inf(-1)),
		"-0":              Double(math.Copysign(0, -1)),
		"timestamp":       ts,
		"string":          String("plain"),
		"escaped string":  String("<a href=\"x\">&\\\n\t\x01é\u2028\xff"),
		"bytes":           {ValueType: &pb.Value_BytesValue{BytesValue: []byte{0, 1, 0xff}}},
		"reference here":  {ValueType: &pb.Value_ReferenceValue{ReferenceValue: db.DocName("users/alice")}},
		"reference other": {ValueType: &pb.Value_ReferenceValue{ReferenceValue: "projects/p/databases/other/documents/a/b"}},
		"geo":             {ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: 48.8566, Longitude: -1e-7}}},
		"array":           Array(Int(1), String("<x>"), Array(), Map(nil)),
		"map":             Map(map[string]*pb.Value{"b": Int(1), "a": Null(), "é<": Bool(false), "": String("")}),
		"marker map":      Map(map[string]*pb.Value{"__type": String("float"), "value": Int(1)}),
		"marker map 2":    Map(map[string]*pb.Value{"__type__": String("x")}),
		"vector":          Vector(1, 2.5, -3),
		"empty vector":    Vector(),
	} {
		fields := map[string]*pb.Value{"f": v, "z": Int(0), "<k>": v}
		want, err := json.Marshal(EncodeFields(fields, db))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := MarshalFields(fields, db); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	if got := string(MarshalFields(nil, db)); got != "{}" {
		t.Errorf("no fields: %s", got)
	}
}

// The shared forms of small integers are the forms every integer gets,
// at and past both ends of the shared range.
func TestIntegerFormsAreNumbers(t *testing.T) {
	for _, n := range []int64{minSharedInt - 1, minSharedInt, -1, 0, 7, 99, 100, maxSharedInt, maxSharedInt + 1, math.MaxInt64, math.MinInt64} {
		got := encodeValue(Int(n), testDB, nil)
		if want := json.Number(strconv.FormatInt(n, 10)); got != any(want) {
			t.Errorf("%d encodes as %#v, want %#v", n, got, want)
		}
	}
}
