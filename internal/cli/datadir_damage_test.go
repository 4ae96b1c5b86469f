package cli

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/e2etest"
)

// populateDataDir runs `pyric serve` on a new data dir, writes through
// every kind of file it keeps — Firestore documents (pyric.db and the
// write-ahead log), an Auth user, a Storage object, an unfinished
// resumable upload, the captured session — and stops it cleanly.
func populateDataDir(t *testing.T) (dir, bucket string) {
	t.Helper()
	dir = t.TempDir()
	s := startServe(t, "--data-dir", dir, "--project", "demo-dmg")
	ctx := context.Background()
	c := goClient(t, s.Firestore, "demo-dmg", "owner")
	for i := range 30 {
		if _, err := c.Doc(fmt.Sprintf("docs/d%02d", i)).Set(ctx, map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	authPost(t, s.Auth, "signUp", map[string]any{"email": "dmg@example.com", "password": "secret1"})
	bucket = "demo-dmg.appspot.com"
	do := func(method, url string, body io.Reader, hdr ...string) *http.Response {
		req, _ := http.NewRequest(method, url, body)
		req.Header.Set("Authorization", "Bearer owner")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	base := "http://" + s.Storage + "/upload/storage/v1/b/" + bucket + "/o"
	if res := do("POST", base+"?uploadType=media&name=obj", strings.NewReader(strings.Repeat("object bytes ", 5000))); res.StatusCode != 200 {
		t.Fatalf("upload: %d", res.StatusCode)
	}
	res := do("POST", base+"?uploadType=resumable&name=big", nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != 200 || loc == "" {
		t.Fatalf("resumable start: %d", res.StatusCode)
	}
	if res := do("PUT", loc, strings.NewReader(strings.Repeat("r", 256<<10)), "Content-Range", fmt.Sprintf("bytes 0-%d/*", 256<<10-1)); res.StatusCode != 308 {
		t.Fatalf("resumable chunk: %d", res.StatusCode)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, s.stderr.String())
	}
	return dir, bucket
}

// treeHashes hashes every file under dir by its relative path.
func treeHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
}

// onlyFile is the one file under dir/sub.
func onlyFile(t *testing.T, dir, sub string) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, sub))
	if err != nil || len(ents) != 1 {
		t.Fatalf("%s: want one file, have %v (%v)", sub, ents, err)
	}
	return filepath.Join(sub, ents[0].Name())
}

