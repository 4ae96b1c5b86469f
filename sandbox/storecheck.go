package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
)

// checkStoreFile verifies a data file before bbolt opens it, so that a
// damaged file (truncated, or garbage over some of its pages) is refused
// with a message naming the file and what to do, instead of crashing the
// process inside bbolt (which panics or faults on such pages) or, for an
// empty file, silently starting over it. It only reads: the file is never
// changed. A missing file is fine (a new store is created).
//
// The check follows bbolt's own file format: two meta pages (magic,
// version, FNV-64a checksum) of which bbolt uses the valid one with the
// higher transaction id; that meta's high-water mark must fit in the file;
// and every page reachable from its root bucket (branch and leaf pages,
// nested and inline buckets) and its freelist must lie inside the file,
// carry its own id and a page type, and hold its elements within its
// bounds.
//
// What the check counted comes back as checkedKeys (nil when it did not
// walk the file).
func checkStoreFile(path string) (*checkedKeys, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: open %s: %w", path, err)
	}
	defer f.Close()
	if busy := lockedElsewhere(f); busy {
		// Another process has the store open and may be writing it: what
		// this reads could be mid-commit. bbolt's own open reports it.
		return nil, nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("sandbox: stat %s: %w", path, err)
	}
	c := &storeCheck{f: f, size: st.Size()}
	// Reading the pages through a read-only mapping costs no system call
	// per page (bbolt maps the file too, so they stay in the page cache).
	if m, unmap := mapFile(f, st.Size()); m != nil {
		// Unmapped in the background: tearing down a mapping of every
		// page of the file takes milliseconds bbolt's open need not
		// wait for. Nothing the check returns points into it.
		defer func() { go unmap() }()
		c.f, c.mapped = bytes.NewReader(m), m
	}
	if problem := c.run(); problem != "" {
		return nil, &DamagedStoreError{Path: path, Problem: problem}
	}
	return &checkedKeys{txid: c.txid, byRoot: c.keys, splits: c.splits}, nil
}

// checkedKeys are the key counts of a checked file's buckets (those with
// a root page: an inline bucket has none), by root page id, as bbolt's
// Bucket.Stats().KeyN counts them, and the transaction they are of: a
// load sizes its entries from them instead of walking each bucket's pages
// once more for Stats, while the file is still at that transaction
// (pages are reused by later ones).
type checkedKeys struct {
	txid   uint64
	byRoot map[uint64]int
	splits map[uint64]checkedSplit
}

// checkedSplit is where a bucket's keys divide in two near the middle, at
// a boundary of its root's children: the keys before key (the first
// child's key right of the boundary; the check proved that the keys of
// the children left of it are below it and the rest at or above it)
// number before. A load walks both halves at once from it.
type checkedSplit struct {
	key    []byte
	before int
}

// of returns the key count of the bucket whose root page is root in
// transaction txid, if the check counted it.
func (k *checkedKeys) of(txid int, root uint64) (int, bool) {
	if k == nil || root == 0 || txid < 0 || uint64(txid) != k.txid {
		return 0, false
	}
	n, ok := k.byRoot[root]
	return n, ok
}

// splitOf returns the split of the bucket whose root page is root in
// transaction txid, if the check found one (its root is a branch page).
func (k *checkedKeys) splitOf(txid int, root uint64) (checkedSplit, bool) {
	if _, ok := k.of(txid, root); !ok {
		return checkedSplit{}, false
	}
	sp, ok := k.splits[root]
	return sp, ok
}

// DamagedStoreError reports a data file that cannot be opened safely.
type DamagedStoreError struct {
	Path    string
	Problem string
	// Advice says what to do; empty: restore the file or move it aside
	// to start with an empty store.
	Advice string
}

func (e *DamagedStoreError) Error() string {
	advice := e.Advice
	if advice == "" {
		advice = fmt.Sprintf("Restore it from a backup, or move it aside (mv %s %s.damaged) to start with an empty store.", e.Path, e.Path)
	}
	return fmt.Sprintf("sandbox: the data file %s is damaged: %s. Pyric has not opened or changed it. %s", e.Path, e.Problem, advice)
}

// bbolt's on-disk layout (go.etcd.io/bbolt internal/common), little endian.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	branchElemSize   = 16 // pos u32, ksize u32, pgid u64
	leafElemSize     = 16 // flags u32, pos u32, ksize u32, vsize u32
	bucketHeaderSize = 16 // root pgid u64, sequence u64
	metaChecksumAt   = 56 // offset of the checksum within the meta
	branchPage       = 0x01
	leafPage         = 0x02
	metaPage         = 0x04
	freelistPage     = 0x10
	bucketLeafFlag   = 0x01
	noFreelist       = ^uint64(0)
	maxTreeDepth     = 64
)

