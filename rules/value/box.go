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
	listTab      = itabOf(List(nil))
	intTab       = itabOf(Int(0))
	floatTab     = itabOf(Float(0))
	bytesTab     = itabOf(Bytes(""))
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

// BoxList returns *p as a Value without copying its header; *p and its
// elements must not change once the Value is used.
func BoxList(p *List) Value { return box(listTab, unsafe.Pointer(p)) }

// MakeList returns a list of n elements for the caller to fill and the
// list as a Value: one allocation for a short list instead of two (the
// elements, and the header boxed into the Value). The caller fills the
// list before using the Value and never changes it after.
func MakeList(n int) (List, Value) {
	switch {
	case n <= 1:
		b := &struct {
			l List
			a [1]Value
		}{}
		b.l = b.a[:n:n]
		return b.l, BoxList(&b.l)
	case n <= 4:
		b := &struct {
			l List
			a [4]Value
		}{}
		b.l = b.a[:n:n]
		return b.l, BoxList(&b.l)
	case n <= 8:
		b := &struct {
			l List
			a [8]Value
		}{}
		b.l = b.a[:n:n]
		return b.l, BoxList(&b.l)
	}
	l := make(List, n)
	return l, l
}

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

// BoxInt returns *p as a Value without copying it; *p must not change
// afterwards.
func BoxInt(p *Int) Value { return box(intTab, unsafe.Pointer(p)) }

// BoxFloat returns *p as a Value without copying it; *p must not change
// afterwards.
func BoxFloat(p *Float) Value { return box(floatTab, unsafe.Pointer(p)) }

// BoxBytes returns *p as a Value without copying it; *p must not change
// afterwards.
func BoxBytes(p *Bytes) Value { return box(bytesTab, unsafe.Pointer(p)) }

// MakeStringList is MakeList for a list of n strings, with the strings'
// storage: the caller fills strs, then sets each list element to
// BoxString(&strs[i]) (and changes neither after). A short list is one
// allocation instead of two.
func MakeStringList(n int) (strs []String, list List, v Value) {
	if n <= 4 {
		b := &struct {
			l List
			a [4]Value
			s [4]String
		}{}
		b.l = b.a[:n:n]
		return b.s[:n:n], b.l, BoxList(&b.l)
	}
	l := make(List, n)
	return make([]String, n), l, l
}
