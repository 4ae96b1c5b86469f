package storageserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/jsonstr"
	engine "github.com/pyric/pyric/storage"
)

// gcs serves the GCS JSON API; p is /b….
func (h *Handler) gcs(w http.ResponseWriter, r *http.Request, p string) {
	who, err := gcsIdentity(r)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	t, ok := parsePath(p)
	if !ok {
		h.gcsFail(w, r, notFound("Not Found"))
		return
	}
	q := query(r.URL.RawQuery)
	switch {
	case t.Bucket == "":
		h.gcsBuckets(w, r)
	case !t.HasObjects:
		switch r.Method {
		case http.MethodGet:
			if !h.e.HasBucket(t.Bucket) {
				h.gcsFail(w, r, notFound("The specified bucket does not exist."))
				return
			}
			api.JSON(w, http.StatusOK, gcsBucket(t.Bucket))
		default:
			h.gcsFail(w, r, methodNotAllowed(r))
		}
	case t.Object == "":
		if r.Method != http.MethodGet {
			h.gcsFail(w, r, methodNotAllowed(r))
			return
		}
		h.gcsList(w, r, who, t.Bucket)
	case t.Action == "copyTo" || t.Action == "rewriteTo":
		if r.Method != http.MethodPost {
			h.gcsFail(w, r, methodNotAllowed(r))
			return
		}
		h.gcsCopy(w, r, who, t)
	case t.Action == "compose":
		if r.Method != http.MethodPost {
			h.gcsFail(w, r, methodNotAllowed(r))
			return
		}
		h.gcsCompose(w, r, who, t)
	default:
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			if q.Get("alt") == "media" {
				h.gcsMedia(w, r, who, t.Bucket, t.Object)
				return
			}
			rr, err := readRequest(r, t.Bucket, t.Object)
			if err != nil {
				h.gcsFail(w, r, err)
				return
			}
			o, err := h.e.Stat(who, rr)
			if err != nil {
				h.gcsFail(w, r, err)
				return
			}
			answerObject(w, r, o)
		case http.MethodPatch, http.MethodPut:
			c, err := conditions(r, false)
			if err != nil {
				h.gcsFail(w, r, err)
				return
			}
			res, err := decodeResource(r.Body)
			if err != nil {
				h.gcsFail(w, r, err)
				return
			}
			if r.Method == http.MethodPut {
				// update replaces every writable field: absent ones clear.
				a := &res.Attrs
				empty := ""
				for _, f := range []**string{&a.ContentType, &a.ContentEncoding, &a.ContentDisposition, &a.ContentLanguage, &a.CacheControl} {
					if *f == nil {
						*f = &empty
					}
				}
				if a.Metadata == nil {
					a.ClearMetadata = true
				}
			}
			o, err := h.e.Update(who, t.Bucket, t.Object, res.Attrs, c)
			if err != nil {
				h.gcsFail(w, r, err)
				return
			}
			answerObject(w, r, o)
		case http.MethodDelete:
			c, err := conditions(r, false)
			if err != nil {
				h.gcsFail(w, r, err)
				return
			}
			if err := h.e.Delete(who, t.Bucket, t.Object, c); err != nil {
				h.gcsFail(w, r, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			h.gcsFail(w, r, methodNotAllowed(r))
		}
	}
}

func (h *Handler) gcsBuckets(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		items := []any{}
		for _, b := range h.e.Buckets() {
			items = append(items, gcsBucket(b))
		}
		api.JSON(w, http.StatusOK, map[string]any{"kind": "storage#buckets", "items": items})
	case http.MethodPost:
		res, err := decodeResource(r.Body)
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		if err := h.e.CreateBucket(res.Name); err != nil {
			h.gcsFail(w, r, err)
			return
		}
		api.JSON(w, http.StatusOK, gcsBucket(res.Name))
	default:
		h.gcsFail(w, r, methodNotAllowed(r))
	}
}

// readRequest reads generation and preconditions of a read.
func readRequest(r *http.Request, bucket, name string) (engine.ReadRequest, error) {
	rr := engine.ReadRequest{Bucket: bucket, Name: name, Shared: true} // answers only read it
	if g := query(r.URL.RawQuery).Get("generation"); g != "" {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil || n < 0 {
			return rr, badRequest("Invalid generation %q.", g)
		}
		rr.Generation = n
	}
	var err error
	rr.Conditions, err = conditions(r, false)
	return rr, err
}

