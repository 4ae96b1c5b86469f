package authserver

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/pyric/pyric/internal/jsonstr"
)

// shapeKind is what the validator requires of a JSON value for a Go
// type.
type shapeKind uint8

const (
	// kindGeneric values (any, maps, kinds no request uses) are parsed
	// into a tree and go through check and assign, which define the
	// rules for them.
	kindGeneric shapeKind = iota
	kindString
	kindBool
	kindInt
	kindFloat
	kindSlice
	kindStruct
)

// shape is the table DecodeBody decodes a Go type by, built once per type
// from its reflection (shapeOf): what JSON each field accepts and where it
// goes.
type shape struct {
	kind shapeKind
	elem *shape // a slice's elements
	// fields are a struct's fields by JSON name (exported, not embedded,
	// tagged), as check finds them.
	fields map[string]field
}

type field struct {
	name  string // its JSON name
	index int
	typ   reflect.Type // as declared, pointers included
	shape *shape
}

var shapes sync.Map // reflect.Type -> *shape

// shapeOf returns t's shape.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

// buildShape builds t's shape; seen holds the structs under construction,
// so that a recursive type refers to itself.
func buildShape(t reflect.Type, seen map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s := seen[t]; s != nil {
		return s
	}
	if t == anyType {
		return &shape{kind: kindGeneric}
	}
	switch t.Kind() {
	case reflect.String:
		return &shape{kind: kindString}
	case reflect.Bool:
		return &shape{kind: kindBool}
	case reflect.Int, reflect.Int64:
		return &shape{kind: kindInt}
	case reflect.Float64:
		return &shape{kind: kindFloat}
	case reflect.Slice:
		if e := buildShape(t.Elem(), seen); e.kind != kindGeneric {
			return &shape{kind: kindSlice, elem: e}
		}
	case reflect.Struct:
		s := &shape{kind: kindStruct, fields: map[string]field{}}
		seen[t] = s
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if n, ok := jsonName(f); ok {
				s.fields[n] = field{name: n, index: i, typ: f.Type, shape: buildShape(f.Type, seen)}
			}
		}
		return s
	}
	return &shape{kind: kindGeneric}
}

// jvalue is one member's value: the JSON text of it, or a form field's
// string.
type jvalue struct {
	raw  []byte
	str  string
	form bool
}

// member is one member of a JSON object (its key in camelCase) or a form
// field.
type member struct {
	key string
	val jvalue
}

// pathSeg is the last segment of a value's JSON pointer: a key or an
// index. The pointer is written only for an error.
type pathSeg struct {
	key   string
	index int // when key is ""
}

func (s pathSeg) join(parent string) string {
	if s.key != "" {
		return parent + "/" + s.key
	}
	return parent + "/" + strconv.Itoa(s.index)
}

// decoder is one DecodeBody's state.
type decoder struct {
	top bool // the next object decoded is the body (its unknown members are kept)
	// keep, when set, is the one unknown member of the body kept.
	keep string
	// unassignable says a value passed the checks but its field cannot
	// hold it (a number beyond float64), which assign refuses.
	unassignable bool
	extra        map[string]any
}

// members decodes an object's members into v (a struct, behind pointers),
// and returns the type error of the least key, as check reports it.
func (d *decoder) members(ms []member, sh *shape, v reflect.Value, path string) error {
	top := d.top
	d.top = false
	v = settle(v)
	var err error
	var errKey string
	for _, m := range ms {
		f, ok := sh.fields[m.key]
		if !ok {
			if top && (d.keep == "" || d.keep == m.key) {
				if d.extra == nil {
					d.extra = map[string]any{}
				}
				d.extra[m.key] = camelKeys(m.val.generic())
			}
			continue
		}
		if err != nil && m.key > errKey {
			continue // a later error cannot be the one reported
		}
		if e := d.value(m.val, f.typ, f.shape, v.Field(f.index), path, pathSeg{key: m.key}, m.key); e != nil {
			err, errKey = e, m.key
		}
	}
	return err
}

// settle allocates the pointers on the way to a value and returns it.
func settle(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v
}

