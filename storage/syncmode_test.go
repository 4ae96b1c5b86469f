package storage

import (
	"runtime"
	"testing"
)

// TestBlobSyncMode: in the sandbox's batch mode a committed blob is left
// to the background flush (kill -9 cannot lose what reached the
// operating system); with --sync always it is fsynced before the commit.
func TestBlobSyncMode(t *testing.T) {
	for _, syncEach := range []bool{false, true} {
		d, err := newDiskBlobs(t.TempDir(), syncEach)
		if err != nil {
			t.Fatal(err)
		}
		wantLazy := !syncEach && runtime.GOOS == "linux"
		if d.lazy != wantLazy {
			t.Fatalf("syncEach %v: lazy %v", syncEach, d.lazy)
		}
		w, err := d.create()
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, inlineMax+1) // a file: an inline blob has none to sync
		w.Write(data)
		if err := w.finish(); err != nil {
			t.Fatal(err)
		}
		if err := w.commit(1); err != nil {
			t.Fatal(err)
		}
		if d.dirty.Load() != wantLazy {
			t.Errorf("syncEach %v: dirty after commit %v", syncEach, d.dirty.Load())
		}
		d.close()
		if d.dirty.Load() {
			t.Errorf("syncEach %v: still dirty after close", syncEach)
		}
		if n, err := d.size(1); err != nil || n != int64(len(data)) {
			t.Errorf("blob: %d %v", n, err)
		}
	}
}