func (h *Handler) gcsList(w http.ResponseWriter, r *http.Request, who identity.Identity, bucket string) {
	q := query(r.URL.RawQuery)
	req := engine.ListRequest{Bucket: bucket, Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), PageToken: q.Get("pageToken"),
		StartOffset: q.Get("startOffset"), EndOffset: q.Get("endOffset"), MatchGlob: q.Get("matchGlob"),
		IncludeTrailingDelimiter: q.Get("includeTrailingDelimiter") == "true", Shared: true}
	if m := q.Get("maxResults"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n < 0 {
			h.gcsFail(w, r, badRequest("Invalid maxResults %q.", m))
			return
		}
		req.MaxResults = n
	}
	res, err := h.e.List(who, req)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	// A page (storage#objects), its keys in alphabetical order as
	// encoding/json writes a struct's.
	base := originOf(r)
	buf := listBufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxPooledList {
			listBufs.Put(buf)
		}
	}()
	b := append((*buf)[:0], `{"items":[`...)
	for i, o := range res.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendGCSObject(b, base, o)
	}
	b = append(b, `],"kind":"storage#objects"`...)
	if res.NextPageToken != "" {
		b = append(b, `,"nextPageToken":`...)
		b = jsonstr.Append(b, res.NextPageToken)
	}
	b = append(b, `,"prefixes":[`...)
	for i, p := range res.Prefixes {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, p)
	}
	b = append(b, ']', '}')
	answerBody(w, b)
	*buf = b
}

// listBufs holds the buffers listings are encoded in (a page of 1,000
// objects is most of a MiB: allocated for each listing, it was garbage
// the collector scanned and memory returned to the system and taken back).
var listBufs = sync.Pool{New: func() any { b := make([]byte, 0, 128<<10); return &b }}

// maxPooledList is the largest listing buffer kept for the next.
const maxPooledList = 2 << 20

func (h *Handler) gcsCopy(w http.ResponseWriter, r *http.Request, who identity.Identity, t target) {
	dst, err := conditions(r, false)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	src, err := conditions(r, true)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	res, err := decodeResource(r.Body)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	req := engine.CopyRequest{SrcBucket: t.Bucket, SrcName: t.Object, DstBucket: t.DstBucket, DstName: t.DstObject,
		Conditions: dst, SrcConditions: src}
	if g := query(r.URL.RawQuery).Get("sourceGeneration"); g != "" {
		if req.SrcGeneration, err = strconv.ParseInt(g, 10, 64); err != nil {
			h.gcsFail(w, r, badRequest("Invalid sourceGeneration %q.", g))
			return
		}
	}
	if a := res.Attrs; a.ContentType != nil || a.ContentEncoding != nil || a.ContentDisposition != nil ||
		a.ContentLanguage != nil || a.CacheControl != nil || a.Metadata != nil || a.ClearMetadata {
		req.Attrs = &res.Attrs
	}
	o, err := h.e.Copy(who, req)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	if t.Action == "copyTo" {
		answerObject(w, r, o)
		return
	}
	size := strconv.FormatInt(o.Size, 10)
	api.JSON(w, http.StatusOK, map[string]any{"kind": "storage#rewriteResponse", "totalBytesRewritten": size,
		"objectSize": size, "done": true, "resource": gcsObject(originOf(r), o)})
}

// gcsDownload serves /download/storage/v1/b/{bucket}/o/{object}.
func (h *Handler) gcsDownload(w http.ResponseWriter, r *http.Request, p string) {
	who, err := gcsIdentity(r)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	t, ok := parsePath(p)
	if !ok || t.Object == "" || t.Action != "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		h.gcsFail(w, r, notFound("Not Found"))
		return
	}
	h.gcsMedia(w, r, who, t.Bucket, t.Object)
}

func (h *Handler) gcsMedia(w http.ResponseWriter, r *http.Request, who identity.Identity, bucket, name string) {
	rr, err := readRequest(r, bucket, name)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	o, rd, err := h.e.Open(who, rr)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	defer rd.Close()
	serveMedia(w, r, o, rd)
}

// xml serves the XML API's reads: GET/HEAD /{bucket}/{object}.
func (h *Handler) xml(w http.ResponseWriter, r *http.Request, p string) {
	bucket, name, ok := parseXMLPath(p)
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		h.gcsFail(w, r, notFound("Not Found"))
		return
	}
	who, err := gcsIdentity(r)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	h.gcsMedia(w, r, who, bucket, name)
}

