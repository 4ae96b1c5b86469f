package storage_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
	"github.com/pyric/pyric/storage/storagetest"
)

// gatedLog is a queued log (service.QueuedLog) whose waits the test
// ends: a Wait announces itself on waiting, then returns what the test
// sends on result. It keeps nothing.
type gatedLog struct {
	waiting chan string // the key of the record waited for
	result  chan error
}

func (l *gatedLog) Append(string, []service.LogChange) error { return nil }
func (l *gatedLog) Load(func(string, []service.LogChange) error) error {
	return nil
}

func (l *gatedLog) Queue(_ string, changes []service.LogChange) (service.LogWait, error) {
	return gatedWait{l, changes[0].Key}, nil
}

type gatedWait struct {
	l   *gatedLog
	key string
}

func (w gatedWait) Wait() error {
	w.l.waiting <- w.key
	return <-w.l.result
}

// gatedEngine is a durable engine whose log records wait for the test to
// say how their write ends (gatedLog), and the recorder of its events.
func gatedEngine(t *testing.T) (*storage.Engine, *gatedLog, *storagetest.Recorder) {
	t.Helper()
	env := envFor(t, false)
	env.DataDir = t.TempDir()
	log := &gatedLog{waiting: make(chan string), result: make(chan error)}
	env.Log = log
	e, err := storage.New(env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, log, env.Events.(*storagetest.Recorder)
}

// putAcknowledged uploads data as bkt/name through a gated engine, its
// record written.
func putAcknowledged(t *testing.T, e *storage.Engine, log *gatedLog, name, data string) {
	t.Helper()
	put := make(chan error, 1)
	go func() {
		_, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader(data)})
		put <- err
	}()
	<-log.waiting
	log.result <- nil
	if err := <-put; err != nil {
		t.Fatal(err)
	}
}

// TestPendingCommitLostRollsBack: an upload whose log record could not be
// written (its queued wait fails) fails, emits its request event with
// the error and no change event, and leaves the state as it was before:
// a replaced object reads as the version before, with its bytes, and a
// new object (and the bucket it brought) is gone. While the record
// waits, a read of the object waits for it (it answers the version
// before, not the lost one), and a list shows the version before.
func TestPendingCommitLostRollsBack(t *testing.T) {
	t.Parallel()
	e, log, rec := gatedEngine(t)
	putAsync := func(bucket, name, data string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := e.Put(admin, storage.PutRequest{Bucket: bucket, Name: name, Body: strings.NewReader(data)})
			done <- err
		}()
		return done
	}

	// v1 of "a", acknowledged.
	first := putAsync(bkt, "a", "v1")
	<-log.waiting
	log.result <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	v1, err := e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}

	// v2 of "a" waits for its record; a read of "a" meanwhile waits too.
	second := putAsync(bkt, "a", "v2")
	<-log.waiting
	list, err := e.List(admin, storage.ListRequest{Bucket: bkt})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Generation != v1.Generation {
		t.Errorf("a list while v2 is pending shows %+v, want v1 (generation %d)", list.Items, v1.Generation)
	}
	var wg sync.WaitGroup
	var seen *storage.Object
	var seenData string
	wg.Go(func() {
		o, r, err := e.Open(admin, storage.ReadRequest{Bucket: bkt, Name: "a"})
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		seen, seenData = o, string(b)
	})
	lost := errors.New("disk full")
	log.result <- lost
	if err := <-second; !errors.Is(err, lost) {
		t.Errorf("the upload whose record was lost returned %v, want %v", err, lost)
	}
	wg.Wait()
	if seen != nil && (seen.Generation != v1.Generation || seenData != "v1") {
		t.Errorf("a read during the lost upload got generation %d %q, want v1's %d", seen.Generation, seenData, v1.Generation)
	}
	if got := read(t, e, admin, "a"); got != "v1" {
		t.Errorf("after the lost upload, a reads %q, want v1", got)
	}

	// A new object in a new bucket, lost: both gone.
	third := putAsync("other-bucket", "b", "new")
	<-log.waiting
	log.result <- lost
	if err := <-third; !errors.Is(err, lost) {
		t.Errorf("the new object's lost upload returned %v", err)
	}
	if _, err := e.Stat(admin, storage.ReadRequest{Bucket: "other-bucket", Name: "b"}); storage.CodeOf(err) != storage.NotFound {
		t.Errorf("the lost new object: %v, want NotFound", err)
	}
	if e.HasBucket("other-bucket") {
		t.Error("the bucket only the lost upload brought is still there")
	}
	if objs := e.Objects(); len(objs) != 1 || objs[0].Generation != v1.Generation {
		t.Errorf("objects after the lost uploads: %+v, want v1 alone", objs)
	}

	// The events: every upload's request, the lost ones with their error;
	// a change event for v1's only.
	var changes, failed int
	for _, ev := range rec.Events() {
		switch {
		case ev.Kind == event.KindMutation:
			changes++
		case ev.Kind == event.KindRequest && ev.Method == "create" || ev.Method == "update":
			if ev.Err != nil {
				failed++
			}
		}
	}
	if changes != 1 || failed != 2 {
		t.Errorf("%d change events and %d failed upload requests, want 1 and 2", changes, failed)
	}
}

