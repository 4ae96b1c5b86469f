package fsvalue

import (
	"strings"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// FieldPath is a path to a field inside a document, one element per map
// key: a.b.`c.d` is FieldPath{"a", "b", "c.d"}.
type FieldPath []string

// NameField is the field path of the document name, usable in filters,
// orderBy and cursors.
const NameField = "__name__"

// ParseFieldPath parses production's field path syntax: segments separated
// by dots, each either an identifier ([a-zA-Z_][a-zA-Z_0-9]*) or a
// backquoted string in which \` and \\ (any backslash escape) stand for the
// escaped character. The error names the path exactly as production does.
func ParseFieldPath(s string) (FieldPath, error) {
	bad := func() error {
		return Errorf(ErrInvalidArgument, "Invalid property path %q. Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)", s)
	}
	if s == "" || !utf8.ValidString(s) {
		return nil, bad()
	}
	var fp FieldPath
	i := 0
	for {
		if i >= len(s) {
			return nil, bad()
		}
		if s[i] == '`' {
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' {
					if i+1 >= len(s) {
						return nil, bad()
					}
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if c == '`' {
					closed = true
					i++
					break
				}
				b.WriteByte(c)
				i++
			}
			if !closed || b.Len() == 0 {
				return nil, bad()
			}
			fp = append(fp, b.String())
		} else {
			j := i
			for j < len(s) && s[j] != '.' {
				j++
			}
			seg := s[i:j]
			if !isIdent(seg) {
				return nil, bad()
			}
			fp = append(fp, seg)
			i = j
		}
		if i == len(s) {
			break
		}
		if s[i] != '.' {
			return nil, bad()
		}
		i++
	}
	return fp, nil
}

// MustFieldPath parses s and panics on error; for constants in tests.
func MustFieldPath(s string) FieldPath {
	fp, err := ParseFieldPath(s)
	if err != nil {
		panic(err)
	}
	return fp
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// String returns the canonical form: identifiers bare, other segments
// backquoted with ` and \ escaped.
func (fp FieldPath) String() string {
	var b strings.Builder
	for i, s := range fp {
		if i > 0 {
			b.WriteByte('.')
		}
		if isIdent(s) {
			b.WriteString(s)
			continue
		}
		b.WriteByte('`')
		for j := 0; j < len(s); j++ {
			if s[j] == '`' || s[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[j])
		}
		b.WriteByte('`')
	}
	return b.String()
}

// IsName reports whether fp is __name__.
func (fp FieldPath) IsName() bool { return len(fp) == 1 && fp[0] == NameField }

// HasPrefix reports whether p is a prefix of fp (or equal to it).
func (fp FieldPath) HasPrefix(p FieldPath) bool {
	if len(p) > len(fp) {
		return false
	}
	for i := range p {
		if fp[i] != p[i] {
			return false
		}
	}
	return true
}

// Equal reports whether two paths are identical.
func (fp FieldPath) Equal(o FieldPath) bool { return len(fp) == len(o) && fp.HasPrefix(o) }

// GetField returns the value at fp in fields, or nil if absent. Paths pass
// only through maps (not vectors' internals, not arrays).
func GetField(fields map[string]*pb.Value, fp FieldPath) *pb.Value {
	var cur *pb.Value
	for i, seg := range fp {
		if i > 0 {
			m, ok := cur.GetValueType().(*pb.Value_MapValue)
			if !ok {
				return nil
			}
			fields = m.MapValue.GetFields()
		}
		v, ok := fields[seg]
		if !ok {
			return nil
		}
		cur = v
	}
	return cur
}

// SetField stores v at fp, creating (or replacing non-map values with)
// intermediate maps. fields must be owned by the caller.
func SetField(fields map[string]*pb.Value, fp FieldPath, v *pb.Value) {
	for _, seg := range fp[:len(fp)-1] {
		next, ok := fields[seg]
		m, isMap := next.GetValueType().(*pb.Value_MapValue)
		if !ok || !isMap {
			nm := map[string]*pb.Value{}
			fields[seg] = Map(nm)
			fields = nm
			continue
		}
		if m.MapValue.Fields == nil {
			m.MapValue.Fields = map[string]*pb.Value{}
		}
		fields = m.MapValue.Fields
	}
	fields[fp[len(fp)-1]] = v
}

// DeleteField removes the value at fp, if present.
func DeleteField(fields map[string]*pb.Value, fp FieldPath) {
	for _, seg := range fp[:len(fp)-1] {
		m, ok := fields[seg].GetValueType().(*pb.Value_MapValue)
		if !ok {
			return
		}
		fields = m.MapValue.GetFields()
	}
	delete(fields, fp[len(fp)-1])
}