// serveMedia writes an object's bytes with the headers both APIs send;
// net/http's ServeContent answers Range (206, 416) and conditional
// requests (304, 412), serveWhole the others. The reader
// checks the stored checksums as the bytes stream (storage/verify.go):
// damage found after the headers went out aborts the response, so the
// client sees a broken download, never a complete one.
func serveMedia(w http.ResponseWriter, r *http.Request, o *engine.Object, rd engine.Reader) {
	whole := wholeRead(r)
	hd := mediaHeader{h: w.Header(), vals: make([]string, 0, mediaHeaders), mediaValues: mediaValuesOf(o, whole)}
	hd.set("Content-Type", o.ContentType)
	guardContent(&hd, o.ContentType)
	hd.set("Etag", hd.etag)
	hd.set("X-Goog-Generation", hd.gen)
	hd.set("X-Goog-Metageneration", hd.metagen)
	hd.set("X-Goog-Hash", hd.hash)
	hd.set("X-Goog-Stored-Content-Encoding", orDefault(o.ContentEncoding, "identity"))
	hd.set("X-Goog-Stored-Content-Length", hd.size)
	hd.set("X-Goog-Storage-Class", o.StorageClass())
	for _, f := range [...]struct{ k, v string }{{"Content-Encoding", o.ContentEncoding}, {"Content-Disposition", o.ContentDisposition},
		{"Content-Language", o.ContentLanguage}, {"Cache-Control", o.CacheControl}} {
		if f.v != "" {
			hd.set(f.k, f.v)
		}
	}
	for k, v := range o.Metadata {
		if k != engine.TokenKey {
			hd.h.Set("X-Goog-Meta-"+k, v) // a name to canonicalize
		}
	}
	if whole {
		serveWhole(&hd, w, r, o, rd)
	} else {
		http.ServeContent(mediaWriter{w, o.Size}, r, "", o.Updated, rd)
	}
	if rd.Err() != nil {
		// An object read in one piece is found damaged before a byte
		// went out: the headers go first, so that the client sees a
		// download cut short, as with any other.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
}

// mediaHeaders is how many headers serveMedia sets by their canonical
// names at most.
const mediaHeaders = 18

// rangeOrCondition are the request headers net/http's ServeContent
// answers with something other than the whole object (a range, 304, 412)
// or reads to decide whether to.
var rangeOrCondition = [...]string{"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"}

// wholeRead reports whether r asks for the whole object without a range
// or condition (what a client's plain download sends): ServeContent's
// answer to it is every byte with status 200, which serveWhole writes
// without ServeContent's header checks, size seeks and header
// canonicalization (a tenth of a small download's handler time).
func wholeRead(r *http.Request) bool {
	for _, k := range rangeOrCondition {
		if v := r.Header[k]; len(v) > 0 && v[0] != "" { // as ServeContent reads them
			return false
		}
	}
	return true
}

// serveWhole answers a wholeRead request as ServeContent does: the
// Last-Modified, Accept-Ranges and Content-Length headers (no length
// under a Content-Encoding), status 200, then, unless r is a HEAD, the
// object's bytes. TestServeWholeMatchesServeContent holds it to that.
func serveWhole(hd *mediaHeader, w http.ResponseWriter, r *http.Request, o *engine.Object, rd io.Reader) {
	if hd.modified != "" {
		hd.set("Last-Modified", hd.modified)
	}
	hd.set("Accept-Ranges", "bytes")
	if v := hd.h["Content-Encoding"]; len(v) == 0 || v[0] == "" {
		hd.set("Content-Length", hd.size)
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		mediaWriter{w, o.Size}.ReadFrom(&io.LimitedReader{R: rd, N: o.Size})
	}
}

// mediaHeader sets a download's headers under their canonical names
// (Header.Set would check each name's form) with their values in one
// array (Set allocates a slice per value: a dozen allocations of a small
// download's thirty).
type mediaHeader struct {
	h    http.Header
	vals []string
	mediaValues
}

// mediaValues are the values of a download's headers made of the
// object's numbers and checksums, cut from one string (a string each was
// six allocations of a small download's fifteen).
type mediaValues struct {
	etag, gen, metagen, hash, size string
	// modified is Last-Modified, set by serveWhole (ServeContent sets
	// its own); empty when not whole, or when ServeContent would not set
	// it (a zero or Unix-epoch time).
	modified string
}

func mediaValuesOf(o *engine.Object, whole bool) mediaValues {
	var buf [256]byte
	var ends [6]int
	b := append(o.AppendETag(append(buf[:0], '"')), '"')
	ends[0] = len(b)
	b = strconv.AppendInt(b, o.Generation, 10)
	ends[1] = len(b)
	b = strconv.AppendInt(b, o.Metageneration, 10)
	ends[2] = len(b)
	b = append(append(append(append(b, "crc32c="...), o.CRC32C...), ",md5="...), o.MD5Hash...)
	ends[3] = len(b)
	b = strconv.AppendInt(b, o.Size, 10)
	ends[4] = len(b)
	if whole && !o.Updated.IsZero() && !o.Updated.Equal(time.Unix(0, 0)) {
		b = o.Updated.UTC().AppendFormat(b, http.TimeFormat)
	}
	ends[5] = len(b)
	s := string(b)
	return mediaValues{etag: s[:ends[0]], gen: s[ends[0]:ends[1]], metagen: s[ends[1]:ends[2]],
		hash: s[ends[2]:ends[3]], size: s[ends[3]:ends[4]], modified: s[ends[4]:ends[5]]}
}

// set sets name, which must be in canonical form, to v.
func (m *mediaHeader) set(name, v string) {
	m.vals = append(m.vals, v)
	n := len(m.vals)
	m.h[name] = m.vals[n-1 : n : n]
}

// largeMediaCopySize is the size of the reads and writes that copy a
// large object's bytes to a client: net/http's own copy moves 32 KiB at
// a time, two system calls (a read of the file, a write to the socket)
// and a checksum update each, which cost a large download a third of its
// CPU time.
const largeMediaCopySize = 256 << 10

var (
	smallMediaBufs = sync.Pool{New: func() any { b := make([]byte, smallMediaCopySize); return &b }}
	largeMediaBufs = sync.Pool{New: func() any { b := make([]byte, largeMediaCopySize); return &b }}
)

// smallMediaCopySize is net/http's own piece, all a small object needs.
const smallMediaCopySize = 32 << 10

// mediaWriter is the response as ServeContent sees it: its ReadFrom
// copies an object larger than net/http's 32 KiB pieces in
// largeMediaCopySize ones, and any object through a pooled buffer (io.Copy
// would allocate one per download, of the object's size).
type mediaWriter struct {
	http.ResponseWriter
	size int64 // the object's
}

func (w mediaWriter) ReadFrom(src io.Reader) (int64, error) {
	// Only Write of the response: its own ReadFrom would copy in 32 KiB.
	dst := struct{ io.Writer }{w.ResponseWriter}
	pool := &largeMediaBufs
	if w.size <= smallMediaCopySize {
		pool = &smallMediaBufs
	}
	buf := pool.Get().(*[]byte)
	defer pool.Put(buf)
	return io.CopyBuffer(dst, src, *buf)
}

// gcsUpload serves /upload/storage/v1/b/{bucket}/o: uploadType media,
// multipart and resumable, and the resumable session URL's chunks.
func (h *Handler) gcsUpload(w http.ResponseWriter, r *http.Request, p string) {
	who, err := gcsIdentity(r)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	t, ok := parsePath(p)
	if !ok || !t.HasObjects || t.Object != "" {
		h.gcsFail(w, r, notFound("Not Found"))
		return
	}
	q := query(r.URL.RawQuery)
	if id := q.Get("upload_id"); id != "" {
		h.gcsChunk(w, r, t.Bucket, id)
		return
	}
	if r.Method != http.MethodPost {
		h.gcsFail(w, r, methodNotAllowed(r))
		return
	}
	c, err := conditionsIn(q, r, false)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	name := q.Get("name")
	switch ut := q.Get("uploadType"); ut {
	case "multipart":
		mp, err := decodeMultipart(r.Header.Get("Content-Type"), r.Body)
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		defer mp.release()
		if name == "" {
			name = mp.Resource.Name
		}
		o, err := h.e.Put(who, engine.PutRequest{Bucket: t.Bucket, Name: name, Attrs: mp.Resource.Attrs, MediaType: mp.MediaType,
			Body: mp.Media, Conditions: c, ExpectMD5: mp.Resource.MD5Hash, ExpectCRC32C: mp.Resource.CRC32C})
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		answerObject(w, r, o)
	case "media", "":
		o, err := h.e.Put(who, engine.PutRequest{Bucket: t.Bucket, Name: name, MediaType: r.Header.Get("Content-Type"), Body: r.Body, Conditions: c})
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		answerObject(w, r, o)
	case "resumable":
		res, err := decodeResource(r.Body)
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		if name == "" {
			name = res.Name
		}
		total := int64(-1)
		if v := r.Header.Get("X-Upload-Content-Length"); v != "" {
			if total, err = strconv.ParseInt(v, 10, 64); err != nil || total < 0 {
				h.gcsFail(w, r, badRequest("Invalid X-Upload-Content-Length %q.", v))
				return
			}
		}
		u, err := h.e.StartUpload(who, engine.PutRequest{Bucket: t.Bucket, Name: name, Attrs: res.Attrs,
			MediaType: r.Header.Get("X-Upload-Content-Type"), Conditions: c, ExpectMD5: res.MD5Hash, ExpectCRC32C: res.CRC32C}, total)
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		w.Header().Set("Location", baseURL(r)+"/upload/storage/v1/b/"+url.PathEscape(t.Bucket)+"/o?uploadType=resumable&name="+
			url.QueryEscape(name)+"&upload_id="+u.ID)
		w.Header().Set("X-GUploader-UploadID", u.ID)
		api.JSON(w, http.StatusOK, map[string]any{})
	default:
		h.gcsFail(w, r, badRequest("Invalid uploadType %q.", ut))
	}
}

// gcsChunk serves a resumable session URL: PUT/POST with Content-Range
// (bytes a-b/*, bytes a-b/total, bytes */total, bytes */*), DELETE to
// cancel. An incomplete upload answers 308 with Range (or 200 with
// X-Http-Status-Code-Override: 308 when the client sent
// X-GUploader-No-308: yes, as the Go client does).
func (h *Handler) gcsChunk(w http.ResponseWriter, r *http.Request, bucket, id string) {
	u, err := h.e.Upload(id)
	if err == nil && u.Bucket() != bucket {
		err = notFound("No such upload: %s", id)
	}
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	if r.Method == http.MethodDelete {
		if err := u.Cancel(); err != nil {
			h.gcsFail(w, r, err)
			return
		}
		w.WriteHeader(499)
		return
	}
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		h.gcsFail(w, r, methodNotAllowed(r))
		return
	}
	if o := u.Object(); o != nil {
		answerObject(w, r, o)
		return
	}
	cr, err := parseContentRange(r.Header.Get("Content-Range"))
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	if cr.whole {
		cr.first, cr.total = 0, -1
		cr.hasBytes = true
		cr.last = -1
	}
	if cr.total >= 0 {
		if err := u.SetTotal(cr.total); err != nil {
			h.gcsFail(w, r, err)
			return
		}
	}
	if cr.hasBytes {
		body := io.Reader(r.Body)
		if cr.last >= 0 {
			body = io.LimitReader(r.Body, cr.last-cr.first+1)
		}
		if _, err := u.Append(cr.first, body); err != nil {
			h.gcsFail(w, r, err)
			return
		}
	}
	if crc := hashValue(r.Header.Get("X-Goog-Hash"), "crc32c"); crc != "" {
		u.ExpectCRC32C(crc)
	}
	if cr.toEnd {
		// The request carried the rest of the object: it is complete.
		if u.Total() < 0 {
			if err := u.SetTotal(u.Received()); err != nil {
				h.gcsFail(w, r, err)
				return
			}
		} else if u.Received() != u.Total() {
			h.gcsFail(w, r, badRequest("Content-Range %q ends the upload at %d bytes but its object has %d", r.Header.Get("Content-Range"), u.Received(), u.Total()))
			return
		}
	}
	done := cr.whole || (u.Total() >= 0 && u.Received() == u.Total())
	if done {
		o, err := u.Finalize()
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		answerObject(w, r, o)
		return
	}
	if n := u.Received(); n > 0 {
		w.Header().Set("Range", "bytes=0-"+strconv.FormatInt(n-1, 10))
	}
	w.Header().Set("X-Goog-Upload-Size-Received", strconv.FormatInt(u.Received(), 10))
	if strings.EqualFold(r.Header.Get("X-GUploader-No-308"), "yes") {
		w.Header().Set("X-Http-Status-Code-Override", "308")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusPermanentRedirect)
}