type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64 // high-water mark: pages [0, pgid) exist
	txid     uint64
}

type storeCheck struct {
	f       io.ReaderAt
	mapped  []byte // the file's read-only mapping, when there is one
	size    int64
	ps      int64
	hwm     uint64
	visited pageSet
	free    []byte // the freelist's page ids (8 bytes each), checked after the tree
	txid    uint64 // the meta's transaction
	// keys counts the keys of each bucket with a root page, by that page
	// (see checkedKeys).
	keys map[uint64]int
	// splits are the splits of buckets whose root is a branch page, by
	// that page; bucketRoot is the root page of the bucket whose tree the
	// walk enters next (0 when none).
	splits     map[uint64]checkedSplit
	bucketRoot uint64
	// serial: check every page in turn, halves never at once.
	serial bool
}

// run returns what is wrong with the file, or "". A big bucket's two
// halves are checked at once (see halves); when either finds a problem,
// the file is checked again one page at a time, so that the problem
// named is the one that walk meets first, as without the halves.
func (c *storeCheck) run() string {
	p := c.runOnce()
	if p == recheck {
		*c = storeCheck{f: c.f, mapped: c.mapped, size: c.size, serial: true}
		p = c.runOnce()
	}
	return p
}

// recheck is the problem of a walk whose halves found one (or a page in
// both): run walks the file again one page at a time.
const recheck = "\x00recheck"

// parallelChildren is the number of children from which a bucket's root
// branch page has its two halves checked at once (unless serial).
const parallelChildren = 8

func (c *storeCheck) runOnce() string {
	if c.size == 0 {
		return "it is empty (0 bytes), so it was truncated or never written; an empty store would silently replace its documents"
	}
	m, problem := c.meta()
	if problem != "" {
		return problem
	}
	c.ps, c.hwm, c.txid = int64(m.pageSize), m.pgid, m.txid
	if need := int64(m.pgid) * c.ps; need > c.size || need <= 0 {
		return fmt.Sprintf("it is %d bytes long but its last commit needs %d bytes (%d pages of %d), so it was truncated", c.size, int64(m.pgid)*c.ps, m.pgid, m.pageSize)
	}
	c.visited = make(pageSet, (m.pgid+63)/64)
	if m.freelist != noFreelist {
		if p := c.freelist(m.freelist); p != "" {
			return p
		}
	}
	var rootKeys int
	if p := c.tree(m.root, 0, "the root bucket", nil, nil, &rootKeys); p != "" {
		return p
	}
	return c.freePages()
}

// freePages checks the ids the freelist lists, once the tree is walked:
// bbolt hands a listed page out to the next write, so one the tree uses
// would be overwritten (silent loss), and one past the data is nonsense.
func (c *storeCheck) freePages() string {
	for at := 0; at+8 <= len(c.free); at += 8 {
		id := binary.LittleEndian.Uint64(c.free[at:])
		switch {
		case id < 2 || id >= c.hwm:
			return fmt.Sprintf("its freelist lists page %d, outside the data (pages 2..%d)", id, c.hwm-1)
		case c.visited.has(id):
			return fmt.Sprintf("its freelist lists page %d as free, but the tree uses it (the next write would overwrite it)", id)
		}
	}
	return ""
}

// meta returns the meta bbolt will use: the valid one with the higher txid.
func (c *storeCheck) meta() (boltMeta, string) {
	m0, r0 := c.readMeta(0)
	// The second meta page is one page in; with the first unreadable, try
	// every page size bbolt may have used, as bbolt does.
	var sizes []int64
	if r0 == "" {
		sizes = []int64{int64(m0.pageSize)}
	} else {
		for ps := int64(1024); ps <= 65536; ps *= 2 {
			sizes = append(sizes, ps)
		}
	}
	var m1 boltMeta
	r1 := "is missing"
	for _, ps := range sizes {
		m, r := c.readMeta(ps)
		if r == "" && int64(m.pageSize) != ps {
			r = "disagrees with the file's page size"
		}
		if r == "" {
			m1, r1 = m, ""
			break
		}
		if ps == sizes[0] || r1 == "is missing" {
			r1 = r
		}
	}
	// bbolt falls back to the other meta page when one is unreadable,
	// silently opening the commit before the last one if the damaged
	// page was the newer. A meta page is written in one sector-sized
	// piece at the start of its page, so a crash does not tear it: one
	// failing its check is damage, and refused like any other.
	switch {
	case r0 != "" && r1 != "":
		return boltMeta{}, fmt.Sprintf("it is not a readable Pyric store (meta page 0 %s; meta page 1 %s)", r0, r1)
	case r0 != "":
		return boltMeta{}, fmt.Sprintf("its first meta page %s while the second (transaction %d) is intact; bbolt would silently open that one, "+
			"losing the last commit if the damaged page held it", r0, m1.txid)
	case r1 != "":
		return boltMeta{}, fmt.Sprintf("its second meta page %s while the first (transaction %d) is intact; bbolt would silently open that one, "+
			"losing the last commit if the damaged page held it", r1, m0.txid)
	case m0.txid >= m1.txid:
		return m0, ""
	}
	return m1, ""
}

