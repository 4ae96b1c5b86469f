package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	bolt "go.etcd.io/bbolt"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/sandbox/service"
)

var walDB = firestore.DatabaseName{Project: "p", Database: "(default)"}

func walDoc(rel string, v string) firestore.Change {
	return firestore.Change{Path: rel, Doc: &pb.Document{Name: walDB.DocName(rel), Fields: map[string]*pb.Value{"v": firestore.String(v)}}}
}

// crashedStore leaves dir as a process killed after its commits would
// leave it: the commits logged, none checkpointed (the store is abandoned
// without Close; its file lock is released by closing the bbolt handle
// only).
func crashedStore(t *testing.T, dir string, commits ...[]firestore.Change) {
	t.Helper()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commits {
		if err := st.Commit(walDB, time.Now(), c); err != nil {
			t.Fatal(err)
		}
	}
	abandon(st)
}

// abandon leaves st as kill -9 would: the log as written, the bbolt file
// without the records not yet checkpointed.
func abandon(st *Store) {
	// Stop the checkpointer first so none runs.
	close(st.stop)
	<-st.stopped
	st.walMu.Lock()
	st.wal.Close()
	st.wal = nil
	st.walMu.Unlock()
	st.db.Close()
}

func storedValues(t *testing.T, dir string) map[string]string {
	t.Helper()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dbs, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range dbs[walDB] {
		_, rel, _ := strings.Cut(d.Name, "/documents/")
		out[rel] = d.Fields["v"].GetStringValue()
	}
	return out
}

func onlyWAL(t *testing.T, dir string) string {
	t.Helper()
	ns, err := walFiles(dir)
	if err != nil || len(ns) != 1 {
		t.Fatalf("want one log file in %s, have %v (%v)", dir, ns, err)
	}
	return walFileName(dir, ns[0])
}

func TestWALReplayAfterCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	crashedStore(t, dir,
		[]firestore.Change{walDoc("c/a", "1"), walDoc("c/b", "1")},
		[]firestore.Change{walDoc("c/a", "2"), {Path: "c/b"}},
		[]firestore.Change{walDoc("c/c", "3")})
	got := storedValues(t, dir)
	want := map[string]string{"c/a": "2", "c/c": "3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after replay: %v, want %v", got, want)
	}
	// Replayed logs are gone; a clean close leaves one, holding only its
	// header (the sequence the next start checks against).
	if fi, err := os.Stat(onlyWAL(t, dir)); err != nil || fi.Size() != int64(walHeaderSize) {
		t.Errorf("log left after a clean close: %v %v", fi, err)
	}
}

func TestWALTornLastRecord(t *testing.T) {
	t.Parallel()
	for _, cut := range []int{1, 5, 9, 20} {
		t.Run(fmt.Sprintf("cut %d bytes", cut), func(t *testing.T) {
			dir := t.TempDir()
			crashedStore(t, dir, []firestore.Change{walDoc("c/a", "1")}, []firestore.Change{walDoc("c/b", strings.Repeat("x", 40))})
			path := onlyWAL(t, dir)
			data, _ := os.ReadFile(path)
			if err := os.WriteFile(path, data[:len(data)-cut], 0o600); err != nil {
				t.Fatal(err)
			}
			got := storedValues(t, dir)
			if got["c/a"] != "1" || len(got) != 1 {
				t.Fatalf("after a torn last record: %v, want only c/a", got)
			}
		})
	}
}

func TestWALCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first := onlyWAL(t, dir)
	if err := st.Commit(walDB, time.Now(), []firestore.Change{walDoc("c/a", "1")}); err != nil {
		t.Fatal(err)
	}
	logged, _ := os.Stat(first)
	st.checkpoint()
	// A log short of walRotateBytes stays the one appended to: no new
	// file, and the record the checkpoint applied stays in it.
	if onlyWAL(t, dir) != first {
		t.Fatal("a checkpoint of a short log started a new one")
	}
	if fi, _ := os.Stat(first); fi.Size() != logged.Size() || fi.Size() <= int64(walHeaderSize) {
		t.Errorf("the log holds %d bytes after the checkpoint, %d before", fi.Size(), logged.Size())
	}
	// The record is in the bbolt file itself.
	dbs, err := st.LoadStored()
	if err != nil {
		t.Fatal(err)
	}
	if len(dbs[walDB]) != 1 {
		t.Errorf("after the checkpoint the file holds %v", dbs)
	}
	// Past walCheckpointBytes a checkpoint starts without waiting for the
	// interval. The checkpointer is paused while the commits are made, so
	// that its interval's checkpoint (a slow run, -race) cannot take some
	// of them and leave the rest under the threshold.
	close(st.stop)
	<-st.stopped
	big := strings.Repeat("y", 1<<20)
	for i := range walCheckpointBytes>>20 + 2 {
		if err := st.Commit(walDB, time.Now(), []firestore.Change{walDoc(fmt.Sprintf("big/%d", i), big)}); err != nil {
			t.Fatal(err)
		}
	}
	if len(st.kick) != 1 {
		t.Fatal("no checkpoint asked for past walCheckpointBytes")
	}
	st.stop, st.stopped = make(chan struct{}), make(chan struct{})
	go st.maintain()
	pending := func() int {
		st.walMu.Lock()
		defer st.walMu.Unlock()
		return st.pendingBytes
	}
	if !await.Poll(SyncInterval/2, func() bool { return pending() < walCheckpointBytes/2 }) {
		t.Fatalf("%d bytes still pending: no early checkpoint", pending())
	}
}

