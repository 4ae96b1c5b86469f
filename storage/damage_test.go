package storage_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pyric/pyric/storage"
)

// blobFile is the file holding o's bytes.
func blobFile(dir string, o *storage.Object) string {
	return filepath.Join(dir, "storage", "blobs", strconv.FormatInt(o.Generation, 10))
}

// blobDamages are the ways an object's file gets damaged, each with what
// the error must say.
var blobDamages = []struct {
	name   string
	damage func(path string)
	want   string
}{
	{"truncated", func(p string) { b, _ := os.ReadFile(p); os.WriteFile(p, b[:len(b)/2], 0o644) }, "it was cut short"},
	{"emptied", func(p string) { os.WriteFile(p, nil, 0o644) }, "its file holds 0 bytes"},
	{"extended", func(p string) { b, _ := os.ReadFile(p); os.WriteFile(p, append(b, "more"...), 0o644) }, "something was written to it"},
	{"overwritten with garbage of the same size", func(p string) {
		b, _ := os.ReadFile(p)
		rand.New(rand.NewSource(1)).Read(b)
		os.WriteFile(p, b, 0o644)
	}, "do not match the stored checksums"},
	{"one byte flipped", func(p string) {
		b, _ := os.ReadFile(p)
		b[len(b)-1] ^= 1
		os.WriteFile(p, b, 0o644)
	}, "do not match the stored checksums"},
	{"deleted", func(p string) { os.Remove(p) }, "is missing from the data dir"},
}

// TestDamagedObject damages an object's file each way: a read of it is a
// DataLoss error naming the object and the damage (never the bytes, never
// the file's path), found before any byte is returned when the size is
// wrong and before the last bytes are when only the checksums are; the
// next start reports it by name; the file is left exactly as it was.
func TestDamagedObject(t *testing.T) {
	t.Parallel()
	data := strings.Repeat("0123456789abcdef", 20000) // several reads' worth
	for _, c := range blobDamages {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newEngine(t, true)
			o := put(t, f.e, admin, "dir/obj", data)
			put(t, f.e, admin, "dir/other", "intact")
			path := blobFile(f.env.DataDir, o)
			c.damage(path)
			hash := func() [32]byte { b, _ := os.ReadFile(path); return sha256.Sum256(b) }
			before := hash()
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, storage.ErrDataLoss) || storage.HTTPStatus(err) >= 500 {
					t.Fatalf("%s: %v (status %d), want a DataLoss error", what, err, storage.HTTPStatus(err))
				}
				for _, frag := range []string{bkt + "/dir/obj", c.want} {
					if !strings.Contains(err.Error(), frag) {
						t.Errorf("%s: message lacks %q: %s", what, frag, err)
					}
				}
				if strings.Contains(err.Error(), f.env.DataDir) {
					t.Errorf("%s: message names an internal path: %s", what, err)
				}
			}

			// A read in order never returns every byte.
			_, r, err := f.e.Open(admin, storage.ReadRequest{Bucket: bkt, Name: "dir/obj"})
			if err == nil {
				got, rerr := io.ReadAll(r)
				if len(got) >= len(data) {
					t.Errorf("read %d of %d bytes of a damaged object", len(got), len(data))
				}
				check("read", rerr)
				if r.Err() == nil {
					t.Error("the reader does not report the damage")
				}
				r.Close()
			} else {
				check("open", err)
			}
			// A copy of it, a compose of it and an export fail the same way.
			_, err = f.e.Copy(admin, storage.CopyRequest{SrcBucket: bkt, SrcName: "dir/obj", DstBucket: bkt, DstName: "copy"})
			check("copy", err)
			_, err = f.e.Compose(admin, bkt, "composed", []storage.ComposeSource{{Name: "dir/other"}, {Name: "dir/obj"}}, storage.Attrs{}, storage.Conditions{})
			check("compose", err)
			_, err = f.e.Snapshot()
			check("snapshot", err)
			if got := read(t, f.e, admin, "dir/other"); got != "intact" {
				t.Errorf("the other object reads %q", got)
			}

			// The next start reports the damage when the size shows it
			// (the checksums are checked when the object is read).
			f.e.Close()
			env := f.env
			var mu sync.Mutex
			var warned []string
			env.Warn = func(m string) { mu.Lock(); warned = append(warned, m); mu.Unlock() }
			e2, err := storage.New(env, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			bySize := !strings.Contains(c.want, "checksums")
			if bySize != (len(warned) == 1) || (bySize && !strings.Contains(warned[0], bkt+"/dir/obj")) {
				t.Errorf("warnings at start: %q", warned)
			}
			if _, err := e2.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "dir/obj"}); err != nil {
				t.Errorf("the damaged object's metadata: %v", err)
			}
			if hash() != before {
				t.Error("the damaged file was changed")
			}
			// Uploading it again repairs it.
			put(t, e2, admin, "dir/obj", "fresh")
			if got := read(t, e2, admin, "dir/obj"); got != "fresh" {
				t.Errorf("after a new upload: %q", got)
			}
		})
	}
}