func (c *storeCheck) readMeta(off int64) (boltMeta, string) {
	b := make([]byte, pageHeaderSize+metaChecksumAt+8)
	if _, err := c.f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			return boltMeta{}, "is cut off"
		}
		return boltMeta{}, "cannot be read: " + err.Error()
	}
	le := binary.LittleEndian
	if flags := le.Uint16(b[8:]); flags != metaPage {
		return boltMeta{}, "is not a meta page"
	}
	m := b[pageHeaderSize:]
	if le.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, "has the wrong magic number (not a bbolt file)"
	}
	if le.Uint32(m[4:]) != boltVersion {
		return boltMeta{}, fmt.Sprintf("has format version %d, not %d", le.Uint32(m[4:]), boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaChecksumAt])
	if h.Sum64() != le.Uint64(m[metaChecksumAt:]) {
		return boltMeta{}, "fails its checksum"
	}
	meta := boltMeta{pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]), pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}
	if meta.pageSize < 512 || meta.pageSize > 1<<20 || meta.pageSize&(meta.pageSize-1) != 0 {
		return boltMeta{}, fmt.Sprintf("has an impossible page size %d", meta.pageSize)
	}
	if meta.root >= meta.pgid {
		return boltMeta{}, "points its root bucket past the end of the data"
	}
	if meta.freelist >= meta.pgid && meta.freelist != noFreelist {
		return boltMeta{}, "points its freelist past the end of the data"
	}
	return meta, ""
}

// page reads page id with its overflow pages; problem says what is wrong.
func (c *storeCheck) page(id uint64, what string) ([]byte, string) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Sprintf("%s points to page %d, outside the data (pages 2..%d)", what, id, c.hwm-1)
	}
	if c.visited.has(id) {
		return nil, fmt.Sprintf("%s points to page %d, which is already part of the tree", what, id)
	}
	c.visited.add(id)
	hdr, err := c.read(int64(id)*c.ps, pageHeaderSize)
	if err != nil {
		return nil, fmt.Sprintf("page %d (%s) cannot be read: %v", id, what, err)
	}
	le := binary.LittleEndian
	if got := le.Uint64(hdr); got != id {
		return nil, fmt.Sprintf("page %d (%s) is overwritten: it carries the id %d", id, what, got)
	}
	overflow := uint64(le.Uint32(hdr[12:]))
	if id+overflow >= c.hwm {
		return nil, fmt.Sprintf("page %d (%s) claims %d overflow pages, past the end of the data", id, what, overflow)
	}
	b, err := c.read(int64(id)*c.ps, int64(overflow+1)*c.ps)
	if err != nil {
		return nil, fmt.Sprintf("page %d (%s) cannot be read: %v", id, what, err)
	}
	for i := uint64(1); i <= overflow; i++ {
		c.visited.add(id + i)
	}
	return b, ""
}

// pageSet is a set of page ids, a bit each.
type pageSet []uint64

func (ps pageSet) has(id uint64) bool { return id/64 < uint64(len(ps)) && ps[id/64]&(1<<(id%64)) != 0 }

// add puts id in the set; ids past the set's size (beyond the data, which
// the callers refuse first) are not kept.
func (ps pageSet) add(id uint64) {
	if id/64 < uint64(len(ps)) {
		ps[id/64] |= 1 << (id % 64)
	}
}

// ids lists the set's ids in order.
func (ps pageSet) ids() []uint64 {
	var out []uint64
	for i, w := range ps {
		for b := range uint64(64) {
			if w&(1<<b) != 0 {
				out = append(out, uint64(i)*64+b)
			}
		}
	}
	return out
}