// TestServeDataDirDamage damages each file of a populated data dir, one
// at a time, each way a bad disk, a careless copy or an editor does, and
// starts `pyric serve` on it. Damage that would lose data is refused with
// a message naming the file and what to do, and no file of the data dir
// changes; damage confined to one object, upload or capture is reported
// at start by name while the rest serves, with the damaged file left as
// it is or kept aside unchanged.
func TestServeDataDirDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts pyric serve for each kind of damage")
	}
	t.Parallel()
	good, bucket := populateDataDir(t)
	walName := ""
	if ents, _ := filepath.Glob(filepath.Join(good, "pyric.wal.*")); len(ents) == 1 {
		walName = filepath.Base(ents[0])
	} else {
		t.Fatalf("want one log after a clean stop, have %v", ents)
	}
	blob := onlyFile(t, good, filepath.Join("storage", "blobs"))
	session := onlyFile(t, good, filepath.Join("storage", "sessions"))
	garble := func(b []byte, from, to int) []byte {
		rand.New(rand.NewSource(int64(from))).Read(b[from:to])
		return b
	}
	type edit func([]byte) []byte
	cut := func(n int) edit { return func(b []byte) []byte { return b[:n] } }
	// Half of what the last commit uses: bbolt grows its file ahead of
	// its pages, so the file's own half may hold no data (and cutting
	// an unused tail loses nothing: the store opens, as it should).
	half := func(b []byte) []byte { return b[:usedBytes(t, b)/2] }
	empty := func([]byte) []byte { return nil }
	refused := []struct {
		file   string
		name   string
		damage edit
		want   string
	}{
		{"pyric.db", "emptied", empty, "it is empty"},
		{"pyric.db", "cut to 8 KiB", cut(8 << 10), "truncated"},
		{"pyric.db", "cut in half", half, "truncated"},
		{"pyric.db", "first meta page zeroed", func(b []byte) []byte { clear(b[:4096]); return b }, "first meta page"},
		{"pyric.db", "first meta page garbled", func(b []byte) []byte { return garble(b, 16, 80) }, "first meta page"},
		{"pyric.db", "second meta page garbled", func(b []byte) []byte { return garble(b, 4096+16, 4096+80) }, "second meta page"},
		{"pyric.db", "garbage over every data page", func(b []byte) []byte { return garble(b, 2*4096, len(b)) }, "pyric.db is damaged"},
		{walName, "emptied", empty, "shorter than its 22-byte header"},
		{walName, "cut to a prefix of its header", cut(5), "shorter than its 22-byte header"},
		{walName, "header garbled", func(b []byte) []byte { return garble(b, 10, 18) }, "header fails its checksum"},
		{walName, "not a log", func([]byte) []byte { return []byte("not a log at all\n") }, "does not start with pyric's write-ahead log header"},
	}
	for _, c := range refused {
		t.Run(c.file+" "+c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyTree(t, good, dir)
			path := filepath.Join(dir, c.file)
			b, _ := os.ReadFile(path)
			os.WriteFile(path, c.damage(b), 0o600)
			before := treeHashes(t, dir)
			var stderr syncBuffer
			code := Run(context.Background(), append(append([]string{"serve", "--json"}, e2etest.FreePortFlags()...), "--data-dir", dir, "--project", "demo-dmg"),
				Stdio{Out: io.Discard, Err: &stderr})
			msg := stderr.String()
			if code == 0 {
				t.Fatalf("serve started on a damaged %s:\n%s", c.file, msg)
			}
			for _, frag := range []string{path + " is damaged", c.want, "Pyric has not opened or changed it", "aside"} {
				if !strings.Contains(msg, frag) {
					t.Errorf("message lacks %q:\n%s", frag, msg)
				}
			}
			if after := treeHashes(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the data dir changed")
			}
		})
	}

	reported := []struct {
		file   string
		name   string
		damage func(path string)
		warn   string // the warning at start ("" none: found when read)
		kept   string // where the damaged file is kept ("" in place, "-" dropped)
		check  func(t *testing.T, s *served)
	}{
		{blob, "cut short", func(p string) { os.Truncate(p, 100) }, "object " + bucket + "/obj are damaged: its file holds 100 bytes", "", nil},
		{blob, "deleted", func(p string) { os.Remove(p) }, "object " + bucket + "/obj are damaged: its file (generation", "", nil},
		{blob, "same-size garbage", func(p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, garble(b, 0, len(b)), 0o600)
		}, "", "", nil},
		{session, "cut short", func(p string) { os.Truncate(p, 1000) }, "resumable upload", filepath.Join("storage", "damaged", "session-"+filepath.Base(session)), nil},
		{session, "garbled", func(p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, garble(b, 500, 600), 0o600)
		}, "no longer match their CRC32C", filepath.Join("storage", "damaged", "session-"+filepath.Base(session)), nil},
		// What a power loss leaves: a record cut short at the end of the
		// last log, never synced. It is dropped with one line.
		{walName, "torn record at its end", func(p string) {
			f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte{100, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
			f.Close()
		}, "ended in a torn write (14 bytes at byte 22", "-", nil},
		// Control characters, which JSON allows nowhere: random bytes
		// landing inside a string stay valid JSON about one time in 17
		// (only '"', '\\' and control characters end or break one).
		{"last-session.json", "garbled", func(p string) {
			b, _ := os.ReadFile(p)
			for i := len(b) / 2; i < len(b)/2+20; i++ {
				b[i] = 0x01
			}
			os.WriteFile(p, b, 0o600)
		}, "is not a session fixture", "last-session.damaged-1.json", nil},
	}
	for _, c := range reported {
		t.Run(c.file+" "+c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyTree(t, good, dir)
			path := filepath.Join(dir, c.file)
			c.damage(path)
			damaged, derr := os.ReadFile(path)
			s := startServe(t, "--data-dir", dir, "--project", "demo-dmg")
			if c.warn != "" {
				s.stderr.waitFor(t, c.warn)
			}
			// Everything else serves: the documents, and the object when
			// its damage is elsewhere.
			docs, err := goClient(t, s.Firestore, "demo-dmg", "owner").Collection("docs").Documents(context.Background()).GetAll()
			if err != nil || len(docs) != 30 {
				t.Errorf("documents: %d, %v", len(docs), err)
			}
			req, _ := http.NewRequest("GET", "http://"+s.Storage+"/download/storage/v1/b/"+bucket+"/o/obj?alt=media", nil)
			req.Header.Set("Authorization", "Bearer owner")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, rerr := io.ReadAll(res.Body)
			res.Body.Close()
			switch {
			case c.file != blob:
				if res.StatusCode != 200 || rerr != nil || len(body) != 5000*len("object bytes ") {
					t.Errorf("the intact object: %d, %d bytes, %v", res.StatusCode, len(body), rerr)
				}
			case c.warn != "": // the size shows the damage: a clear error
				if res.StatusCode != http.StatusGone || !strings.Contains(string(body), bucket+"/obj") || strings.Contains(string(body), dir) {
					t.Errorf("the damaged object: %d %s", res.StatusCode, body)
				}
			default: // the checksums show it: the body is cut off
				if rerr == nil {
					t.Errorf("the damaged object was served whole: %d, %d bytes", res.StatusCode, len(body))
				}
			}
			s.stop()
			if c.kept == "-" {
				return
			}
			where := path
			if c.kept != "" {
				where = filepath.Join(dir, c.kept)
			}
			now, err := os.ReadFile(where)
			if derr != nil {
				if !os.IsNotExist(err) {
					t.Errorf("the deleted file is back: %v", err)
				}
				return
			}
			if err != nil || sha256.Sum256(now) != sha256.Sum256(damaged) {
				t.Errorf("the damaged file at %s was changed (%v)", where, err)
			}
		})
	}
}

// usedBytes is how much of a bbolt file its last commit uses: the high
// water mark (pgid) of the newer of its two meta pages, times the page
// size. A meta page is a 16-byte page header, then magic, version, page
// size and flags (4 bytes each), the root bucket (16), the freelist's
// page (8), pgid (8) and txid (8).
func usedBytes(t *testing.T, b []byte) int {
	t.Helper()
	if len(b) < 2*4096 {
		t.Fatalf("a bbolt file of %d bytes", len(b))
	}
	ps := int(binary.LittleEndian.Uint32(b[16+8:]))
	var best, txid uint64
	for _, off := range []int{0, ps} {
		m := b[off+16:]
		if tx := binary.LittleEndian.Uint64(m[48:]); tx >= txid {
			best, txid = binary.LittleEndian.Uint64(m[40:]), tx
		}
	}
	if used := int(best) * ps; used > 2*ps && used <= len(b) {
		return used
	}
	t.Fatalf("bbolt meta pages say %d pages of %d bytes in a file of %d", best, ps, len(b))
	return 0
}