// TestIntactObjectReads: reads in order, ranges and an empty object are
// served whole by the checking reader.
func TestIntactObjectReads(t *testing.T) {
	t.Parallel()
	f := newEngine(t, true)
	data := strings.Repeat("xyz", 50000)
	put(t, f.e, admin, "a", data)
	put(t, f.e, admin, "empty", "")
	for _, name := range []string{"a", "empty"} {
		_, r, err := f.e.Open(admin, storage.ReadRequest{Bucket: bkt, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || (name == "a" && string(got) != data) || (name == "empty" && len(got) != 0) {
			t.Errorf("%s: %d bytes, %v", name, len(got), err)
		}
		// A range after a seek is not hashed and reads as stored.
		if name == "a" {
			r.Seek(1000, io.SeekStart)
			part := make([]byte, 10)
			if _, err := io.ReadFull(r, part); err != nil || string(part) != data[1000:1010] {
				t.Errorf("range: %q %v", part, err)
			}
		}
		r.Close()
	}
}

// TestDamagedSession: a resumable upload's file cut short or overwritten
// is reported at start and kept aside unchanged; the session is dropped
// (the client starts over). Bytes past the acknowledged ones — a chunk a
// crash interrupted — are cut, as before.
func TestDamagedSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		damage func(string)
		want   string
	}{
		{"cut short", func(p string) { b, _ := os.ReadFile(p); os.WriteFile(p, b[:3], 0o644) }, "fewer than the 8 acknowledged"},
		{"overwritten", func(p string) { os.WriteFile(p, []byte("XXXXXXXX"), 0o644) }, "no longer match their CRC32C"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newEngine(t, true)
			u, err := f.e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "up"}, 16)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := u.Append(0, strings.NewReader("01234567")); err != nil {
				t.Fatal(err)
			}
			f.e.Close()
			path := filepath.Join(f.env.DataDir, "storage", "sessions", u.ID)
			c.damage(path)
			damaged, _ := os.ReadFile(path)
			env := f.env
			var warned []string
			env.Warn = func(m string) { warned = append(warned, m) }
			e2, err := storage.New(env, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e2.Upload(u.ID); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("damaged session resumed: %v", err)
			}
			kept := filepath.Join(f.env.DataDir, "storage", "damaged", "session-"+u.ID)
			if len(warned) != 1 || !strings.Contains(warned[0], c.want) || !strings.Contains(warned[0], kept) || !strings.Contains(warned[0], bkt+"/up") {
				t.Errorf("warnings %q", warned)
			}
			if b, err := os.ReadFile(kept); err != nil || !bytes.Equal(b, damaged) {
				t.Errorf("kept aside: %q %v, want %q", b, err, damaged)
			}
		})
	}
	t.Run("unacknowledged tail", func(t *testing.T) {
		t.Parallel()
		f := newEngine(t, true)
		u, _ := f.e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "up"}, 16)
		u.Append(0, strings.NewReader("01234567"))
		f.e.Close()
		fh, _ := os.OpenFile(filepath.Join(f.env.DataDir, "storage", "sessions", u.ID), os.O_WRONLY|os.O_APPEND, 0)
		fmt.Fprint(fh, "89a")
		fh.Close()
		e2, err := storage.New(f.env, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		u2, err := e2.Upload(u.ID)
		if err != nil || u2.Received() != 8 {
			t.Fatalf("resume: %v", err)
		}
		u2.Append(8, strings.NewReader("89abcdef"))
		if _, err := u2.Finalize(); err != nil {
			t.Fatal(err)
		}
		if got := read(t, e2, admin, "up"); got != "0123456789abcdef" {
			t.Errorf("resumed object %q", got)
		}
	})
}

// TestMetadataGoneKeepsBytes: when pyric.db no longer names any object
// (moved aside after a damage report, replaced, --fresh) the object files
// are kept aside unchanged with a warning, not deleted as crash leftovers.
func TestMetadataGoneKeepsBytes(t *testing.T) {
	t.Parallel()
	f := newEngine(t, true)
	data := strings.Repeat("the user's bytes ", 1000) // in a file (a small object's bytes are in pyric.db)
	o := put(t, f.e, admin, "a", data)
	f.e.Close()
	env := envFor(t, true)
	env.DataDir = f.env.DataDir // the same files, a new, empty pyric.db
	var warned []string
	env.Warn = func(m string) { warned = append(warned, m) }
	if _, err := storage.New(env, storage.Options{}); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(f.env.DataDir, "storage", "orphans", strconv.FormatInt(o.Generation, 10))
	if b, err := os.ReadFile(kept); err != nil || string(b) != data {
		t.Errorf("kept: %q %v", b, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "1 object files are named by no object") {
		t.Errorf("warnings %q", warned)
	}
}
