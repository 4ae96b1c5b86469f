package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore"
)

// walFixture leaves dir as a process killed mid-checkpoint leaves it:
// two logs, neither applied — the first with 60 documents in 20 commits,
// the second (the last) with 90 in 30 — and returns every document's value.
func walFixture(t *testing.T, dir string) map[string]string {
	t.Helper()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	close(st.stop)
	<-st.stopped
	want := map[string]string{}
	commit := func(from, to int) {
		for c := from; c < to; c++ {
			var changes []firestore.Change
			for i := range 3 {
				rel := fmt.Sprintf("c/d%03d", c*3+i)
				v := fmt.Sprintf("v%d-%s", c*3+i, strings.Repeat("x", 40+i*30))
				changes = append(changes, walDoc(rel, v))
				want[rel] = v
			}
			if err := st.Commit(walDB, time.Now(), changes); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit(0, 20)
	// A checkpoint that rotated to the next log and was killed before
	// applying the records of the first.
	st.walMu.Lock()
	if _, _, err := st.rotateWAL(); err != nil {
		t.Fatal(err)
	}
	st.walMu.Unlock()
	commit(20, 50)
	st.walMu.Lock()
	st.wal.Close()
	st.wal = nil
	st.walMu.Unlock()
	st.db.Close()
	return want
}

// dirHashes hashes every file of dir.
func dirHashes(t *testing.T, dir string) map[string][sha256.Size]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][sha256.Size]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

// recordOffsets lists the byte offsets of a format 2 log's records.
func recordOffsets(t *testing.T, data []byte) []int {
	t.Helper()
	var out []int
	for off := walHeaderSize; off < len(data); {
		out = append(out, off)
		off += walFrameSize + int(binary.LittleEndian.Uint32(data[off:]))
	}
	return out
}

// TestWALDamage damages the logs of a crashed store in each way a bad
// disk, a careless copy or a crash does. Damage is refused, naming the
// file and what to do, with every file of the data dir left as it was; a
// torn last write — the only thing a crash leaves — is dropped with one
// line naming the file and the bytes, and every record before it kept.
func TestWALDamage(t *testing.T) {
	t.Parallel()
	w1, w2 := walPrefix+"000001", walPrefix+"000002"
	edit := func(name string, f func(b []byte) []byte) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			path := filepath.Join(dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, f(b), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	refused := []struct {
		name   string
		damage func(*testing.T, string)
		file   string // the file the message names
		want   string
	}{
		{"first record's length past the file's end, good records behind", edit(w2, func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[walHeaderSize:], uint32(len(b)))
			return b
		}), w2, "a good record (sequence 22) follows it"},
		{"impossible length, good records behind", edit(w2, func(b []byte) []byte { b[walHeaderSize+3] = 0x7f; return b }), w2, "more than any commit"},
		{"flipped byte in a record, good records behind", edit(w2, func(b []byte) []byte { b[walHeaderSize+30] ^= 0xff; return b }), w2, "fails its checksum"},
		{"last log cut to a prefix of its header", edit(w2, func(b []byte) []byte { return b[:5] }), w2, "shorter than its 22-byte header"},
		{"last log cut inside its header", edit(w2, func(b []byte) []byte { return b[:15] }), w2, "shorter than its 22-byte header"},
		{"last log emptied", edit(w2, func(b []byte) []byte { return nil }), w2, "0 bytes long"},
		{"header's sequence garbled", edit(w2, func(b []byte) []byte { b[len(walMagic)+1] ^= 0x10; return b }), w2, "header fails its checksum"},
		{"not a log", edit(w2, func(b []byte) []byte { return []byte(strings.Repeat("hello\n", 40)) }), w2, "does not start with pyric's write-ahead log header"},
		{"a log that is not the last cut in the middle", edit(w1, func(b []byte) []byte { return b[:len(b)/2] }), w1, "not the last"},
		{"a log that is not the last cut at a record boundary", edit(w1, func(b []byte) []byte {
			offs := recordOffsets(t, b)
			return b[:offs[len(offs)/2]]
		}), w2, "starts at write 21, but pyric.wal.000001 ends at write 10"},
		{"first log deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, w1)) }, w2, "writes 1 to 20 are in neither"},
		{"a record moved from one log to the other", func(t *testing.T, dir string) {
			b1, _ := os.ReadFile(filepath.Join(dir, w1))
			offs := recordOffsets(t, b1)
			last := b1[offs[len(offs)-1]:]
			os.WriteFile(filepath.Join(dir, w1), b1[:offs[len(offs)-1]], 0o600)
			b2, _ := os.ReadFile(filepath.Join(dir, w2))
			os.WriteFile(filepath.Join(dir, w2), append(b2, last...), 0o600)
		}, w2, "carries sequence 20 where 51 belongs"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			walFixture(t, dir)
			c.damage(t, dir)
			before := dirHashes(t, dir)
			for _, open := range []func() error{
				func() error {
					st, err := OpenStoreWith(dir, StoreOptions{Warn: func(m string) { t.Errorf("warned: %s", m) }})
					if err == nil {
						st.Close()
					}
					return err
				},
				func() error {
					sb, err := openFS(Options{DataDir: dir})
					if err == nil {
						sb.Close()
					}
					return err
				},
			} {
				err := open()
				var de *DamagedStoreError
				if !errors.As(err, &de) {
					t.Fatalf("open: %v, want a DamagedStoreError", err)
				}
				for _, frag := range []string{filepath.Join(dir, c.file) + " is damaged", c.want, "move it aside", "Pyric has not opened or changed it"} {
					if !strings.Contains(err.Error(), frag) {
						t.Errorf("message lacks %q: %s", frag, err)
					}
				}
			}
			if after := dirHashes(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the data dir changed:\nbefore %x\nafter  %x", before, after)
			}
		})
	}

	// What a crash can leave: the last record of the last log cut short
	// or garbled. Dropping it loses nothing that was synced.
	torn := []struct {
		name   string
		damage func([]byte) []byte
		lost   int // documents of the last log lost
	}{
		{"last record cut short by 1 byte", func(b []byte) []byte { return b[:len(b)-1] }, 3},
		{"last record cut inside its frame", func(b []byte) []byte {
			offs := recordOffsets(t, b)
			return b[:offs[len(offs)-1]+7]
		}, 3},
		{"last record garbled to the end", func(b []byte) []byte {
			offs := recordOffsets(t, b)
			rand.New(rand.NewSource(1)).Read(b[offs[len(offs)-1]+20:])
			return b
		}, 3},
		{"last log cut in the middle", func(b []byte) []byte { return b[:len(b)/2] }, -1},
	}
	for _, c := range torn {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			want := walFixture(t, dir)
			path := filepath.Join(dir, w2)
			b, _ := os.ReadFile(path)
			damaged := c.damage(slices.Clone(b))
			os.WriteFile(path, damaged, 0o600)
			offs := recordOffsets(t, b)
			kept := 0
			for _, o := range offs {
				if end := o + walFrameSize + int(binary.LittleEndian.Uint32(b[o:])); end <= len(damaged) && string(b[o:end]) == string(damaged[o:end]) {
					kept++
				}
			}
			if c.lost == 3 && kept != len(offs)-1 {
				t.Fatalf("fixture: %d of %d records intact", kept, len(offs))
			}
			var mu sync.Mutex
			var warned []string
			st, err := OpenStoreWith(dir, StoreOptions{Warn: func(m string) { mu.Lock(); warned = append(warned, m); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			dbs, err := st.Load()
			st.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], path) || !strings.Contains(warned[0], fmt.Sprintf("(%d bytes at byte %d", len(damaged)-offs[kept], offs[kept])) {
				t.Errorf("warnings %q, want one naming %s and the bytes dropped", warned, path)
			}
			got := map[string]bool{}
			for _, d := range dbs[walDB] {
				_, rel, _ := strings.Cut(d.Name, "/documents/")
				got[rel] = true
				if d.Fields["v"].GetStringValue() != want[rel] {
					t.Errorf("%s = %v, want %q", rel, d.Fields["v"], want[rel])
				}
			}
			if wantN := 60 + 3*kept; len(got) != wantN {
				t.Errorf("%d documents after recovery, want %d (the first log's 60 and the %d intact records')", len(got), wantN, kept)
			}
		})
	}
}

