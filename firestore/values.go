package firestore

import (
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsvalue"
)

// The data model lives in fsvalue, the base package the engine's layers
// share; these re-exports keep it reachable as firestore.X for callers of
// the engine.

// DefaultDatabase is the id of the database most clients use.
const DefaultDatabase = fsvalue.DefaultDatabase

// MaxIDBytes is production's limit on one collection or document id.
const MaxIDBytes = fsvalue.MaxIDBytes

// NameField is the field path of the document name, usable in filters,
// orderBy and cursors.
const NameField = fsvalue.NameField

// DatabaseName identifies one database: projects/{Project}/databases/{Database}.
type DatabaseName = fsvalue.DatabaseName

// FieldPath is a path to a field inside a document, one element per map key.
type FieldPath = fsvalue.FieldPath

// ParseDatabaseName parses projects/P/databases/D.
func ParseDatabaseName(s string) (DatabaseName, error) { return fsvalue.ParseDatabaseName(s) }

// ParseDocumentName parses a full document name and validates its path.
func ParseDocumentName(name string) (DatabaseName, string, error) {
	return fsvalue.ParseDocumentName(name)
}

// ParseParentName parses a query or list parent: a documents root or a
// document name.
func ParseParentName(name string) (DatabaseName, string, error) {
	return fsvalue.ParseParentName(name)
}

// ValidateDocumentPath checks a relative document path.
func ValidateDocumentPath(rel string) error { return fsvalue.ValidateDocumentPath(rel) }

// ValidateCollectionPath checks a relative collection path.
func ValidateCollectionPath(rel string) error { return fsvalue.ValidateCollectionPath(rel) }

// ValidateCollectionID checks one collection id.
func ValidateCollectionID(id string) error { return fsvalue.ValidateCollectionID(id) }

// ParseFieldPath parses production's field path syntax.
func ParseFieldPath(s string) (FieldPath, error) { return fsvalue.ParseFieldPath(s) }

// maxPathElements is production's limit on the segments of a field path a
// request names in a mask, a filter, an order or an aggregation (not in a
// transform, which the official emulator accepts deeper).
const maxPathElements = 20

// parseRequestPath parses a field path of a mask, filter, order or
// aggregation, rejecting one deeper than production allows in its words.
func parseRequestPath(s string) (FieldPath, error) {
	fp, err := ParseFieldPath(s)
	if err != nil {
		return nil, err
	}
	if len(fp) > maxPathElements {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "paths must have at most %d elements (field path %s has %d)", maxPathElements, s, len(fp))
	}
	return fp, nil
}

// checkMask checks every path of a read mask before anything is read.
func checkMask(m *pb.DocumentMask) error {
	for _, s := range m.GetFieldPaths() {
		if _, err := parseRequestPath(s); err != nil {
			return err
		}
	}
	return nil
}

// MustFieldPath is ParseFieldPath for constants; it panics on a bad path.
func MustFieldPath(s string) FieldPath { return fsvalue.MustFieldPath(s) }

// Compare orders two values as Firestore orders them (see fsvalue.Compare).
func Compare(a, b *pb.Value) int { return fsvalue.Compare(a, b) }

// Equal reports whether two values are equal as Firestore compares them.
func Equal(a, b *pb.Value) bool { return fsvalue.Equal(a, b) }

// Null returns the null value.
func Null() *pb.Value { return fsvalue.Null() }

// Int returns an integer value.
func Int(i int64) *pb.Value { return fsvalue.Int(i) }

// Double returns a double value.
func Double(f float64) *pb.Value { return fsvalue.Double(f) }

// String returns a string value.
func String(s string) *pb.Value { return fsvalue.String(s) }

// Bool returns a boolean value.
func Bool(b bool) *pb.Value { return fsvalue.Bool(b) }

// Array returns an array value of vs.
func Array(vs ...*pb.Value) *pb.Value { return fsvalue.Array(vs...) }

// Map returns a map value of fields.
func Map(fields map[string]*pb.Value) *pb.Value { return fsvalue.Map(fields) }

// Vector returns a vector value of xs.
func Vector(xs ...float64) *pb.Value { return fsvalue.Vector(xs...) }