// read returns n bytes of the file at off, for reading only: a slice of
// the mapping when the file is mapped (checking a 100k-document store
// copied every page of it before), else a copy.
func (c *storeCheck) read(off, n int64) ([]byte, error) {
	if c.mapped != nil && off >= 0 && off+n <= int64(len(c.mapped)) {
		return c.mapped[off : off+n : off+n], nil
	}
	b := make([]byte, n)
	if _, err := c.f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

func (c *storeCheck) freelist(id uint64) string {
	b, p := c.page(id, "the freelist")
	if p != "" {
		return p
	}
	le := binary.LittleEndian
	if le.Uint16(b[8:]) != freelistPage {
		return fmt.Sprintf("page %d should hold the freelist but is of type %#x", id, le.Uint16(b[8:]))
	}
	n, at := uint64(le.Uint16(b[10:])), uint64(pageHeaderSize)
	if n == 0xFFFF {
		if len(b) < pageHeaderSize+8 {
			return fmt.Sprintf("freelist page %d is cut off", id)
		}
		n, at = le.Uint64(b[pageHeaderSize:]), at+8
	}
	if n > uint64(len(b)) || at+n*8 > uint64(len(b)) {
		return fmt.Sprintf("freelist page %d lists %d pages, more than it can hold", id, n)
	}
	c.free = b[at : at+n*8]
	return ""
}

// tree checks the B+tree rooted at page id (a bucket's pages), whose keys
// must lie in [lo, hi) (nil: unbounded), as bbolt requires (bbolt's own
// walk of the tree at open panics on keys out of order), and adds the
// number of its keys to *keys.
func (c *storeCheck) tree(id uint64, depth int, what string, lo, hi []byte, keys *int) string {
	if depth > maxTreeDepth {
		return fmt.Sprintf("%s is nested more than %d levels deep", what, maxTreeDepth)
	}
	b, p := c.page(id, what)
	if p != "" {
		return p
	}
	return c.node(b, id, depth, what, lo, hi, keys)
}

// ordered reports whether key i of a page's n keys (after prev, the
// page's key i-1) keeps the page's keys increasing and inside [lo, hi):
// as they increase, the first is checked against lo and the last
// against hi, not every one against both.
func ordered(key, prev []byte, i, n int, lo, hi []byte) bool {
	if i > 0 && bytes.Compare(key, prev) <= 0 {
		return false
	}
	if i == 0 && lo != nil && bytes.Compare(key, lo) < 0 {
		return false
	}
	return i != n-1 || hi == nil || bytes.Compare(key, hi) < 0
}

// node checks one branch or leaf page b (id 0 for an inline bucket's
// page) whose keys lie in [lo, hi), adding the number of keys under it
// to *keys.
func (c *storeCheck) node(b []byte, id uint64, depth int, what string, lo, hi []byte, keys *int) string {
	le := binary.LittleEndian
	if len(b) < pageHeaderSize {
		return fmt.Sprintf("%s has a page that is cut off", what)
	}
	flags, count := le.Uint16(b[8:]), int(le.Uint16(b[10:]))
	bucketRoot := id != 0 && id == c.bucketRoot
	c.bucketRoot = 0
	// where names the page in a problem (made only for one: a sound
	// file's check formats nothing per page).
	where := func() string {
		if id == 0 {
			return "the inline page of " + what
		}
		return fmt.Sprintf("page %d (%s)", id, what)
	}
	switch flags {
	case branchPage:
		if count == 0 || pageHeaderSize+count*branchElemSize > len(b) {
			return fmt.Sprintf("%s is overwritten: %d branch elements do not fit", where(), count)
		}
		key := func(i int) ([]byte, bool) {
			off := uint64(pageHeaderSize + i*branchElemSize)
			e := b[off:]
			pos, ks := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:]))
			if off+pos+ks > uint64(len(b)) || off+pos+ks < off {
				return nil, false
			}
			return b[off+pos : off+pos+ks], true
		}
		var prev []byte
		for i := range count {
			k, ok := key(i)
			if !ok {
				return fmt.Sprintf("%s is overwritten: branch key %d lies outside the page", where(), i)
			}
			if !ordered(k, prev, i, count, lo, hi) {
				return fmt.Sprintf("%s is overwritten: its branch keys are out of order at key %d", where(), i)
			}
			prev = k
		}
		// children checks children [from, to), adding their keys to
		// *n; before (a bucket root's) gets the keys before each.
		children := func(c *storeCheck, from, to int, n *int, before *[]int) string {
			start := *n
			for i := from; i < to; i++ {
				k, _ := key(i)
				next := hi
				if i+1 < count {
					next, _ = key(i + 1)
				}
				if before != nil {
					*before = append(*before, *n-start)
				}
				// As bbolt checks: a child's keys lie in [its key, the next).
				e := b[pageHeaderSize+i*branchElemSize:]
				if p := c.tree(le.Uint64(e[8:]), depth+1, what, k, next, n); p != "" {
					return p
				}
			}
			return ""
		}
		if !bucketRoot {
			return children(c, 0, count, keys, nil)
		}
		var before []int // the keys before each child
		n := 0
		if count >= parallelChildren && !c.serial {
			if p := c.halves(count, &n, &before, children); p != "" {
				return p
			}
		} else if p := children(c, 0, count, &n, &before); p != "" {
			return p
		}
		*keys += n
		if count > 1 {
			c.split(id, before, n, key)
		}
		return ""
	case leafPage:
		if pageHeaderSize+count*leafElemSize > len(b) {
			return fmt.Sprintf("%s is overwritten: %d leaf elements do not fit", where(), count)
		}
		*keys += count
		var prev []byte
		for i := range count {
			off := uint64(pageHeaderSize + i*leafElemSize)
			e := b[off:]
			ef, pos, ks, vs := le.Uint32(e[0:]), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
			end := off + pos + ks + vs
			if end > uint64(len(b)) || end < off {
				return fmt.Sprintf("%s is overwritten: entry %d lies outside the page", where(), i)
			}
			k := b[off+pos : off+pos+ks]
			if !ordered(k, prev, i, count, lo, hi) {
				return fmt.Sprintf("%s is overwritten: its keys are out of order at entry %d", where(), i)
			}
			prev = k
			if ef&bucketLeafFlag == 0 {
				continue
			}
			key := string(k)
			v := b[off+pos+ks : end]
			if len(v) < bucketHeaderSize {
				return fmt.Sprintf("%s is overwritten: bucket %q has a short header", where(), key)
			}
			sub := fmt.Sprintf("bucket %q", key)
			var subKeys int
			if root := le.Uint64(v); root != 0 {
				c.bucketRoot = root
				if p := c.tree(root, depth+1, sub, nil, nil, &subKeys); p != "" {
					return p
				}
				if c.keys == nil {
					c.keys = map[uint64]int{}
				}
				c.keys[root] = subKeys
			} else if p := c.node(v[bucketHeaderSize:], 0, depth+1, sub, nil, nil, &subKeys); p != "" {
				return p
			}
		}
		return ""
	}
	return fmt.Sprintf("%s is overwritten: it is of type %#x, not a branch or leaf page", where(), flags)
}