// TestWALReadsFormat1: a log an earlier version left (no sequences) is
// applied at the next start, and the log after it is of the new format.
func TestWALReadsFormat1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, n := range mustWALFiles(t, dir) {
		os.Remove(walFileName(dir, n))
	}
	old := []byte(walMagic1)
	for i, v := range []string{"1", "2"} {
		rec := appendWALRecord(nil, 0, walDB.String(), []walChange{{path: "c/old" + fmt.Sprint(i), data: mustEncode(t, walDoc("c/old"+fmt.Sprint(i), v))}})
		payload := rec[walFrameSize:]
		old = binary.LittleEndian.AppendUint32(old, uint32(len(payload)))
		old = binary.LittleEndian.AppendUint32(old, crc32.Checksum(payload, walCRC))
		old = append(old, payload...)
	}
	os.WriteFile(walFileName(dir, 7), old, 0o600)
	if got := storedValues(t, dir); fmt.Sprint(got) != "map[c/old0:1 c/old1:2]" {
		t.Fatalf("after replaying a format 1 log: %v", got)
	}
	b, _ := os.ReadFile(onlyWAL(t, dir))
	if !strings.HasPrefix(string(b), walMagic) {
		t.Errorf("the next log is not of format 2: %q", b[:10])
	}
}

// TestStoreRolledBack: a pyric.db replaced by an older copy (or whose
// newer meta page was lost) no longer holds writes the logs after it
// need; the start refuses instead of losing them.
func TestStoreRolledBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(walDB, time.Now(), []firestore.Change{walDoc("c/a", "1")}); err != nil {
		t.Fatal(err)
	}
	st.checkpoint()
	old, _ := os.ReadFile(filepath.Join(dir, "pyric.db"))
	for i := range 3 {
		if err := st.Commit(walDB, time.Now(), []firestore.Change{walDoc(fmt.Sprint("c/b", i), "2")}); err != nil {
			t.Fatal(err)
		}
		st.checkpoint()
	}
	st.Close()
	os.WriteFile(filepath.Join(dir, "pyric.db"), old, 0o600)
	before := dirHashes(t, dir)
	_, err = OpenStore(dir)
	var de *DamagedStoreError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "holds the writes only through 1: writes 2 to 4 are in neither") {
		t.Fatalf("open: %v, want a DamagedStoreError naming the missing writes", err)
	}
	if fmt.Sprint(dirHashes(t, dir)) != fmt.Sprint(before) {
		t.Error("the data dir changed")
	}
}

func mustWALFiles(t *testing.T, dir string) []uint64 {
	t.Helper()
	ns, err := walFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func mustEncode(t *testing.T, c firestore.Change) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.Doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
