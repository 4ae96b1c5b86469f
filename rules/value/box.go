package value

import "unsafe"

// Boxing a string, timestamp or path into a Value copies it to a new heap
// object. The functions here box values that already live in memory the
// caller never changes again (a record's fields, a slice made for the
// purpose) by pointing the Value at them: a decision boxes many strings
// (map keys for keys(), a record's uid) and each copy was an allocation.

// iface is the layout of a non-empty interface value.
type iface struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

func itabOf(v Value) unsafe.Pointer { return (*iface)(unsafe.Pointer(&v)).tab }

var (
	stringTab    = itabOf(String(""))
	timestampTab = itabOf(Timestamp{})
	pathTab      = itabOf(Path{})
)

func box(tab, p unsafe.Pointer) Value {
	var v Value
	(*iface)(unsafe.Pointer(&v)).tab = tab
	(*iface)(unsafe.Pointer(&v)).data = p
	return v
}

// BoxString returns *p as a Value without copying it; *p must not change
// afterwards.
func BoxString(p *String) Value { return box(stringTab, unsafe.Pointer(p)) }

// BoxTimestamp returns *p as a Value without copying it; *p must not
// change afterwards.
func BoxTimestamp(p *Timestamp) Value { return box(timestampTab, unsafe.Pointer(p)) }

// BoxPath returns *p as a Value without copying it; *p must not change
// afterwards.
func BoxPath(p *Path) Value { return box(pathTab, unsafe.Pointer(p)) }

// Strings returns ss as a List in two allocations (the list and one array
// of the strings' headers) instead of one per element.
func Strings(ss []string) List {
	strs := make([]String, len(ss))
	out := make(List, len(ss))
	for i, s := range ss {
		strs[i] = String(s)
		out[i] = BoxString(&strs[i])
	}
	return out
}