// split records the split of the bucket whose root is the branch page id:
// of its children's boundaries (before[i] keys before child i, of n in
// all; key(i) child i's key), the one nearest the middle.
func (c *storeCheck) split(id uint64, before []int, n int, key func(int) ([]byte, bool)) {
	best := 1
	for i := 2; i < len(before); i++ {
		if abs(before[i]-n/2) < abs(before[best]-n/2) {
			best = i
		}
	}
	k, _ := key(best)
	if c.splits == nil {
		c.splits = map[uint64]checkedSplit{}
	}
	c.splits[id] = checkedSplit{key: bytes.Clone(k), before: before[best]}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// halves checks a bucket root's count children as two halves at once:
// the second by a walker of its own (sharing the file, starting from the
// pages visited so far), then merged. A problem in either half, or a page
// both reached (the tree would hold it twice), is recheck.
func (c *storeCheck) halves(count int, n *int, before *[]int,
	children func(c *storeCheck, from, to int, n *int, before *[]int) string) string {
	mid := count / 2
	base := slices.Clone(c.visited)
	h := &storeCheck{f: c.f, mapped: c.mapped, size: c.size, ps: c.ps, hwm: c.hwm, txid: c.txid, visited: slices.Clone(c.visited)}
	var hn int
	var hBefore []int
	var hp string
	done := make(chan struct{})
	go func() {
		defer close(done)
		hp = children(h, mid, count, &hn, &hBefore)
	}()
	p := children(c, 0, mid, n, before)
	<-done
	if p != "" || hp != "" {
		return recheck
	}
	for i, w := range h.visited {
		if (c.visited[i]&^base[i])&(w&^base[i]) != 0 {
			return recheck
		}
		c.visited[i] |= w
	}
	for _, b := range hBefore {
		*before = append(*before, *n+b)
	}
	*n += hn
	for root, k := range h.keys {
		if c.keys == nil {
			c.keys = map[uint64]int{}
		}
		c.keys[root] = k
	}
	for root, sp := range h.splits {
		if c.splits == nil {
			c.splits = map[uint64]checkedSplit{}
		}
		c.splits[root] = sp
	}
	return ""
}
