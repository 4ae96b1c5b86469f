package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// TestIndexesWatcher: the index file's indexes are declared (built) when
// it is loaded and again when it changes; a bad file is an error naming
// it with enforcement, and otherwise a warning that leaves the last good
// indexes in force.
func TestIndexesWatcher(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "firestore.indexes.json")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := func(a, b string) string {
		return `{"indexes":[{"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"` + a +
			`","order":"ASCENDING"},{"fieldPath":"` + b + `","order":"DESCENDING"}]}]}`
	}
	e := firestore.New(firestore.Options{})
	db := firestore.DatabaseName{Project: "p", Database: firestore.DefaultDatabase}
	if _, err := e.Commit(t.Context(), identity.AdminIdentity(), &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{Operation: &pb.Write_Update{
		Update: &pb.Document{Name: db.DocName("c/1"), Fields: map[string]*pb.Value{"a": firestore.Int(1), "b": firestore.Int(2), "z": firestore.Int(3)}}}}}}); err != nil {
		t.Fatal(err)
	}
	maintained := func() string {
		var out []string
		for _, ix := range e.MaintainedIndexes(db) {
			var fs []string
			for _, f := range ix.Fields {
				fs = append(fs, f.String())
			}
			out = append(out, ix.Scope.Path+"["+strings.Join(fs, ",")+"]")
		}
		return strings.Join(out, " ")
	}

	write(index("a", "b"))
	var log bytes.Buffer
	iw := &indexesWatcher{path: path, w: &log}
	enforced, declared, err := iw.start()
	if err != nil || enforced != nil || declared == nil {
		t.Fatalf("start = %v, %v, %v", enforced, declared, err)
	}
	iw.e = e
	e.DeclareIndexes(declared)
	if got := maintained(); got != "c[a,b]" {
		t.Fatalf("after start: %q", got)
	}

	write(index("a", "z"))
	iw.load()
	if got := maintained(); got != "c[a,z]" || !strings.Contains(log.String(), "reloaded "+path) {
		t.Fatalf("after a change: %q; log %q", got, log.String())
	}
	iw.load() // unchanged: nothing happens
	if n := strings.Count(log.String(), "reloaded"); n != 1 {
		t.Errorf("an unchanged file was reloaded: %q", log.String())
	}

	write(`{"indexes":[{"collectionGroup":"c","fields":[{"fieldPath":"a","order":"ASC"}]}]}`)
	iw.load()
	if got := maintained(); got != "c[a,z]" {
		t.Errorf("a bad file changed the indexes: %q", got)
	}
	if want := path + `: indexes[0].fields[0] (a): unknown order "ASC" (want ASCENDING or DESCENDING); the last good indexes stay in force`; !strings.Contains(log.String(), want) {
		t.Errorf("log %q lacks %q", log.String(), want)
	}

	// With enforcement a bad file stops the start, naming it.
	write(`{"indexes":[{"collectionGroup":"c","fields":[]}]}`)
	_, _, err = (&indexesWatcher{path: path, enforce: true, w: &log}).start()
	if want := path + `: indexes[0] (collectionGroup "c"): "fields" is empty`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("enforced start with a bad file: %v, want %q", err, want)
	}
	// Without it the start goes on with nothing declared, and says why.
	log.Reset()
	if enforced, declared, err := (&indexesWatcher{path: path, w: &log}).start(); err != nil || enforced != nil || declared != nil ||
		!strings.Contains(log.String(), "no indexes are declared until it parses") {
		t.Errorf("start with a bad file: %v %v %v; log %q", enforced, declared, err, log.String())
	}
	// A missing file enforces an empty configuration (every composite query fails).
	if enforced, _, err := (&indexesWatcher{path: filepath.Join(dir, "none.json"), enforce: true, w: &log}).start(); err != nil || enforced == nil || len(enforced.Indexes) != 0 {
		t.Errorf("enforced start without a file: %v %v", enforced, err)
	}
}
