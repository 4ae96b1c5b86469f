package capture

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/pyric/pyric/backend"
)

func TestSpanListRoundTrips(t *testing.T) {
	cases := [][2]int64{
		{0, 0}, {17, 1}, {1 << 30, 300}, {spanOffMax, spanLenMax - 1},
		{spanOffMax + 1, 5},    // offset past the packing
		{123, spanLenMax},      // line as long as the marker
		{456, 64 << 20},        // a 64 MiB line
		{1<<62 + 3, 1<<40 + 7}, // both
	}
	var a, b spanList
	for i, c := range cases {
		if i%2 == 0 {
			a.add(c[0], c[1])
		} else {
			b.add(c[0], c[1])
		}
	}
	// a holds the even cases, b the odd: a.extend(b) appends them after.
	a.extend(&b)
	want := append([][2]int64{}, cases[0], cases[2], cases[4], cases[6], cases[1], cases[3], cases[5], cases[7])
	if a.len() != len(want) {
		t.Fatalf("len %d, want %d", a.len(), len(want))
	}
	for i, w := range want {
		if off, n := a.at(i); off != w[0] || n != w[1] {
			t.Errorf("span %d = (%d, %d), want (%d, %d)", i, off, n, w[0], w[1])
		}
	}
	if len(a.long) != 4 {
		t.Errorf("%d long spans kept whole, want 4", len(a.long))
	}
	if s := unsafe.Sizeof(a.packed[0]); s != 8 {
		t.Errorf("a span takes %d bytes, want 8", s)
	}
}

// TestRecorderRetainsLittle bounds the heap a started recorder keeps on
// an empty store: its subscription's buffer dominated it (4096 events,
// 1.4 MB; 285–450 KiB now, so 900 KiB leaves room for a noisy heap and
// still fails the old buffer).
func TestRecorderRetainsLittle(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	path := filepath.Join(t.TempDir(), "last-session.json")
	before := heap()
	rec, err := Start(context.Background(), b.Sandbox, path, Options{Debounce: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	kept := int64(heap()) - int64(before)
	runtime.KeepAlive(rec)
	t.Logf("a started recorder retains %d KiB", kept>>10)
	if kept > 900<<10 {
		t.Errorf("a started recorder retains %d KiB, want at most 900 KiB", kept>>10)
	}
}
