package fsvalue

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestTypeOrder locks the cross-type order observed on the official
// emulator (orderBy over one field holding every type).
func TestTypeOrder(t *testing.T) {
	t.Parallel()
	ordered := []*pb.Value{
		Null(), Bool(false), Bool(true), Double(nan), Double(math.Inf(-1)), Int(math.MinInt64), Double(-1.5), Int(0),
		Double(0.5), Int(1), Double(math.Inf(1)), tsv(0), tsv(1), String(""), String("a"), String("b"), String("é"),
		bytesv(""), bytesv("a"), refv("a/b"), refv("a/b/c/d"), refv("a0/b"), geov(-1, 5), geov(1, -5), geov(1, 0),
		Array(), Array(Int(1)), Array(Int(1), Int(2)), Array(Int(2)),
		Vector(9), Vector(1, 2), Vector(1, 3), Map(nil), Map(map[string]*pb.Value{"a": Int(1)}),
		Map(map[string]*pb.Value{"a": Int(2)}), Map(map[string]*pb.Value{"b": Int(0)}),
	}
	for i := range ordered {
		for j := range ordered {
			got := Compare(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("Compare(#%d %v, #%d %v) = %d, want %d", i, ordered[i], j, ordered[j], got, want)
			}
		}
	}
}

func TestNumberEquality(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b  *pb.Value
		cmp   int
		equal bool
	}{
		{Int(1), Double(1), 0, true},
		{Double(0), Double(math.Copysign(0, -1)), 0, true},
		{Double(nan), Double(nan), 0, false},
		{Int(math.MaxInt64), Double(9.223372036854775807e18), -1, false},
		{Int(1 << 53), Double(1 << 53), 0, true},
		{Int(1<<53 + 1), Double(1 << 53), 1, false},
		{Null(), Null(), 0, false},
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b); got != c.cmp {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.a, c.b, got, c.cmp)
		}
		if got := Equal(c.a, c.b); got != c.equal {
			t.Errorf("Equal(%v, %v) = %v, want %v", c.a, c.b, got, c.equal)
		}
	}
}

func TestFieldPaths(t *testing.T) {
	t.Parallel()
	good := map[string]FieldPath{
		"a":        {"a"},
		"a.b_1":    {"a", "b_1"},
		"`a.b`.c":  {"a.b", "c"},
		"`a\\`b`":  {"a`b"},
		"`a\\\\b`": {"a\\b"},
		"`1`":      {"1"},
		"__name__": {"__name__"},
		"`é`.x":    {"é", "x"},
	}
	for s, want := range good {
		got, err := ParseFieldPath(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseFieldPath(%q) = %q, %v; want %q", s, got, err, want)
			continue
		}
		back, err := ParseFieldPath(got.String())
		if err != nil || !back.Equal(got) {
			t.Errorf("round trip of %q via %q failed: %v", s, got.String(), err)
		}
	}
	for _, s := range []string{"", "a..b", "a.", ".a", "1a", "a-b", "`a", "``", "a.`b", "`a`b", "a b"} {
		_, err := ParseFieldPath(s)
		if err == nil {
			t.Errorf("ParseFieldPath(%q) succeeded; want an error", s)
			continue
		}
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseFieldPath(%q) error %v is not ErrInvalidArgument", s, err)
		}
	}
	_, err := ParseFieldPath("a..b")
	want := "Invalid property path \"a..b\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)"
	if err.Error() != want {
		t.Errorf("message = %s\nwant      %s", err, want)
	}
}