// TestWALCheckpointRotates: past walRotateBytes (here: any record) a
// checkpoint moves the commits to come to a new log and deletes the one
// it applied; below it the log is kept, and a crash replays from it only
// what no checkpoint applied, in order, after the applied records it
// still holds. A clean close leaves one log holding only its header.
func TestWALCheckpointRotates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(cs ...firestore.Change) {
		t.Helper()
		if err := st.Commit(walDB, time.Now(), cs); err != nil {
			t.Fatal(err)
		}
	}
	first := onlyWAL(t, dir)
	st.ckptMu.Lock()
	st.rotateBytes = 1
	st.ckptMu.Unlock()
	commit(walDoc("c/a", "1"), walDoc("c/b", "1"))
	st.checkpoint()
	second := onlyWAL(t, dir)
	if second == first {
		t.Fatal("a checkpoint past walRotateBytes kept its log")
	}
	if fi, _ := os.Stat(second); fi.Size() != int64(walHeaderSize) {
		t.Errorf("the new log holds %d bytes, want only its header", fi.Size())
	}
	st.ckptMu.Lock()
	st.rotateBytes = walRotateBytes
	st.ckptMu.Unlock()
	commit(walDoc("c/a", "2"))
	st.checkpoint()
	commit(walDoc("c/a", "3"), firestore.Change{Path: "c/b"})
	st.checkpoint()
	commit(walDoc("c/c", "4"))
	if onlyWAL(t, dir) != second {
		t.Fatal("a checkpoint of a short log started a new one")
	}
	abandon(st) // c/c is only in the log; c/a 2 and 3 in both
	got := storedValues(t, dir)
	if want := "map[c/a:3 c/c:4]"; fmt.Sprint(got) != want {
		t.Fatalf("after a crash: %v, want %s", got, want)
	}
	if fi, err := os.Stat(onlyWAL(t, dir)); err != nil || fi.Size() != int64(walHeaderSize) {
		t.Errorf("log left after a clean close: %v %v", fi, err)
	}

	// A clean close of a store whose log holds applied records replaces
	// it with an empty one; the next open reads the same.
	st, err = OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	commit(walDoc("c/d", "5"))
	st.checkpoint()
	commit(walDoc("c/d", "6"))
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(onlyWAL(t, dir)); err != nil || fi.Size() != int64(walHeaderSize) {
		t.Errorf("log left after a clean close: %v %v", fi, err)
	}
	if got, want := fmt.Sprint(storedValues(t, dir)), "map[c/a:3 c/c:4 c/d:6]"; got != want {
		t.Fatalf("after a clean close: %s, want %s", got, want)
	}
}

func TestWALClearDropsPending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(walDB, time.Now(), []firestore.Change{walDoc("c/a", "1")}); err != nil {
		t.Fatal(err)
	}
	if err := st.Clear(); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(walDB, time.Now(), []firestore.Change{walDoc("c/b", "2")}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got := storedValues(t, dir); fmt.Sprint(got) != "map[c/b:2]" {
		t.Errorf("after Clear and a commit: %v", got)
	}
}

