package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

// TestInlineObjects: an object of a few KiB has no file, its bytes are
// in its record; they read back after a restart, through a metadata
// update (which rewrites the record), a replacement by a large object
// (a file) and back, and an empty object stays empty; a deleted one is
// gone after a restart. Records in the Bucket and in the store's Log.
func TestInlineObjects(t *testing.T) {
	t.Parallel()
	t.Run("bucket", func(t *testing.T) {
		t.Parallel()
		f := newEngine(t, true)
		testInline(t, f.env, func() service.Env { return f.env })
	})
	t.Run("log", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		env, st := storeEnv(t, dir, true)
		testInline(t, env, func() service.Env {
			st.Close()
			env, st = storeEnv(t, dir, true)
			t.Cleanup(func() { st.Close() })
			return env
		})
	})
}

// testInline runs TestInlineObjects on env; restart returns the env of
// the next start, after the engine closed.
func testInline(t *testing.T, env service.Env, restart func() service.Env) {
	e, err := storage.New(env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{e: e, env: env}
	blobDir := filepath.Join(f.env.DataDir, "storage", "blobs")
	files := func() int {
		t.Helper()
		ents, err := os.ReadDir(blobDir)
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	small := strings.Repeat("s", 1<<10)
	large := strings.Repeat("L", 64<<10)
	put(t, f.e, admin, "small", small)
	put(t, f.e, admin, "empty", "")
	put(t, f.e, admin, "grows", small)
	put(t, f.e, admin, "shrinks", large)
	put(t, f.e, admin, "deleted", small)
	if n := files(); n != 1 {
		t.Fatalf("%d files, want 1 (the large object's)", n)
	}
	if _, err := f.e.Update(admin, bkt, "small", storage.Attrs{Metadata: map[string]*string{"k": ptr("v")}}, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	put(t, f.e, admin, "grows", large)
	put(t, f.e, admin, "shrinks", small)
	if err := f.e.Delete(admin, bkt, "deleted", storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if n := files(); n != 1 {
		t.Fatalf("after the replacements %d files, want 1 (grows')", n)
	}
	f.e.Close()

	e2, err := storage.New(restart(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"small": small, "empty": "", "grows": large, "shrinks": small} {
		if got := read(t, e2, admin, name); got != want {
			t.Errorf("%s after a restart: %d bytes %.10q, want %d", name, len(got), got, len(want))
		}
	}
	if o, err := e2.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "small"}); err != nil || o.Metadata["k"] != "v" || o.Size != int64(len(small)) {
		t.Errorf("small's metadata after a restart: %+v %v", o, err)
	}
	if _, err := e2.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "deleted"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleted after a restart: %v", err)
	}
	if n := files(); n != 1 {
		t.Errorf("after a restart %d files, want 1", n)
	}
}

// TestEventViewMetadata: the object view of a live event (not read back
// from JSON) gives ObjectView the object's custom metadata, as a
// recorded one does, so a rerun of the request sees resource.metadata.
func TestEventViewMetadata(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	if _, err := f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "m", Body: strings.NewReader("x"),
		Attrs: storage.Attrs{Metadata: map[string]*string{"k": ptr("v")}}}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range f.rec.Events() {
		if ev.Request == nil || ev.Request.Seen == nil || ev.Path != "m" {
			continue
		}
		o, ok := storage.ObjectView(ev.Request.Seen.Data)
		if !ok || o.Metadata["k"] != "v" {
			t.Errorf("the upload's event view gives metadata %v (%v)", o, ok)
		}
		found = true
	}
	if !found {
		t.Fatal("no request event of the upload")
	}
}

// TestChangeEventTokensStayOffTheRequest: an upload's request event and
// its change event show the object from one view (eventViews); the
// download token the change event carries (downloadTokens, for the
// triggers) is added to a copy, never to the request's view of what the
// rules saw, and both show the committed generation.
func TestChangeEventTokensStayOffTheRequest(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	o, err := f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "tok", Body: strings.NewReader("x"), NewToken: true})
	if err != nil {
		t.Fatal(err)
	}
	var seen, current map[string]any
	for _, ev := range f.rec.Events() {
		if ev.Path != "tok" {
			continue
		}
		if ev.Request != nil && ev.Request.Seen != nil {
			seen, _ = ev.Request.Seen.Data.(map[string]any)
		}
		if ev.Mutation != nil {
			current, _ = ev.Mutation.Current.(map[string]any)
		}
	}
	if seen == nil || current == nil {
		t.Fatalf("request view %v, change view %v", seen, current)
	}
	if _, ok := seen["downloadTokens"]; ok {
		t.Errorf("the request event's view has the change's downloadTokens: %v", seen)
	}
	if current["downloadTokens"] != strings.Join(o.DownloadTokens(), ",") || current["downloadTokens"] == "" {
		t.Errorf("the change event's downloadTokens = %v, want %v", current["downloadTokens"], o.DownloadTokens())
	}
	for _, v := range []map[string]any{seen, current} {
		if v["generation"] != o.Generation {
			t.Errorf("a view shows generation %v, want %d", v["generation"], o.Generation)
		}
	}
}
