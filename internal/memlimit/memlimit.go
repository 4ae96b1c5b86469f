// Package memlimit is the memory policy of a long-running pyric process:
// a soft memory limit for the Go runtime that follows the live heap, so
// that the process's resident memory stays near what it holds instead of
// what it once allocated.
//
// Without it a Go process keeps, by GOGC=100, up to twice its live heap,
// plus whatever a burst of garbage (a bulk load, a large scan) grew the
// heap to, returned to the system only slowly: after loading 100k small
// documents pyric serve held ~50 MB live but ~140 MB of anonymous memory.
// With it, after every collection the limit is set to the live heap plus
// a headroom of a quarter of it (at least MinHeadroom): the collector runs
// a little more often than GOGC alone asks (about every quarter of the live
// heap allocated instead of every live heap), and the runtime returns
// freed pages to the system as soon as the process is over the limit,
// instead of keeping them for a later peak. The limit is soft: it never
// fails an allocation, and since it moves up with the live heap after
// each collection it cannot trap the process in back-to-back collections
// (the runtime also caps the collector at half the CPU). Work that knows
// it needs short-lived memory beyond that headroom reserves it (Reserve).
//
// The limit, not GOGC, decides when small heaps are collected: GOGC's
// default (100) collects once the live heap's size has been allocated
// again, which for pyric serve's few megabytes live was a collection every
// few hundred writes and a tenth of its CPU per write (e2e/bench's set
// workload); GOGC is raised to GCPercent, a backstop, unless the user set
// it.
package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/pyric/pyric/internal/prefault"
)

// MinHeadroom is the least memory the limit allows above the live heap
// (and the runtime's other memory), so that small heaps are not collected
// constantly.
const MinHeadroom = 24 << 20

// GCPercent is the GOGC Start sets when the user set none: high enough
// that the limit's headroom (MinHeadroom at least) triggers collections of
// heaps beyond a few megabytes.
const GCPercent = 400

// Limit is the soft memory limit for a live heap of live bytes and other
// bytes of runtime memory besides the heap (stacks, collector metadata):
// live + other + max(live/4, MinHeadroom).
func Limit(live, other uint64) int64 {
	return int64(live + other + max(live/4, MinHeadroom))
}

// MaxReserved bounds the memory Reserve can add to the limit, all
// reservations together, so that the policy's promise (resident memory
// near the live data) holds whatever runs.
const MaxReserved = 96 << 20

var (
	start    sync.Once
	started  atomic.Bool
	reserved atomic.Int64
	apply    sync.Mutex // one update at a time: the finalizer's and Reserve's
	follow   *follower
)

// Reserve raises the limit by n bytes (within MaxReserved) until release
// is called: work known to need that much short-lived memory (a heavy
// request decoding a large body) gets it as headroom, so the collector
// runs at GOGC's pace for it instead of back to back at the limit — with
// a headroom of 24 MiB, a Firestore create of a 100,000-element list (81
// MB allocated) made the collector run about four times, each cycle
// marking the whole live heap on the processors light requests needed.
// Without the policy (Start not called or declined) it does nothing.
func Reserve(n int64) (release func()) {
	if n <= 0 {
		return func() {}
	}
	reserved.Add(n)
	reapply()
	var once sync.Once
	return func() {
		once.Do(func() {
			reserved.Add(-n)
			reapply()
		})
	}
}

// Reserved is the memory reserved now (before the MaxReserved cap).
func Reserved() int64 { return reserved.Load() }

func reapply() {
	if started.Load() {
		follow.update()
	}
}

// Start applies the policy to this process for as long as it runs; it does
// nothing when the user set a limit (GOMEMLIMIT) or turned the collector
// off (GOGC=off), whose choice wins, and keeps a GOGC the user set. It
// returns whether it applied.
func Start() bool {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") == "off" {
		return false
	}
	start.Do(func() {
		f := &follower{samples: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
			{Name: "/memory/classes/heap/free:bytes"},
			{Name: "/memory/classes/heap/released:bytes"},
		}}
		follow = f
		started.Store(true)
		f.update()
		f.armPrefault()
		f.arm()
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(GCPercent)
		}
	})
	return true
}