// value checks x against sh (the shape of t, the type of v) and stores it
// in v. name is the field's JSON name, which says whether it is an enum.
func (d *decoder) value(x jvalue, t reflect.Type, sh *shape, v reflect.Value, parent string, seg pathSeg, name string) error {
	if sh.kind == kindGeneric {
		c, err := check(camelKeys(x.generic()), t, seg.join(parent), name)
		if err != nil {
			return err
		}
		if assign(v, c) != nil {
			d.unassignable = true
		}
		return nil
	}
	var c byte // the value's first byte: its JSON type; 0 for a form string
	if !x.form {
		c = x.raw[0]
	}
	switch sh.kind {
	case kindString:
		allowed, isEnum := enums[name]
		var s string
		switch {
		case x.form:
			s = x.str
		case c == '"':
			s = jsonstr.Unquote(x.raw)
		case c == '-' || c >= '0' && c <= '9':
			s = string(x.raw)
			if isEnum {
				i, err := strconv.Atoi(s)
				if err != nil || i < 0 || i >= len(allowed) {
					return invalid(seg.join(parent), "must be equal to one of the allowed values")
				}
				settle(v).SetString(allowed[i])
				return nil
			}
			settle(v).SetString(s)
			return nil
		case isEnum && c != 'n':
			return invalid(seg.join(parent), "must be equal to one of the allowed values")
		default:
			return invalid(seg.join(parent), "must be string")
		}
		if isEnum && !slices.Contains(allowed, s) {
			return invalid(seg.join(parent), "must be equal to one of the allowed values")
		}
		settle(v).SetString(s)
	case kindBool:
		if c != 't' && c != 'f' {
			return invalid(seg.join(parent), "must be boolean")
		}
		settle(v).SetBool(c == 't')
	case kindInt, kindFloat:
		if c != '-' && (c < '0' || c > '9') {
			return invalid(seg.join(parent), "must be number")
		}
		f, err := strconv.ParseFloat(string(x.raw), 64) // what json.Number.Float64 does
		if err != nil {
			d.unassignable = true
			return nil
		}
		if sh.kind == kindInt {
			settle(v).SetInt(int64(f))
		} else {
			settle(v).SetFloat(f)
		}
	case kindSlice:
		switch c {
		case 'n':
			// Production (proto3 JSON) reads a null list as empty; admin-go
			// clears second factors with "mfa":{"enrollments":null}.
			return nil
		case '[':
		default:
			return invalid(seg.join(parent), "must be array")
		}
		var small [8]jvalue
		elems := arrayElements(x.raw, small[:0])
		st := t
		for st.Kind() == reflect.Pointer {
			st = st.Elem()
		}
		if len(elems) > 0 && v.Kind() == reflect.Slice && v.IsNil() {
			// The list the field holds, grown in place: MakeSlice's would
			// allocate its header too (the Admin SDK's lookup by localId
			// decodes one on every verifyIdToken).
			return d.elements(elems, st, sh, v, seg.join(parent), name)
		}
		out := reflect.MakeSlice(st, len(elems), len(elems))
		var path string
		if len(elems) > 0 {
			path = seg.join(parent)
		}
		for i, e := range elems {
			if err := d.value(e, st.Elem(), sh.elem, out.Index(i), path, pathSeg{index: i}, name); err != nil {
				return err
			}
		}
		settle(v).Set(out)
	case kindStruct:
		if c != '{' {
			return invalid(seg.join(parent), "must be object")
		}
		var small [8]member
		return d.members(objectMembers(x.raw, 0, sh, small[:0]), sh, v, seg.join(parent))
	}
	return nil
}

// elements decodes a list's elements into v, a nil slice (not behind a
// pointer), grown to hold them.
func (d *decoder) elements(elems []jvalue, st reflect.Type, sh *shape, v reflect.Value, path, name string) error {
	v.Grow(len(elems))
	v.SetLen(len(elems))
	for i, e := range elems {
		if err := d.value(e, st.Elem(), sh.elem, v.Index(i), path, pathSeg{index: i}, name); err != nil {
			return err
		}
	}
	return nil
}

// generic is the value as decodeJSON's tree holds it (numbers as
// json.Number).
func (x jvalue) generic() any {
	if x.form {
		return x.str
	}
	return jsonstr.Value(x.raw) // valid JSON: the body was checked
}

// objectMembers appends the members of the valid JSON object at b[i] to
// ms, keys in camelCase; of members with the same key, the last is kept,
// as a decode into a map keeps it. sh is the shape the object is decoded
// by (nil for none): the keys it declares are its names, not copies.
func objectMembers(b []byte, i int, sh *shape, ms []member) []member {
	jsonstr.Members(b, i, func(key, value []byte) {
		k := memberKey(sh, key)
		if j := slices.IndexFunc(ms, func(m member) bool { return m.key == k }); j >= 0 {
			ms = slices.Delete(ms, j, j+1)
		}
		ms = append(ms, member{key: k, val: jvalue{raw: value}})
	})
	return ms
}

// memberKey is camel(jsonstr.Unquote(key)) for a member's quoted key:
// when that is a field of sh, the field's name, or one of
// undeclaredKeys, that key (no string to allocate; a snake_case key is
// put in camelCase on the stack to look it up).
func memberKey(sh *shape, key []byte) string {
	var buf [64]byte
	if k, ok := camelASCII(buf[:0], key[1:len(key)-1]); ok {
		if sh != nil && sh.fields != nil {
			if f, ok := sh.fields[string(k)]; ok {
				return f.name
			}
		}
		if u, ok := undeclaredKeys[string(k)]; ok {
			return u
		}
	}
	return camel(jsonstr.Unquote(key))
}

// undeclaredKeys are members the client SDKs send with requests whose
// struct does not declare them: every sign-in with a password and
// refresh of the web, Node and Admin SDKs carries returnSecureToken.
var undeclaredKeys = map[string]string{"returnSecureToken": "returnSecureToken"}

// camelASCII appends camel(k) to dst for a key of ASCII bytes without
// escapes; ok is false for any other key (camel and Unquote then decide).
func camelASCII(dst, k []byte) ([]byte, bool) {
	sep := bytes.ContainsAny(k, "_-") // camel returns a key without as it is
	upper := false                    // as camel's
	for _, c := range k {
		switch {
		case c >= utf8.RuneSelf || c == '\\':
			return nil, false
		case !sep:
		case c == '_' || c == '-':
			upper = len(dst) > 0
			continue
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		upper = false
		dst = append(dst, c)
	}
	return dst, true
}

// arrayElements appends the elements of the valid JSON array raw to es.
func arrayElements(raw []byte, es []jvalue) []jvalue {
	jsonstr.Elements(raw, 0, func(value []byte) { es = append(es, jvalue{raw: value}) })
	return es
}
