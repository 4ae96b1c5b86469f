package value

// Record is a map value whose entries are resolved on access instead of
// being held in a Go map: the per-request objects a service binds
// (request, request.auth, request.resource, a get() result) are read a few
// fields at a time, and building a map for each request dominated the cost
// of a decision. Its Type is TMap and it behaves as the Map its Map method
// returns; operations that need every entry (keys(), ==, rendering) use
// that map, which a Record builds once and keeps.
type Record interface {
	Value
	// Field returns the entry named name, false when there is none.
	Field(name string) (Value, bool)
	// Map returns the record as a Map; repeated calls return the same map.
	Map() Map
}

// AsMap returns v as a Map: a Map itself, or a Record's map.
func AsMap(v Value) (Map, bool) {
	switch x := v.(type) {
	case Map:
		return x, true
	case Record:
		return x.Map(), true
	}
	return nil, false
}

// Plain returns v with a Record replaced by its Map, for code that
// switches on the concrete types; other values are returned unchanged.
func Plain(v Value) Value {
	switch v.(type) {
	case Bool, Int, Float, String, Null, Map, List, Path, Timestamp, *Error:
		// The common concrete values, told apart without asking whether
		// v implements Record (a runtime interface check).
		return v
	}
	if r, ok := v.(Record); ok {
		return r.Map()
	}
	return v
}

// FieldsMap is the Map of a record whose entries are the present ones of
// names, read with field (the record's Field method) and made plain: how
// a record's Map is built from its Field. size is a capacity hint.
func FieldsMap(field func(name string) (Value, bool), size int, names ...string) Map {
	m := make(Map, size)
	for _, k := range names {
		if v, ok := field(k); ok {
			m[k] = Plain(v)
		}
	}
	return m
}

// Field returns the entry name of a map or record.
func Field(v Value, name string) (Value, bool) {
	switch x := v.(type) {
	case Map:
		e, ok := x[name]
		return e, ok
	case Record:
		return x.Field(name)
	}
	return nil, false
}
