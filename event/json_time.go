package event

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// secondForm is the RFC 3339 text of one second in one location, the
// part of a time's encoding its nanoseconds do not change: its date and
// clock ("2006-01-02T15:04:05") and its zone ("Z" or "-07:00"), or that
// encoding/json cannot write it exactly (ok false).
type secondForm struct {
	sec  int64
	loc  *time.Location
	ok   bool
	text [19]byte
	zone string
}

// secondForms keeps the forms of the last seconds written, a slot for
// each second and location (by both): the events of a second, and the
// times they carry (request times, what the rules saw), are in one or
// two, and working out a time's date, clock and zone (t.Year, t.Zone,
// AppendFormat's own) was a quarter of what encoding a Firestore write's
// events cost. Slots chosen by the location alone made an event that
// carries an older time too (a document's create time, written before
// this second) work out both seconds again at every event, each time two
// allocations. A second's form is immutable once published; another
// second of the same slot replaces it.
var secondForms [16]atomic.Pointer[secondForm]

// secondSlot is the slot of sec in loc: consecutive seconds take
// different slots.
func secondSlot(sec int64, loc *time.Location) *atomic.Pointer[secondForm] {
	h := uint64(sec) ^ uint64(uintptr(unsafe.Pointer(loc))>>4)
	return &secondForms[h%uint64(len(secondForms))]
}

// appendTime appends t as t.AppendFormat(dst, time.RFC3339Nano) does,
// ok false (nothing appended) when encoding/json would not write it so
// (a year outside 0–9999, an offset RFC 3339 cannot say exactly).
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	sec, loc := t.Unix(), t.Location()
	slot := secondSlot(sec, loc)
	f := slot.Load()
	if f == nil || f.sec != sec || f.loc != loc {
		f = formOfSecond(t, sec, loc)
		slot.Store(f)
	}
	if !f.ok {
		return dst, false
	}
	dst = append(dst, f.text[:]...)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(frac)
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, frac[:n]...)
	}
	return append(dst, f.zone...), true
}

// formOfSecond works out the form of t's second in loc.
func formOfSecond(t time.Time, sec int64, loc *time.Location) *secondForm {
	f := &secondForm{sec: sec, loc: loc}
	if y := t.Year(); y < 0 || y > 9999 {
		return f
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return f // offsets RFC 3339 cannot write exactly: encoding/json decides
	}
	whole := time.Unix(sec, 0).In(loc)
	copy(f.text[:], whole.AppendFormat(make([]byte, 0, 32), "2006-01-02T15:04:05"))
	f.zone = string(whole.AppendFormat(nil, "Z07:00"))
	f.ok = true
	return f
}
