package storagebench

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
)

// floorEnv, when set, makes the test binary the floor server listening
// on its value (host:port).
const floorEnv = "PYRIC_STORAGE_BENCH_FLOOR"

// floor is a GCS JSON API server that does nothing: it keeps only each
// object's size (so a download can answer that many bytes), discards
// what it is sent and answers every call of the workload with a reply
// of the shape the client expects. A download is zeros with their
// CRC32C in X-Goog-Hash, as every GCS server sends it, so the client
// checks it as it does against the others (without it the client skips
// that work on the floor alone).
type floor struct {
	mu      sync.Mutex
	sizes   map[string]int64 // bucket/object → size
	uploads map[string]int64 // resumable session → bytes received
	zeroCRC map[int64]string // size → the X-Goog-Hash of that many zeros
	seq     int
	host    string
}

// store records an object of size bytes (and the checksum of its
// download, once per size: computing it is a server's work at upload).
func (f *floor) store(key string, size int64) {
	f.mu.Lock()
	_, known := f.zeroCRC[size]
	f.mu.Unlock()
	var hash string
	if !known {
		zeros := make([]byte, min(size, 256<<10))
		var crc uint32
		for left := size; left > 0; left -= int64(len(zeros)) {
			crc = crc32.Update(crc, castagnoli, zeros[:min(left, int64(len(zeros)))])
		}
		hash = "crc32c=" + base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc))
	}
	f.mu.Lock()
	f.sizes[key] = size
	if !known {
		f.zeroCRC[size] = hash
	}
	f.mu.Unlock()
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func serveFloor(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f := &floor{sizes: map[string]int64{}, uploads: map[string]int64{}, zeroCRC: map[int64]string{}, host: addr}
	http.Serve(l, f)
	os.Exit(0)
}

func (f *floor) object(bucket, name string, size int64) map[string]any {
	return map[string]any{"kind": "storage#object", "bucket": bucket, "name": name, "size": strconv.FormatInt(size, 10),
		"generation": "1", "metageneration": "1", "contentType": "application/octet-stream",
		"timeCreated": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z"}
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && p == "/storage/v1/b":
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		reply(w, map[string]any{"kind": "storage#bucket", "name": b["name"], "id": b["name"]})
	case strings.HasPrefix(p, "/upload/storage/v1/b/"):
		f.upload(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/storage/v1/b/") && strings.HasSuffix(p, "/o"):
		bucket := strings.TrimSuffix(strings.TrimPrefix(p, "/storage/v1/b/"), "/o")
		prefix := r.URL.Query().Get("prefix")
		f.mu.Lock()
		var items []any
		for k, size := range f.sizes {
			if name, ok := strings.CutPrefix(k, bucket+"/"); ok && strings.HasPrefix(name, prefix) {
				items = append(items, f.object(bucket, name, size))
			}
		}
		f.mu.Unlock()
		reply(w, map[string]any{"kind": "storage#objects", "items": items})
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/storage/v1/b/"):
		bucket, name, _ := strings.Cut(strings.TrimPrefix(p, "/storage/v1/b/"), "/o/")
		name, _ = url.PathUnescape(name)
		f.mu.Lock()
		size, ok := f.sizes[bucket+"/"+name]
		f.mu.Unlock()
		if !ok {
			http.Error(w, `{"error":{"code":404,"message":"No such object"}}`, http.StatusNotFound)
			return
		}
		reply(w, f.object(bucket, name, size))
	case r.Method == http.MethodGet:
		// A media download: /{bucket}/{object}.
		key := strings.TrimPrefix(p, "/")
		f.mu.Lock()
		size, ok := f.sizes[key]
		hash := f.zeroCRC[size]
		f.mu.Unlock()
		if !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Header().Set("X-Goog-Hash", hash)
		w.Header().Set("X-Goog-Generation", "1")
		w.Header().Set("X-Goog-Metageneration", "1")
		w.Header().Set("X-Goog-Stored-Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		buf := make([]byte, min(size, 256<<10))
		for size > 0 {
			n := min(int64(len(buf)), size)
			if _, err := w.Write(buf[:n]); err != nil {
				return
			}
			size -= n
		}
	default:
		http.Error(w, "the floor does not serve "+r.Method+" "+p, http.StatusNotImplemented)
	}
}

// upload serves multipart and resumable uploads, keeping only sizes.
func (f *floor) upload(w http.ResponseWriter, r *http.Request) {
	bucket := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/upload/storage/v1/b/"), "/o")
	q := r.URL.Query()
	switch {
	case q.Get("upload_id") != "":
		// A chunk of a resumable session.
		id := q.Get("upload_id")
		n, _ := io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.uploads[id] += n
		got := f.uploads[id]
		f.mu.Unlock()
		cr := r.Header.Get("Content-Range")
		if strings.HasSuffix(cr, "/*") {
			if got > 0 {
				w.Header().Set("Range", "bytes=0-"+strconv.FormatInt(got-1, 10))
			}
			// A client that asks for no 308 (the Go client does) takes
			// a 200 carrying the status in a header instead.
			if r.Header.Get("X-GUploader-No-308") == "yes" {
				w.Header().Set("X-Http-Status-Code-Override", "308")
				w.WriteHeader(http.StatusOK)
				return
			}
			w.WriteHeader(308)
			return
		}
		name, _ := url.QueryUnescape(q.Get("name"))
		f.mu.Lock()
		delete(f.uploads, id)
		f.mu.Unlock()
		f.store(bucket+"/"+name, got)
		reply(w, f.object(bucket, name, got))
	case q.Get("uploadType") == "resumable":
		var meta map[string]any
		json.NewDecoder(r.Body).Decode(&meta)
		name, _ := meta["name"].(string)
		f.mu.Lock()
		f.seq++
		id := strconv.Itoa(f.seq)
		f.uploads[id] = 0
		f.mu.Unlock()
		w.Header().Set("Location", "http://"+f.host+"/upload/storage/v1/b/"+bucket+"/o?uploadType=resumable&upload_id="+id+"&name="+url.QueryEscape(name))
		w.WriteHeader(http.StatusOK)
	default:
		// Multipart: the metadata part names the object, the media
		// part is counted and discarded.
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		var meta struct {
			Name string `json:"name"`
		}
		var size int64
		for i := 0; ; i++ {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			if i == 0 {
				json.NewDecoder(part).Decode(&meta)
			} else {
				size, _ = io.Copy(io.Discard, part)
			}
		}
		name := meta.Name
		f.store(bucket+"/"+name, size)
		reply(w, f.object(bucket, name, size))
	}
}
