package storage_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

// storeEnv is envFor with the sandbox's store in dir: the Bucket and, with
// log, the Log a durable sandbox gives the engine.
func storeEnv(t *testing.T, dir string, log bool) (service.Env, *sandbox.Store) {
	t.Helper()
	st, err := sandbox.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := envFor(t, false)
	env.Bucket, env.DataDir = st.Bucket(storage.Service), dir
	if log {
		env.Log = st.Log(storage.Service)
	}
	return env, st
}

// TestObjectsInLog: with a Log, objects' metadata is written to it (a
// write-ahead log record per change) and read back at the next start;
// objects a version before it left in the Bucket move into it, once.
func TestObjectsInLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	// A version before the Log: the objects are in the Bucket.
	env, st := storeEnv(t, dir, false)
	e, err := storage.New(env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, e, admin, "old", "from the bucket")
	put(t, e, admin, "old-gone", "x")
	e.Close()
	st.Close()

	// With the Log: the Bucket's objects move in; changes go to the Log.
	env, st = storeEnv(t, dir, true)
	e, err = storage.New(env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, e, admin, "old"); got != "from the bucket" {
		t.Fatalf("moved object reads %q", got)
	}
	left := 0
	env.Bucket.View(func(tx service.Tx) error {
		return tx.ForEach([]byte("o/"), func(_, _ []byte) error { left++; return nil })
	})
	if left != 0 {
		t.Errorf("%d objects left in the Bucket after the move", left)
	}
	put(t, e, admin, "new", "from the log")
	if err := e.Delete(admin, bkt, "old-gone", storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(admin, bkt, "old", storage.Attrs{Metadata: map[string]*string{"k": ptr("v")}}, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	// The next start (the engine is not closed; kill -9 itself is
	// e2e/storage-go's TestUploadsSurviveKill9).
	st.Close()
	e2env, st2 := storeEnv(t, dir, true)
	defer st2.Close()
	e2, err := storage.New(e2env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, e2, admin, "new"); got != "from the log" {
		t.Errorf("new object after restart reads %q", got)
	}
	if o, err := e2.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "old"}); err != nil || o.Metadata["k"] != "v" || o.Metageneration != 2 {
		t.Errorf("updated object after restart: %+v %v", o, err)
	}
	if _, err := e2.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "old-gone"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleted object after restart: %v", err)
	}
	res, err := e2.List(admin, storage.ListRequest{Bucket: bkt})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range res.Items {
		names = append(names, o.Name)
	}
	if strings.Join(names, ",") != "new,old" {
		t.Errorf("listed %v after restart, want new, old", names)
	}
}

// TestLogRecordsKeepTheirBytes: records are encoded in pooled buffers
// (pooledRecord), given back once the log returned; concurrent uploads of
// inline objects of every size, replaced and read back after a restart,
// each read as written: no record carries another's bytes.
func TestLogRecordsKeepTheirBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env, st := storeEnv(t, dir, true)
	e, err := storage.New(env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				name := fmt.Sprintf("g%d/%d", g, i%10) // each name written four times
				data := strings.Repeat(string(rune('a'+g)), (g*977+i*131)%4096+1)
				if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader(data),
					Attrs: storage.Attrs{Metadata: map[string]*string{"i": ptr(fmt.Sprint(i))}}}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want[name] = data
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	st.Close()
	env2, st2 := storeEnv(t, dir, true)
	defer st2.Close()
	e2, err := storage.New(env2, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range want {
		if got := read(t, e2, admin, name); got != data {
			t.Errorf("%s after restart: %d bytes %.8q…, want %d bytes %.8q…", name, len(got), got, len(data), data)
		}
	}
}