// hashValue picks one algorithm's value from X-Goog-Hash: crc32c=…,md5=….
func hashValue(h, alg string) string {
	for _, part := range strings.Split(h, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok && strings.EqualFold(k, alg) {
			return v
		}
	}
	return ""
}

// contentRange is a parsed resumable Content-Range.
type contentRange struct {
	whole    bool // no header: the body is the whole object
	hasBytes bool
	// toEnd is "bytes a-*/…": the body is the object from byte a to its
	// end, in one request (@google-cloud/storage's single-request
	// resumable upload, Content-Range bytes 0-*/* for a stream of
	// unknown size): the upload completes with it. last is -1.
	toEnd       bool
	first, last int64
	total       int64 // -1 when unknown (*)
}

// parseContentRange reads "bytes a-b/total", "bytes a-b/*", "bytes */total",
// "bytes */*", and "bytes a-*/total" and "bytes a-*/*" (toEnd).
func parseContentRange(v string) (contentRange, error) {
	cr := contentRange{total: -1}
	v = strings.TrimSpace(v)
	if v == "" {
		cr.whole = true
		return cr, nil
	}
	bad := func() (contentRange, error) {
		return contentRange{}, badRequest("Invalid Content-Range %q: expected bytes a-b/total, bytes a-b/*, bytes a-*/total, bytes a-*/*, bytes */total or bytes */*.", v)
	}
	rest, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return bad()
	}
	rng, total, ok := strings.Cut(strings.TrimSpace(rest), "/")
	if !ok {
		return bad()
	}
	if total != "*" {
		n, err := strconv.ParseInt(total, 10, 64)
		if err != nil || n < 0 {
			return bad()
		}
		cr.total = n
	}
	if rng == "*" {
		return cr, nil
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return bad()
	}
	if b == "*" {
		first, err := strconv.ParseInt(a, 10, 64)
		if err != nil || first < 0 || (cr.total >= 0 && first > cr.total) {
			return bad()
		}
		cr.hasBytes, cr.toEnd, cr.first, cr.last = true, true, first, -1
		return cr, nil
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first || (cr.total >= 0 && last >= cr.total) {
		return bad()
	}
	cr.hasBytes, cr.first, cr.last = true, first, last
	return cr, nil
}