func TestDocumentNames(t *testing.T) {
	t.Parallel()
	root := "projects/p/databases/(default)/documents"
	good := []string{root + "/a/b", root + "/a/b/c/d", root + "/a/b%20c", root + "/a/" + string(make([]byte, 0)) + "x"}
	for _, n := range good {
		if _, _, err := ParseDocumentName(n); err != nil {
			t.Errorf("ParseDocumentName(%q): %v", n, err)
		}
	}
	bad := map[string]string{
		root + "/w":                `Document name "projects/p/databases/(default)/documents/w" lacks "/" at index 42.`,
		root + "/w/a/..":           `Document name "projects/p/databases/(default)/documents/w/a/.." contains a collection id ".." at index 45.`,
		root + "/w//a":             `Document name "projects/p/databases/(default)/documents/w//a" lacks a resource id at index 43.`,
		root + "/w/__x__":          `Resource id "__x__" is invalid because it is reserved.`,
		root + "/w/.":              `Document name "projects/p/databases/(default)/documents/w/." contains a resource id "." at index 43.`,
		"projects/p/documents/a/b": "",
		root:                       "",
	}
	for n, msg := range bad {
		_, _, err := ParseDocumentName(n)
		if err == nil {
			t.Errorf("ParseDocumentName(%q) succeeded", n)
			continue
		}
		if msg != "" && err.Error() != msg {
			t.Errorf("ParseDocumentName(%q) = %s\nwant %s", n, err, msg)
		}
	}
	long := make([]byte, 1501)
	for i := range long {
		long[i] = 'x'
	}
	if _, _, err := ParseDocumentName(root + "/a/" + string(long)); err == nil {
		t.Error("a 1501-byte id was accepted")
	}
}

func TestCompareNames(t *testing.T) {
	t.Parallel()
	// '/' separates segments: "a/b" < "a-b" even though '-' < '/'? No: segment
	// "a" < "a-b" because it is a prefix.
	if CompareNames("c/a/x/y", "c/a-b") >= 0 {
		t.Error("c/a/x/y should sort before c/a-b (segment a < a-b)")
	}
	if CompareNames("c/b", "c/a/x/y") <= 0 {
		t.Error("c/b should sort after c/a/x/y")
	}
}

func tsv(sec int64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: sec}}}
}
func bytesv(b string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: []byte(b)}}
}
func refv(rel string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: "projects/p/databases/(default)/documents/" + rel}}
}
func geov(lat, lng float64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: lat, Longitude: lng}}}
}

var nan = math.NaN()

// TestValidatePathCountsSegments checks the segment count's three rules
// (at most maxPathSegments, a document's even, a collection's odd) and
// that a valid name is checked without allocating: the segments are
// visited in place. (Not parallel: AllocsPerRun.)
func TestValidatePathCountsSegments(t *testing.T) {
	path := func(n int) string {
		segs := make([]string, n)
		for i := range segs {
			segs[i] = fmt.Sprintf("s%d", i)
		}
		return strings.Join(segs, "/")
	}
	if err := ValidateDocumentPath(path(maxPathSegments)); err != nil {
		t.Errorf("%d segments: %v", maxPathSegments, err)
	}
	long := path(maxPathSegments + 2)
	want := fmt.Sprintf("Document name %q has %d segments; the maximum is %d.", long, maxPathSegments+2, maxPathSegments)
	if err := ValidateDocumentPath(long); err == nil || err.Error() != want {
		t.Errorf("%d segments: %v, want %s", maxPathSegments+2, err, want)
	}
	if err := ValidateDocumentPath("a/b/c"); err == nil || err.Error() != `Document name "a/b/c" lacks "/" at index 5.` {
		t.Errorf("odd document path: %v", err)
	}
	if err := ValidateCollectionPath("a/b"); err == nil || !strings.Contains(err.Error(), "even number of segments") {
		t.Errorf("even collection path: %v", err)
	}
	if err := ValidateCollectionPath("a/b/c"); err != nil {
		t.Errorf("collection path a/b/c: %v", err)
	}
	name := "projects/p/databases/(default)/documents/bench/d00001/sub/x"
	if n := testing.AllocsPerRun(100, func() {
		if _, _, err := ParseDocumentName(name); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ParseDocumentName allocates %v times, want 0", n)
	}
}
