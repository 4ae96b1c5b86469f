package capture

// spanList is the file's event lines, oldest first, each its offset and
// length packed in one word: 8 bytes an event rather than 16. At the
// 200,000 events a file holds before it is rewritten (2×MaxEvents), the
// list was 3 MB live, and twice that while a rewrite built the next one.
// The rare line the packing cannot say (an offset past 1 TiB, a line of
// 16 MiB or more) is kept whole in long, by its index.
type spanList struct {
	packed []uint64
	long   map[int][2]int64
}

const (
	spanLenBits = 24
	spanLenMax  = 1<<spanLenBits - 1 // the marker of a long span
	spanOffMax  = 1<<(64-spanLenBits) - 1
)

// add appends the line at off, n bytes long.
func (l *spanList) add(off, n int64) {
	if off < 0 || off > spanOffMax || n < 0 || n >= spanLenMax {
		if l.long == nil {
			l.long = map[int][2]int64{}
		}
		l.long[len(l.packed)] = [2]int64{off, n}
		l.packed = append(l.packed, spanLenMax)
		return
	}
	l.packed = append(l.packed, uint64(off)<<spanLenBits|uint64(n))
}

// at returns the offset and length of line i.
func (l *spanList) at(i int) (off, n int64) {
	p := l.packed[i]
	if p&spanLenMax == spanLenMax {
		s := l.long[i]
		return s[0], s[1]
	}
	return int64(p >> spanLenBits), int64(p & spanLenMax)
}

// len is the number of lines.
func (l *spanList) len() int { return len(l.packed) }

// extend appends the lines of m.
func (l *spanList) extend(m *spanList) {
	base := len(l.packed)
	l.packed = append(l.packed, m.packed...)
	for i, s := range m.long {
		if l.long == nil {
			l.long = map[int][2]int64{}
		}
		l.long[base+i] = s
	}
}