// TestPendingMetadataChangeKeepsTheBlob: a metadata change waits for its
// queued record as an upload does (a read of the object meanwhile waits,
// a list shows the version before), and its new version reads the same
// blob as the one before: neither its settling nor, when its record is
// lost, its rollback removes that blob (both would, treated as an
// upload's replaced or lost blob).
func TestPendingMetadataChangeKeepsTheBlob(t *testing.T) {
	t.Parallel()
	e, log, rec := gatedEngine(t)
	for _, size := range []int{10, 10 << 10} { // inline, and in a file
		name := fmt.Sprintf("obj-%d", size)
		data := strings.Repeat("d", size)
		putAcknowledged(t, e, log, name, data)
		update := func(typ string) chan error {
			done := make(chan error, 1)
			go func() {
				_, err := e.Update(admin, bkt, name, storage.Attrs{ContentType: &typ}, storage.Conditions{})
				done <- err
			}()
			return done
		}

		// Acknowledged: a read waits for it and sees it, bytes intact.
		first := update("text/plain")
		<-log.waiting
		list, err := e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: name})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Metageneration != 1 {
			t.Errorf("%s: a list while the change is pending shows %+v, want metageneration 1", name, list.Items)
		}
		seen := make(chan *storage.Object, 1)
		go func() {
			o, _ := e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: name})
			seen <- o
		}()
		log.result <- nil
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if o := <-seen; o == nil || o.Metageneration != 2 {
			t.Errorf("%s: a read during the change saw %+v, want metageneration 2", name, o)
		}
		if got := read(t, e, admin, name); got != data {
			t.Errorf("%s: after the change it reads %d bytes, want its %d", name, len(got), size)
		}

		// Lost: the version before is back, bytes intact.
		lost := errors.New("disk full")
		second := update("text/html")
		<-log.waiting
		log.result <- lost
		if err := <-second; !errors.Is(err, lost) {
			t.Errorf("%s: the change whose record was lost returned %v", name, err)
		}
		o, err := e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: name})
		if err != nil || o.Metageneration != 2 || o.ContentType != "text/plain" {
			t.Errorf("%s: after the lost change: %+v %v, want metageneration 2, text/plain", name, o, err)
		}
		if got := read(t, e, admin, name); got != data {
			t.Errorf("%s: after the lost change it reads %d bytes, want its %d", name, len(got), size)
		}
	}
	var changes, failed int
	for _, ev := range rec.Events() {
		switch {
		case ev.Kind == event.KindMutation:
			changes++
		case ev.Kind == event.KindRequest && ev.Method == "update" && ev.Err != nil:
			failed++
		}
	}
	if changes != 4 || failed != 2 {
		t.Errorf("%d change events and %d failed update requests, want 4 and 2", changes, failed)
	}
}

// TestPendingDeleteStaysUntilDurable: a delete waits for its queued
// record as an upload does; until it is durable the object stays, shown
// by a list, and a read waits for the outcome; a lost record leaves the
// object as it was, its bytes readable, with no change event.
func TestPendingDeleteStaysUntilDurable(t *testing.T) {
	t.Parallel()
	e, log, rec := gatedEngine(t)
	for _, size := range []int{10, 10 << 10} { // inline, and in a file
		name := fmt.Sprintf("obj-%d", size)
		data := strings.Repeat("d", size)
		putAcknowledged(t, e, log, name, data)
		del := func() chan error {
			done := make(chan error, 1)
			go func() { done <- e.Delete(admin, bkt, name, storage.Conditions{}) }()
			return done
		}
		listed := func() int {
			list, err := e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: name})
			if err != nil {
				t.Fatal(err)
			}
			return len(list.Items)
		}

		// Lost: the object is as it was.
		lost := errors.New("disk full")
		first := del()
		<-log.waiting
		if n := listed(); n != 1 {
			t.Errorf("%s: a list while the delete is pending shows %d objects, want it", name, n)
		}
		log.result <- lost
		if err := <-first; !errors.Is(err, lost) {
			t.Errorf("%s: the delete whose record was lost returned %v", name, err)
		}
		if got := read(t, e, admin, name); got != data {
			t.Errorf("%s: after the lost delete it reads %d bytes, want its %d", name, len(got), size)
		}

		// Acknowledged: a read meanwhile waits and finds nothing.
		second := del()
		<-log.waiting
		if n := listed(); n != 1 {
			t.Errorf("%s: a list while the delete is pending shows %d objects, want it", name, n)
		}
		seen := make(chan error, 1)
		go func() {
			_, err := e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: name})
			seen <- err
		}()
		log.result <- nil
		if err := <-second; err != nil {
			t.Fatal(err)
		}
		if err := <-seen; storage.CodeOf(err) != storage.NotFound {
			t.Errorf("%s: a read during the delete got %v, want NotFound", name, err)
		}
		if n := listed(); n != 0 {
			t.Errorf("%s: a list after the delete shows %d objects", name, n)
		}
	}
	// Two uploads and two acknowledged deletes changed something.
	var changes, failed int
	for _, ev := range rec.Events() {
		switch {
		case ev.Kind == event.KindMutation:
			changes++
		case ev.Kind == event.KindRequest && ev.Method == "delete" && ev.Err != nil:
			failed++
		}
	}
	if changes != 4 || failed != 2 {
		t.Errorf("%d change events and %d failed delete requests, want 4 and 2", changes, failed)
	}
}
