package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	bolt "go.etcd.io/bbolt"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox/service"
)

// storeFixture writes a store with enough documents for a multi-level
// tree (branch pages, overflow pages, a nested bucket per database) and
// returns the file's bytes and how many documents it holds.
func storeFixture(t testing.TB) ([]byte, int) {
	t.Helper()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	name := firestore.DatabaseName{Project: "p", Database: "(default)"}
	n := 0
	for batch := range 20 {
		var changes []firestore.Change
		for i := range 100 {
			rel := fmt.Sprintf("c/d%04d", batch*100+i)
			v := strings.Repeat("x", 50+i)
			if i == 0 {
				v = strings.Repeat("big", 3000) // an overflow page
			}
			changes = append(changes, firestore.Change{Path: rel, Doc: &pb.Document{Name: name.DocName(rel),
				Fields: map[string]*pb.Value{"v": firestore.String(v)}}})
			n++
		}
		if err := st.Commit(name, time.Now(), changes); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Bucket("auth").Update(func(tx service.Tx) error { return tx.Put([]byte("users/u1"), []byte(`{"uid":"u1"}`)) }); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pyric.db"))
	if err != nil {
		t.Fatal(err)
	}
	return b, n
}

// reachablePages lists the pages of a sound file's tree (and its
// freelist), in order, without their overflow pages.
func reachablePages(t *testing.T, path string) ([]uint64, int64, int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	c := &storeCheck{f: f, size: fi.Size()}
	if p := c.run(); p != "" {
		t.Fatalf("fixture is damaged: %s", p)
	}
	all := c.visited.ids()
	// Only the first page of each: an overflow page's bytes are its
	// first page's data, which no page check reads.
	var out []uint64
	for i := 0; i < len(all); i++ {
		out = append(out, all[i])
		hdr := make([]byte, pageHeaderSize)
		if _, err := f.ReadAt(hdr, int64(all[i])*c.ps); err != nil {
			t.Fatal(err)
		}
		i += int(binary.LittleEndian.Uint32(hdr[12:]))
	}
	return out, c.ps, int64(c.hwm) * c.ps
}

// listFree returns a copy of file b whose freelist lists page id too.
func listFree(t *testing.T, b []byte, ps int64, id uint64) []byte {
	t.Helper()
	c := &storeCheck{f: bytes.NewReader(b), size: int64(len(b))}
	m, problem := c.meta()
	if problem != "" || m.freelist == noFreelist {
		t.Fatalf("fixture has no freelist (%s)", problem)
	}
	b = slices.Clone(b)
	fl := b[int64(m.freelist)*ps:]
	n := binary.LittleEndian.Uint16(fl[10:])
	if n >= 0xFFFF-1 || int64(pageHeaderSize+8*(int(n)+1)) > ps {
		t.Fatalf("fixture's freelist is too long to extend (%d ids)", n)
	}
	binary.LittleEndian.PutUint64(fl[pageHeaderSize+8*int(n):], id)
	binary.LittleEndian.PutUint16(fl[10:], n+1)
	return b
}

// TestDamagedStore damages a store file in each way a crash, a bad disk or
// a careless copy does, and checks that opening it is a clear error that
// names the file and says what to do, never a panic, and that the file is
// left exactly as it was.
func TestDamagedStore(t *testing.T) {
	t.Parallel()
	good, docs := storeFixture(t)
	fixture := filepath.Join(t.TempDir(), "pyric.db")
	if err := os.WriteFile(fixture, good, 0o600); err != nil {
		t.Fatal(err)
	}
	pages, ps, used := reachablePages(t, fixture)
	if len(pages) < 10 {
		t.Fatalf("fixture has only %d pages", len(pages))
	}
	rng := rand.New(rand.NewSource(1))
	garbage := func(b []byte, ids ...uint64) []byte {
		b = slices.Clone(b)
		for _, id := range ids {
			rng.Read(b[int64(id)*ps : int64(id+1)*ps])
		}
		return b
	}
	cases := []struct {
		name   string
		damage func([]byte) []byte
		want   string // fragment of the problem
	}{
		{"truncated to 0 bytes", func(b []byte) []byte { return nil }, "empty (0 bytes)"},
		{"truncated to 8 KiB", func(b []byte) []byte { return b[:8<<10] }, "truncated"},
		{"truncated mid-file", func(b []byte) []byte { return b[:len(b)/2/int(ps)*int(ps)] }, "truncated"},
		{"last page cut short by 100 bytes", func(b []byte) []byte { return b[:used-100] }, "truncated"},
		{"truncated inside the first page", func(b []byte) []byte { return b[:100] }, "truncated"},
		{"garbage over both meta pages", func(b []byte) []byte { return garbage(b, 0, 1) }, "not a readable Pyric store"},
		// bbolt would fall back to the other meta page, silently losing
		// the last commit when the damaged one held it.
		{"garbage over the first meta page", func(b []byte) []byte { return garbage(b, 0) }, "its first meta page is not a meta page while the second (transaction"},
		{"one byte of the first meta page flipped", func(b []byte) []byte {
			b = slices.Clone(b)
			b[pageHeaderSize+48] ^= 1 // its transaction id
			return b
		}, "its first meta page fails its checksum while the second (transaction"},
		{"zeros over the first meta page", func(b []byte) []byte {
			b = slices.Clone(b)
			clear(b[:ps])
			return b
		}, "its first meta page is not a meta page while the second"},
		{"garbage over the second meta page", func(b []byte) []byte { return garbage(b, 1) }, "its second meta page"},
		{"garbage over the root page", func(b []byte) []byte { return garbage(b, pages[0]) }, "overwritten"},
		{"garbage over some leaf pages", func(b []byte) []byte {
			return garbage(b, pages[len(pages)/3], pages[len(pages)/2], pages[len(pages)-1])
		}, "page"},
		{"zeros over a page", func(b []byte) []byte {
			b = slices.Clone(b)
			clear(b[int64(pages[len(pages)/2])*ps : int64(pages[len(pages)/2]+1)*ps])
			return b
		}, "overwritten"},
		// bbolt hands a free page to the next write: one the tree uses
		// would be overwritten, silently losing what it holds.
		{"the freelist lists a page the tree uses", func(b []byte) []byte {
			return listFree(t, b, ps, pages[len(pages)/2])
		}, "its freelist lists page"},
		{"not a store at all", func([]byte) []byte { return []byte(strings.Repeat("hello, world\n", 1000)) }, "not a readable Pyric store"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "pyric.db")
			data := c.damage(good)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			before := sha256.Sum256(data)
			for _, open := range []struct {
				what string
				f    func() error
			}{
				{"OpenStore", func() error {
					st, err := OpenStore(dir)
					if err == nil {
						st.Close()
					}
					return err
				}},
				{"sandbox.Open", func() error {
					sb, err := openFS(Options{DataDir: dir})
					if err == nil {
						sb.Close()
					}
					return err
				}},
			} {
				err := open.f()
				var de *DamagedStoreError
				if !errors.As(err, &de) {
					t.Fatalf("%s: %v, want a DamagedStoreError", open.what, err)
				}
				msg := err.Error()
				for _, frag := range []string{path, c.want, "Restore it from a backup", "move it aside"} {
					if !strings.Contains(msg, frag) {
						t.Errorf("%s: message lacks %q:\n%s", open.what, frag, msg)
					}
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(after) != before {
				t.Errorf("the damaged file was changed")
			}
		})
	}

	// A document's bytes damaged inside a sound page: the store opens, but
	// the sandbox refuses to restore it, naming the file and the document.
	t.Run("a stored document overwritten", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "pyric.db")
		data := bytes.Replace(good, []byte("documents/c/d0005"), []byte("documents/c/X0005"), 1)
		if bytes.Equal(data, good) {
			t.Fatal("the fixture lacks the document's name")
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sb, err := openFS(Options{DataDir: dir})
		if err == nil {
			sb.Close()
		}
		var de *DamagedStoreError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "c/d0005") {
			t.Fatalf("got %v, want a DamagedStoreError naming %s and c/d0005", err, path)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
			t.Error("the damaged file was changed")
		}
	})
	// Space bbolt allocated past its last page holds nothing: cutting it
	// off loses no data, and the store opens.
	t.Run("unused tail cut off", func(t *testing.T) {
		if int64(len(good)) <= used {
			t.Skip("the fixture has no unused tail")
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "pyric.db"), good[:used], 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
	})
	// The intact file opens and holds every document.
	t.Run("intact", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "pyric.db"), good, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		got, err := st.Load()
		if err != nil || len(got[firestore.DatabaseName{Project: "p", Database: "(default)"}]) != docs {
			t.Fatalf("load: %d docs, %v", len(got), err)
		}
	})
}

