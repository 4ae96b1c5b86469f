package storage

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// TestEventViewShowsEveryProperty holds an event's view of an object to
// the object's properties: the stamps apart or alike (one string shared),
// the optional headers present or not, custom metadata without tokens.
func TestEventViewShowsEveryProperty(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 6, 0, 0, 123456789, time.FixedZone("x", 3600))
	later := at.Add(90 * time.Second)
	base := Object{Bucket: "b-1", Name: "a/b", Generation: 1796119200002000, Metageneration: 1, Size: 1024,
		ContentType: "text/plain", MD5Hash: "md5==", CRC32C: "crc==", TimeCreated: at, Updated: at,
		Metadata: map[string]string{"k": "v", TokenKey: "t1"}}
	full := base
	full.Updated, full.Metageneration = later, 2
	full.ContentEncoding, full.ContentDisposition, full.ContentLanguage, full.CacheControl = "gzip", "inline", "en", "no-cache"
	bare := Object{Bucket: "b-1", Name: "c"}
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	for _, c := range []struct {
		name string
		o    Object
		want map[string]any
	}{
		{"uploaded", base, map[string]any{"bucket": "b-1", "name": "a/b", "size": int64(1024), "contentType": "text/plain",
			"generation": int64(1796119200002000), "metageneration": int64(1), "md5Hash": "md5==", "crc32c": "crc==",
			"metadata": map[string]any{"k": "v"}, "timeCreated": stamp(at), "updated": stamp(at)}},
		{"updated with every header", full, map[string]any{"bucket": "b-1", "name": "a/b", "size": int64(1024), "contentType": "text/plain",
			"generation": int64(1796119200002000), "metageneration": int64(2), "md5Hash": "md5==", "crc32c": "crc==",
			"metadata": map[string]any{"k": "v"}, "timeCreated": stamp(at), "updated": stamp(later),
			"contentEncoding": "gzip", "contentDisposition": "inline", "contentLanguage": "en", "cacheControl": "no-cache"}},
		{"without stamps", bare, map[string]any{"bucket": "b-1", "name": "c", "size": int64(0), "contentType": "",
			"generation": int64(0), "metageneration": int64(0), "md5Hash": "", "crc32c": "", "metadata": map[string]any{}}},
	} {
		if got := eventView(&c.o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: view\n%v\nwant\n%v", c.name, got, c.want)
		}
	}
}

// TestEventViewsShareAVersion: the events of one object version share
// one view (viewCache): the upload's request and change events and the
// reads after it; a new version gets its own, never the old one's.
func TestEventViewsShareAVersion(t *testing.T) {
	t.Parallel()
	rec := &viewRecorder{}
	e, err := New(service.Env{Project: "demo-pyric", Events: rec}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	admin := identity.AdminIdentity()
	const bkt = "demo-pyric.appspot.com"
	o1, err := e.Put(admin, PutRequest{Bucket: bkt, Name: "v", Body: strings.NewReader("x")})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.Stat(admin, ReadRequest{Bucket: bkt, Name: "v"}); err != nil {
			t.Fatal(err)
		}
	}
	cc := "no-cache"
	o2, err := e.Update(admin, bkt, "v", Attrs{CacheControl: &cc}, Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Stat(admin, ReadRequest{Bucket: bkt, Name: "v"}); err != nil {
		t.Fatal(err)
	}
	evs := rec.events
	// upload: request, change; two reads; update: request, change; read.
	if len(evs) != 7 {
		t.Fatalf("%d events, want 7", len(evs))
	}
	ptr := func(v any) uintptr { return reflect.ValueOf(v).Pointer() }
	first := []any{evs[0].Request.Seen.Data, evs[1].Mutation.Current, evs[2].Request.Seen.Before.Data, evs[3].Request.Seen.Before.Data, evs[4].Request.Seen.Before.Data, evs[5].Mutation.Previous}
	for i, v := range first {
		if ptr(v) != ptr(first[0]) {
			t.Errorf("view %d of the first version is a map of its own", i)
		}
		if m := v.(map[string]any); m["generation"] != o1.Generation || m["metageneration"] != int64(1) {
			t.Errorf("view %d shows %v/%v, want %d/1", i, m["generation"], m["metageneration"], o1.Generation)
		}
	}
	second := []any{evs[4].Request.Seen.Data, evs[5].Mutation.Current, evs[6].Request.Seen.Before.Data}
	for i, v := range second {
		m := v.(map[string]any)
		if ptr(v) == ptr(first[0]) || m["metageneration"] != o2.Metageneration || m["cacheControl"] != "no-cache" {
			t.Errorf("view %d of the second version shows %v", i, m)
		}
		if ptr(v) != ptr(second[0]) {
			t.Errorf("view %d of the second version is a map of its own", i)
		}
	}
}

type viewRecorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *viewRecorder) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// TestAbsentObjectViewsShowTheirBucket: a request on an object that does
// not exist shows its bucket; the requests of one bucket share that view,
// another bucket's shows its own.
func TestAbsentObjectViewsShowTheirBucket(t *testing.T) {
	t.Parallel()
	rec := &viewRecorder{}
	e, err := New(service.Env{Project: "demo-pyric", Events: rec}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	admin := identity.AdminIdentity()
	for _, c := range []struct{ bucket, name string }{{"bucket-a", "1"}, {"bucket-a", "2"}, {"bucket-b", "1"}, {"bucket-a", "3"}} {
		if _, err := e.Put(admin, PutRequest{Bucket: c.bucket, Name: c.name, Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Stat(admin, ReadRequest{Bucket: "bucket-b", Name: "missing"}); err == nil {
		t.Fatal("a missing object was found")
	}
	var seen []any
	for _, ev := range rec.events {
		if ev.Request != nil {
			if ev.Request.Seen.Before.Exists {
				t.Fatalf("%s %s saw an existing object", ev.Method, ev.Path)
			}
			seen = append(seen, ev.Request.Seen.Before.Data)
		}
	}
	want := []string{"bucket-a", "bucket-a", "bucket-b", "bucket-a", "bucket-b"}
	if len(seen) != len(want) {
		t.Fatalf("%d request events, want %d", len(seen), len(want))
	}
	for i, v := range seen {
		if m := v.(map[string]any); len(m) != 1 || m["bucket"] != want[i] {
			t.Errorf("request %d shows %v, want its bucket %s", i, m, want[i])
		}
	}
	if reflect.ValueOf(seen[0]).Pointer() != reflect.ValueOf(seen[1]).Pointer() {
		t.Error("two creates in one bucket do not share the bucket's view")
	}
}

// TestViewBoxesShowTheirObject: the views the cache builds share the box
// of the last bucket and content type (box); objects of alternating and
// repeated buckets and types each get a view equal to eventView's, never
// an earlier object's bucket or type (fails when box ignores the string
// it is asked for).
func TestViewBoxesShowTheirObject(t *testing.T) {
	t.Parallel()
	var c viewCache
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	for i, k := range []int{0, 0, 1, 0, 2, 2, 1} {
		o := &Object{Bucket: []string{"b-1", "b-2", "b-3"}[k], Name: "n", Generation: int64(1000 + i), Metageneration: 1,
			ContentType: []string{"text/plain", "image/png", ""}[(k+i)%3], TimeCreated: at, Updated: at}
		if got, want := c.view(o), eventView(o); !reflect.DeepEqual(got, want) {
			t.Errorf("object %d: view %v, want %v", i, got, want)
		}
	}
}