func TestWALSyncAlways(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStoreSync(dir, SyncAlways)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(walDB, time.Now(), []firestore.Change{walDoc("c/a", "1")}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got := storedValues(t, dir); got["c/a"] != "1" {
		t.Errorf("after reopen: %v", got)
	}
}

func FuzzReadWAL(f *testing.F) {
	good := appendWALRecord(appendWALHeader(nil, 1), 1, walDB.String(), []walChange{{path: "c/a", data: []byte("x")}, {path: "c/b"}})
	good = appendWALRecord(good, 2, walDB.String(), []walChange{{path: "c/c", data: []byte("y")}})
	f.Add(good, true)
	f.Add(good[:len(good)-3], true)
	f.Add([]byte(walMagic), false)
	f.Add([]byte(walMagic1+"\x00\x00"), true)
	f.Add([]byte("junk"), true)
	f.Fuzz(func(t *testing.T, data []byte, last bool) {
		path := filepath.Join(t.TempDir(), walPrefix+"000001")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := readWAL(path, last)
		var de *DamagedStoreError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("not a DamagedStoreError: %v", err)
		}
		if err != nil {
			return
		}
		if l.tornBytes > 0 && !last {
			t.Fatal("a torn record accepted in a log that is not the last")
		}
		if l.format != 2 {
			return
		}
		// What reads back re-encodes to the input, less a torn tail.
		re := appendWALHeader(nil, l.first)
		for _, b := range l.batches {
			re = appendWALRecord(re, b.seq, b.db, b.changes)
		}
		if int64(len(re))+l.tornBytes != int64(len(data)) || string(data[:len(re)]) != string(re) {
			t.Fatal("records read do not re-encode to the log")
		}
	})
}

// TestWALKeepsEncodings writes many documents through the engine (whose
// group commit reuses its encoding buffer between batches), then checks
// each value after a checkpoint-at-close and reopen: the logged records
// must own their bytes.
func TestWALKeepsEncodings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sb, err := openFS(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fa := fsOf(sb).Admin()
	for i := range 300 {
		if err := fa.SetDocument(bg, fmt.Sprintf("k/d%03d", i), map[string]any{"v": fmt.Sprintf("value %d %s", i, strings.Repeat("z", i%50))}); err != nil {
			t.Fatal(err)
		}
	}
	sb.Close()
	sb2, err := openFS(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer sb2.Close()
	for i := range 300 {
		d, err := fsOf(sb2).Admin().GetDocument(bg, fmt.Sprintf("k/d%03d", i))
		want := fmt.Sprintf("value %d %s", i, strings.Repeat("z", i%50))
		if err != nil || d == nil || d["v"] != want {
			t.Fatalf("k/d%03d after reopen: %v (%v), want v=%q", i, d, err, want)
		}
	}
}

// TestLogDeletePrefix: a prefix deletion in a Log deletes every key it
// covers (and no other) whether the keys are still in the log or already
// checkpointed into the bbolt file, and a crash's replay applies it.
func TestLogDeletePrefix(t *testing.T) {
	t.Parallel()
	puts := []service.LogChange{{Key: "/a", Value: []byte("1")}, {Key: "/a/b", Value: []byte("2")}, {Key: "/a/c", Value: []byte("3")},
		{Key: "/ab", Value: []byte("4")}, {Key: "/b", Value: []byte("5")}}
	del := []service.LogChange{{Key: "/a/", Prefix: true}, {Key: "/a", Value: []byte("6")}}
	for _, checkpointed := range []bool{false, true} {
		dir := t.TempDir()
		st, err := OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Log("database").Append("ns", puts); err != nil {
			t.Fatal(err)
		}
		if checkpointed {
			st.checkpoint()
		}
		if err := st.Log("database").Append("ns", del); err != nil {
			t.Fatal(err)
		}
		abandon(st) // kill -9: the deletion only in the log
		st, err = OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		err = st.Log("database").Load(func(space string, entries []service.LogChange) error {
			for _, e := range entries {
				got[space+e.Key] = string(e.Value)
			}
			return nil
		})
		st.Close()
		want := map[string]string{"ns/a": "6", "ns/ab": "4", "ns/b": "5"}
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("checkpointed %v: loaded %v, %v; want %v", checkpointed, got, err, want)
		}
	}
}

