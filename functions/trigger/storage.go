package trigger

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
)

// Storage mutation ops (package storage's event ops).
const (
	storageOpPut      = "object_put"
	storageOpDelete   = "object_delete"
	storageOpMetadata = "metadata_update"
)

// storageObject is the part of a Storage event's object view read here.
type storageObject struct {
	Bucket             string            `json:"bucket"`
	Name               string            `json:"name"`
	Size               json.Number       `json:"size"`
	ContentType        string            `json:"contentType"`
	ContentEncoding    string            `json:"contentEncoding"`
	ContentDisposition string            `json:"contentDisposition"`
	ContentLanguage    string            `json:"contentLanguage"`
	CacheControl       string            `json:"cacheControl"`
	Generation         json.Number       `json:"generation"`
	Metageneration     json.Number       `json:"metageneration"`
	MD5Hash            string            `json:"md5Hash"`
	CRC32C             string            `json:"crc32c"`
	Metadata           map[string]string `json:"metadata"`
	DownloadTokens     string            `json:"downloadTokens"`
	TimeCreated        string            `json:"timeCreated"`
	Updated            string            `json:"updated"`
}

func decodeObject(v any) (*storageObject, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var o storageObject
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&o); err != nil {
		return nil, err
	}
	return &o, nil
}

// objectMetadata is the object as the functions receive it: the Storage
// JSON API's object resource, numbers as strings, as the Emulator Suite
// builds it (CloudStorageObjectMetadata).
func objectMetadata(o *storageObject, env Env) map[string]any {
	gen := o.Generation.String()
	m := map[string]any{
		"kind": "storage#object", "name": o.Name, "bucket": o.Bucket,
		"generation": gen, "metageneration": o.Metageneration.String(),
		"contentType": o.ContentType, "timeCreated": o.TimeCreated, "updated": o.Updated,
		"storageClass": "STANDARD", "size": o.Size.String(), "md5Hash": o.MD5Hash,
		"etag": etag(gen, o.Metageneration.String()), "crc32c": o.CRC32C,
		"timeStorageClassUpdated": o.TimeCreated,
		"id":                      o.Bucket + "/" + o.Name + "/" + gen,
	}
	md := map[string]string{}
	for k, v := range o.Metadata {
		md[k] = v
	}
	if o.DownloadTokens != "" {
		md["firebaseStorageDownloadTokens"] = o.DownloadTokens
	}
	if len(md) > 0 {
		m["metadata"] = md
	}
	for k, v := range map[string]string{"contentEncoding": o.ContentEncoding, "contentDisposition": o.ContentDisposition,
		"contentLanguage": o.ContentLanguage, "cacheControl": o.CacheControl} {
		if v != "" {
			m[k] = v
		}
	}
	if env.StorageURL != "" {
		base := strings.TrimRight(env.StorageURL, "/")
		m["selfLink"] = base + "/storage/v1/b/" + o.Bucket + "/o/" + url.PathEscape(o.Name)
		m["mediaLink"] = base + "/download/storage/v1/b/" + o.Bucket + "/o/" + url.PathEscape(o.Name) + "?generation=" + gen + "&alt=media"
	}
	return m
}

// etag is the Emulator Suite's object etag: base64 of the SHA-1 of
// "generation/metageneration", its padding cut.
func etag(gen, metagen string) string {
	h := sha1.Sum([]byte(gen + "/" + metagen))
	s := base64.StdEncoding.EncodeToString(h[:])
	return s[:len(s)-1]
}

// storageActions are the object actions a mutation is, in the v1 names:
// a write finalizes the new object and, replacing one, deletes the old
// (production: "This includes objects that are overwritten"; the
// Emulator Suite sends only the finalize).
func storageActions(m *event.Mutation) []struct {
	act string
	obj any
} {
	type ao = struct {
		act string
		obj any
	}
	switch m.Op {
	case storageOpPut:
		if m.Previous != nil {
			return []ao{{"delete", m.Previous}, {"finalize", m.Current}}
		}
		return []ao{{"finalize", m.Current}}
	case storageOpDelete:
		return []ao{{"delete", m.Previous}}
	case storageOpMetadata:
		return []ao{{"metadataUpdate", m.Current}}
	}
	return nil
}

// v2 action names of the v1 ones.
var storageV2Action = map[string]string{"finalize": "finalized", "delete": "deleted", "metadataUpdate": "metadataUpdated", "archive": "archived"}

func storageDeliveries(f Function, ev event.Event, env Env) ([]Delivery, error) {
	m := ev.Mutation
	if ev.Service != "storage" || ev.Kind != event.KindMutation || m == nil {
		return nil, nil
	}
	v2 := kindOf(f.EventType) == kindStorageV2
	want := action(f.EventType)
	var out []Delivery
	for _, a := range storageActions(m) {
		if (v2 && storageV2Action[a.act] != want) || (!v2 && a.act != want) {
			continue
		}
		o, err := decodeObject(a.obj)
		if err != nil || o == nil {
			return nil, fmt.Errorf("trigger: storage object of %s: %v", ev.Path, err)
		}
		if v2 {
			if f.EventFilters["bucket"] != o.Bucket {
				continue
			}
		} else if f.EventFilters["resource"] != "projects/_/buckets/"+o.Bucket {
			continue
		}
		meta := objectMetadata(o, env)
		t := ev.At
		if a.act != "delete" {
			if u, err := time.Parse(time.RFC3339Nano, o.Updated); err == nil {
				t = u
			}
		}
		var body map[string]any
		if v2 {
			body = cloudEvent(env, f.EventType, "//storage.googleapis.com/projects/_/buckets/"+o.Bucket, "objects/"+o.Name, t)
			body["bucket"] = o.Bucket
			body["data"] = meta
		} else {
			ctx := legacyContext(env, f, map[string]any{"service": "storage.googleapis.com",
				"name": "projects/_/buckets/" + o.Bucket + "/objects/" + o.Name, "type": "storage#object"}, t, nil)
			body = map[string]any{"data": meta, "context": ctx}
		}
		p, err := marshal(body)
		if err != nil {
			return nil, err
		}
		out = append(out, Delivery{Function: f.ID, Params: map[string]string{}, Payload: p})
	}
	return out, nil
}