// FuzzStoreCheck: the checker never panics, whatever the file holds.
func FuzzStoreCheck(f *testing.F) {
	good, _ := storeFixture(f)
	f.Add(good[:8<<10])
	f.Add([]byte{})
	f.Add(good[:4096])
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &storeCheck{f: bytes.NewReader(data), size: int64(len(data))}
		_ = c.run()
	})
}

// TestCheckedKeysAreStats holds the key counts the file's check makes
// (which a load sizes its entries from, instead of Stats) to the keys a
// cursor lists for every bucket with a root page, nested ones included,
// and to bbolt's Bucket.Stats().KeyN for those holding no bucket (Stats
// adds nested buckets' keys), in the transaction the check read only.
func TestCheckedKeysAreStats(t *testing.T) {
	b, _ := storeFixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "pyric.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := checkStoreFile(path)
	if err != nil || keys == nil {
		t.Fatalf("checkStoreFile: %v, %v", keys, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	counted := 0
	var walk func(tx *bolt.Tx, b *bolt.Bucket, name string)
	walk = func(tx *bolt.Tx, b *bolt.Bucket, name string) {
		n, ok := keys.of(tx.ID(), uint64(b.Root()))
		if b.Root() == 0 {
			if ok {
				t.Errorf("inline bucket %s counted", name)
			}
		} else if want := cursorKeys(b); !ok || n != want {
			t.Errorf("bucket %s: counted %d (%v), its cursor lists %d", name, n, ok, want)
		} else if stats := b.Stats(); stats.BucketN == 1 && stats.KeyN != n {
			t.Errorf("bucket %s: counted %d, Stats %d", name, n, stats.KeyN)
		} else {
			counted++
		}
		if _, ok := keys.of(tx.ID()+1, uint64(b.Root())); ok {
			t.Errorf("bucket %s: counted for another transaction", name)
		}
		b.ForEachBucket(func(k []byte) error {
			walk(tx, b.Bucket(k), name+"/"+string(k))
			return nil
		})
	}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(k []byte, b *bolt.Bucket) error { walk(tx, b, string(k)); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if counted < 2 {
		t.Fatalf("only %d buckets counted; the fixture should have several with root pages", counted)
	}
}

// cursorKeys counts the keys a cursor over b lists (nested buckets'
// names included).
func cursorKeys(b *bolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// TestHalvesWalkIsWhole holds a load's walk of a bucket's two halves at
// once (from the split the file's check found) to the walk with one
// cursor: the same keys and values in the same order, for a bucket big
// enough for branch pages; and a split that miscounts is damage, not a
// short or shifted list.
func TestHalvesWalkIsWhole(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 * parallelWalk
	if err := st.Bucket("big").Update(func(tx service.Tx) error {
		for i := range n {
			if err := tx.Put(fmt.Appendf(nil, "k%06d", i*7%n), fmt.Appendf(nil, "value %d %s", i, strings.Repeat("v", i%50))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pyric.db")
	keys, err := checkStoreFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		// The bucket holding the keys: the service's, or one inside it.
		b := tx.Bucket([]byte("big"))
		if b == nil {
			t.Fatal("no bucket big")
		}
		b.ForEachBucket(func(k []byte) error { b = b.Bucket(k); return nil })
		cnt, ok := keys.of(tx.ID(), uint64(b.Root()))
		sp, split := keys.splitOf(tx.ID(), uint64(b.Root()))
		if !ok || cnt != n || !split || sp.before <= 0 || sp.before >= n {
			t.Fatalf("check: %d keys (%v), split %+v (%v); want %d keys and a split inside", cnt, ok, sp, split, n)
		}
		w := bucketWalk{path: path, svc: "big", space: "s", n: n}
		var k1, k2 stringBlock
		whole, err := w.whole(b, &k1)
		if err != nil {
			t.Fatal(err)
		}
		halves, err := w.halves(b, sp, &k2)
		if err != nil {
			t.Fatal(err)
		}
		if len(whole) != n || len(halves) != n {
			t.Fatalf("listed %d and %d entries, want %d", len(whole), len(halves), n)
		}
		for i := range whole {
			if whole[i].Key != halves[i].Key || !bytes.Equal(whole[i].Value, halves[i].Value) {
				t.Fatalf("entry %d: whole %q=%q, halves %q=%q", i, whole[i].Key, whole[i].Value, halves[i].Key, halves[i].Value)
			}
		}
		for _, bad := range []checkedSplit{{key: sp.key, before: sp.before - 1}, {key: sp.key, before: sp.before + 1}} {
			if _, err := w.halves(b, bad, &k2); !errors.As(err, new(*DamagedStoreError)) {
				t.Errorf("split %d keys before %q (really %d): %v, want a DamagedStoreError", bad.before, bad.key, sp.before, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestHalvesCheckIsSerial holds the check that walks a big bucket's two
// halves at once to the check one page at a time: on the sound fixture
// (whose bucket root has dozens of children, so its halves run at once)
// the same pages visited, key counts and splits; on damaged copies of it
// (random bytes over a page's header or elements, a child pointed at a
// page of the other half) the same problem, word for word.
func TestHalvesCheckIsSerial(t *testing.T) {
	good, _ := storeFixture(t)
	check := func(data []byte, serial bool) (*storeCheck, string) {
		c := &storeCheck{f: bytes.NewReader(data), mapped: data, size: int64(len(data)), serial: serial}
		return c, c.run()
	}
	par, p1 := check(good, false)
	ser, p2 := check(good, true)
	if p1 != "" || p2 != "" {
		t.Fatalf("sound fixture: %q, %q", p1, p2)
	}
	if !slices.Equal(par.visited, ser.visited) || fmt.Sprint(par.keys) != fmt.Sprint(ser.keys) || fmt.Sprint(par.splits) != fmt.Sprint(ser.splits) {
		t.Fatalf("halves: visited %d pages, keys %v, splits %v; serial: %d, %v, %v",
			len(par.visited.ids()), par.keys, par.splits, len(ser.visited.ids()), ser.keys, ser.splits)
	}
	if len(par.splits) == 0 {
		t.Fatal("the fixture's bucket has no split: its halves were not checked at once")
	}
	ps := par.ps
	pages := par.visited.ids()
	rng := rand.New(rand.NewSource(1))
	damaged := 0
	for i := range 300 {
		data := slices.Clone(good)
		page := int64(pages[rng.Intn(len(pages))])
		switch i % 3 {
		case 0: // a header
			rng.Read(data[page*ps : page*ps+pageHeaderSize])
		case 1: // some elements
			at := page*ps + pageHeaderSize + int64(rng.Intn(int(ps)-pageHeaderSize-32))
			rng.Read(data[at : at+32])
		case 2: // a branch child pointing at another page of the tree
			if binary.LittleEndian.Uint16(data[page*ps+8:]) != branchPage {
				continue
			}
			n := int(binary.LittleEndian.Uint16(data[page*ps+10:]))
			e := page*ps + pageHeaderSize + int64(rng.Intn(n)*branchElemSize)
			binary.LittleEndian.PutUint64(data[e+8:], pages[rng.Intn(len(pages))])
		}
		_, p1 := check(data, false)
		_, p2 := check(data, true)
		if p1 != p2 {
			t.Fatalf("damage %d on page %d: halves %q, serial %q", i, page, p1, p2)
		}
		if p1 != "" {
			damaged++
		}
	}
	if damaged < 50 {
		t.Fatalf("only %d of 300 damaged copies refused", damaged)
	}
}