// TestLogCommitPastMaxRecord: a commit too large for one log record (a
// restore of many objects) is made durable as it is, in its place among
// the commits around it, and survives kill -9 with them.
func TestLogCommitPastMaxRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := st.Log("storage")
	if err := log.Append("b", []service.LogChange{{Key: "/x", Value: []byte("before")}, {Key: "/y", Value: []byte("before")}}); err != nil {
		t.Fatal(err)
	}
	// Many keys, as a restore has them, past walMaxRecord together.
	value := []byte(strings.Repeat("v", 1<<20))
	big := []service.LogChange{{Key: "/", Prefix: true}}
	for i := range walMaxRecord>>20 + 1 {
		big = append(big, service.LogChange{Key: fmt.Sprintf("/big/%03d", i), Value: value})
	}
	big = append(big, service.LogChange{Key: "/x", Value: []byte("restored")})
	if err := log.Append("b", big); err != nil {
		t.Fatalf("a commit past one record's limit: %v", err)
	}
	if err := log.Append("b", []service.LogChange{{Key: "/z", Value: []byte("after")}}); err != nil {
		t.Fatal(err)
	}
	abandon(st) // kill -9: the last commit only in the log
	st, err = OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := map[string]int{}
	small := map[string]string{}
	err = st.Log("storage").Load(func(space string, entries []service.LogChange) error {
		for _, e := range entries {
			got[e.Key] = len(e.Value)
			if len(e.Value) < 100 {
				small[e.Key] = string(e.Value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The big commit's prefix deletion took /y, it set /x, and the commit
	// after it is there too.
	if want := map[string]string{"/x": "restored", "/z": "after"}; !maps.Equal(small, want) {
		t.Errorf("small keys %v, want %v", small, want)
	}
	if n := len(got) - len(small); n != walMaxRecord>>20+1 {
		t.Errorf("%d big keys survived, want %d", n, walMaxRecord>>20+1)
	}
}

// TestLogLoadBigSpace: a space of many keys loads every key with its own
// value, in key order, whatever the sizes of keys and values (some keys
// past the key block's quarter); a nested bucket first or last is
// reported as damage.
func TestLogLoadBigSpace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12289
	want := make([]service.LogChange, n)
	for i := range want {
		v := fmt.Appendf(nil, "value %d", i)
		k := fmt.Sprintf("k/%0*d", 1+i%5, i)
		if i%1000 == 7 {
			v = bytes.Repeat(v, 1000)
			k += strings.Repeat("/", stringBlockSize/4) // a string of its own
		}
		want[i] = service.LogChange{Key: k, Value: v}
	}
	slices.SortFunc(want, func(a, b service.LogChange) int { return strings.Compare(a.Key, b.Key) })
	for i := 0; i < n; i += 500 {
		if err := st.Log("toy").Append("big", want[i:min(i+500, n)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Log("toy").Append("small", []service.LogChange{{Key: "x", Value: []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]service.LogChange{}
	err = st.Log("toy").Load(func(space string, entries []service.LogChange) error {
		for i, e := range entries {
			entries[i].Value = bytes.Clone(e.Value) // valid only until fn returns
		}
		got[space] = entries
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got["big"]) != n {
		t.Fatalf("loaded %d keys of the big space, want %d", len(got["big"]), n)
	}
	for i, e := range got["big"] {
		if e.Key != want[i].Key || !bytes.Equal(e.Value, want[i].Value) {
			t.Fatalf("entry %d is %q=%.20q, want %q=%.20q", i, e.Key, e.Value, want[i].Key, want[i].Value)
		}
	}
	if s := got["small"]; len(s) != 1 || s[0].Key != "x" || string(s[0].Value) != "y" {
		t.Errorf("small space: %v", s)
	}
	// A nested bucket, under the first key or the last.
	for _, key := range []string{"k/!", "k/~"} {
		err := st.db.Update(func(tx *bolt.Tx) error {
			_, err := tx.Bucket([]byte("toy")).Bucket([]byte("big")).CreateBucket([]byte(key))
			return err
		})
		if err == nil {
			err = st.Log("toy").Load(func(string, []service.LogChange) error { return nil })
		}
		var de *DamagedStoreError
		if !errors.As(err, &de) || !strings.Contains(de.Problem, "nested bucket") {
			t.Errorf("nested bucket %q: %v", key, err)
		}
		if err := st.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("toy")).Bucket([]byte("big")).DeleteBucket([]byte(key))
		}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
}

// TestStoreLogRecordSpace: a service's record space is its name, a NUL
// and the space (Firestore's: the space alone), built once per space:
// an Append to a space seen before builds nothing; past storeLogSpaces
// spaces it is still right, built each time.
func TestStoreLogRecordSpace(t *testing.T) {
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := st.Log("database").(*storeLog)
	if got := l.recordSpace("ns"); got != "database\x00ns" {
		t.Errorf("record space %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { l.recordSpace("ns") }); n != 0 {
		t.Errorf("the record space of a space seen before allocates %v times", n)
	}
	for i := range storeLogSpaces + 10 {
		sp := fmt.Sprint("s", i)
		if got := l.recordSpace(sp); got != "database\x00"+sp {
			t.Fatalf("record space of %s: %q", sp, got)
		}
	}
	if len(l.spaces) > storeLogSpaces {
		t.Errorf("%d record spaces kept", len(l.spaces))
	}
	if got := st.Log(firstLogService).(*storeLog).recordSpace("(default)"); got != "(default)" {
		t.Errorf("Firestore's record space %q", got)
	}
	// Appended through the Log, read back under the space.
	if err := l.Append("ns", []service.LogChange{{Key: "/a", Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	if err := l.Load(func(space string, entries []service.LogChange) error {
		for _, e := range entries {
			got[space+" "+e.Key] = string(e.Value)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "map[ns /a:1]" {
		t.Errorf("loaded %v", got)
	}
}
