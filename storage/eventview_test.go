package storage

import (
	"reflect"
	"testing"
	"time"
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