// gcsCompose serves POST /b/{bucket}/o/{object}/compose:
// {"sourceObjects":[{"name","generation","objectPreconditions":{"ifGenerationMatch"}}],"destination":{…}}.
func (h *Handler) gcsCompose(w http.ResponseWriter, r *http.Request, who identity.Identity, t target) {
	c, err := conditions(r, false)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	var body struct {
		SourceObjects []struct {
			Name                string `json:"name"`
			Generation          string `json:"generation"`
			ObjectPreconditions *struct {
				IfGenerationMatch string `json:"ifGenerationMatch"`
			} `json:"objectPreconditions"`
		} `json:"sourceObjects"`
		Destination json.RawMessage `json:"destination"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxMetadataBytes)).Decode(&body); err != nil {
		h.gcsFail(w, r, badRequest("The compose request is not valid JSON: %v", err))
		return
	}
	var attrs engine.Attrs
	if len(body.Destination) > 0 {
		res, err := parseResource(body.Destination)
		if err != nil {
			h.gcsFail(w, r, err)
			return
		}
		attrs = res.Attrs
	}
	srcs := make([]engine.ComposeSource, 0, len(body.SourceObjects))
	for i, so := range body.SourceObjects {
		s := engine.ComposeSource{Name: so.Name}
		if so.Generation != "" {
			if s.Generation, err = strconv.ParseInt(so.Generation, 10, 64); err != nil {
				h.gcsFail(w, r, badRequest("Invalid sourceObjects[%d].generation %q.", i, so.Generation))
				return
			}
		}
		if p := so.ObjectPreconditions; p != nil && p.IfGenerationMatch != "" {
			n, err := strconv.ParseInt(p.IfGenerationMatch, 10, 64)
			if err != nil {
				h.gcsFail(w, r, badRequest("Invalid sourceObjects[%d].objectPreconditions.ifGenerationMatch %q.", i, p.IfGenerationMatch))
				return
			}
			s.GenerationMatch = &n
		}
		srcs = append(srcs, s)
	}
	o, err := h.e.Compose(who, t.Bucket, t.Object, srcs, attrs, c)
	if err != nil {
		h.gcsFail(w, r, err)
		return
	}
	answerObject(w, r, o)
}