// follower moves the limit after each collection: a sentinel object's
// finalizer runs once per cycle (the sentinel becomes unreachable, the
// finalizer re-arms it for the next one).
type follower struct {
	samples []metrics.Sample
}

type sentinel struct{ _ *byte } // with a pointer: never tiny-allocated, so its finalizer runs

func (f *follower) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		f.update()
		if prefaultState.CompareAndSwap(prefaultDue, prefaultRunning) {
			go prefaultHeadroom()
		}
		f.arm()
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(GCPercent)
		}
	})
}

// update sets the limit from the live heap the last collection measured,
// plus the reserved memory.
func (f *follower) update() {
	apply.Lock()
	defer apply.Unlock()
	metrics.Read(f.samples)
	v := func(i int) uint64 {
		if f.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return f.samples[i].Value.Uint64()
	}
	live, total := v(0), v(1)
	heap := v(2) + v(3) + v(4) + v(5)
	other := uint64(0)
	if total > heap {
		other = total - heap
	}
	debug.SetMemoryLimit(Limit(live, other) + min(reserved.Load(), MaxReserved))
}

// Budget counts the bytes requests in flight hold against a capacity
// (Max), so that concurrent large requests cannot together hold more
// than it: a request takes its bytes before it holds them and gives them
// back when it lets them go.
type Budget struct {
	Max int64

	mu   sync.Mutex
	used int64
}

// Take reserves n bytes; false, reserving nothing, when that would pass
// Max.
func (b *Budget) Take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.Max {
		return false
	}
	b.used += n
	return true
}

// Give returns n bytes Take reserved.
func (b *Budget) Give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// Used is the bytes reserved now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// The heap's headroom is faulted in at once rather than page by page: a
// fresh process's heap grows into the headroom as requests allocate, a
// page fault per 4 KiB the first time, and on a virtual machine a fault
// costs ~13 µs of CPU where mapping the same pages with one madvise
// (internal/prefault) costs ~1 µs a page — a fresh pyric serve paid ~1.6
// faults, ~20 µs, per Auth sign-in of ~9 KB until its heap had reached
// its size (server/auth's TestHTTPPortCost, flt/op). It happens only once
// the process allocates: the first collection after Start is brought
// forward to prefaultTrigger bytes past the memory in use then, and after
// it prefaultHeadroom maps a block of most of the headroom, lets it go and
// collects (the heap is small yet: a few milliseconds): its pages,
// resident, take the small objects allocated after. An idle process maps
// nothing.

// prefaultState is where the headroom's mapping is: prefaultIdle (not
// armed, or done), prefaultDue (at the next collection), prefaultRunning.
var prefaultState atomic.Int32

const (
	prefaultIdle int32 = iota
	prefaultDue
	prefaultRunning
)

// prefaultTrigger is how much a process allocates after Start before its
// headroom is mapped.
const prefaultTrigger = 4 << 20

// prefaultBytes is the block prefaultHeadroom maps: the headroom but the
// trigger's room, so that the collection that frees it comes soon after.
const prefaultBytes = MinHeadroom - prefaultTrigger

// armPrefault brings the first collection forward to prefaultTrigger
// bytes past the memory in use now, after which the follower's finalizer
// maps the headroom; when the limit is that close already (a heap of
// garbage from the start), it is left to collect first.
func (f *follower) armPrefault() {
	apply.Lock()
	defer apply.Unlock()
	metrics.Read(f.samples)
	total, released := f.samples[1].Value.Uint64(), f.samples[5].Value.Uint64()
	inUse := int64(total - min(released, total))
	if debug.SetMemoryLimit(-1) > inUse+prefaultTrigger {
		prefaultState.Store(prefaultDue)
		debug.SetMemoryLimit(inUse + prefaultTrigger)
	}
}

// prefaultHeadroom allocates prefaultBytes as one block, maps its pages
// and lets it go, collecting at once: a block left to the next
// collection was still held when its own allocation set that collection
// off, and the heap grew past it into fresh pages until the one after.
func prefaultHeadroom() {
	block := make([]byte, prefaultBytes)
	prefault.Slice(block)
	runtime.KeepAlive(block)
	block = nil
	runtime.GC()
	prefaultState.Store(prefaultIdle)
}
