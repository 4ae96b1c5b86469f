package studio

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
)

// The Storage page's endpoints: buckets, one "folder" of a bucket at a
// time (prefixes rolled up at "/", objects with their metadata), an
// object's bytes for preview and download, upload, metadata patch and
// delete. Admin by default; ?as=uid (rules apply) in the app lens.

// maxUpload bounds an upload through the Studio (the storage endpoint
// itself takes any size).
const maxUpload = 64 << 20

func (s *Studio) gcs(w http.ResponseWriter) (*storage.Engine, bool) {
	e, ok := sandbox.Lookup[*storage.Engine](s.sb)
	if !ok {
		fail(w, http.StatusNotFound, "Cloud Storage is not running in this sandbox")
		return nil, false
	}
	return e, true
}

// gcsError writes an engine error with the status production answers it
// with and its reason (forbidden, notFound, ...).
func gcsError(w http.ResponseWriter, err error) { gcsDenied(w, err, nil) }

// gcsDenied is gcsError for a call that may have been denied: the
// denial links its event (the message already says why).
func gcsDenied(w http.ResponseWriter, err error, d *denial) {
	a := apiError{Error: err.Error(), Code: storage.Reason(err)}
	if d != nil && storage.HTTPStatus(err) == http.StatusForbidden {
		a.Details = map[string]any{"event": d.Event}
	}
	writeJSON(w, storage.HTTPStatus(err), a)
}

func (s *Studio) gcsBuckets(w http.ResponseWriter, r *http.Request) {
	e, ok := s.gcs(w)
	if !ok {
		return
	}
	def := e.DefaultBuckets()
	writeJSON(w, http.StatusOK, map[string]any{"buckets": e.Buckets(), "default": def[len(def)-1]})
}

// objectRef reads ?bucket= and ?name=.
func objectRef(w http.ResponseWriter, r *http.Request, needName bool) (bkt, name string, ok bool) {
	q := r.URL.Query()
	bkt, name = q.Get("bucket"), q.Get("name")
	if err := storage.ValidateBucket(bkt); err != nil {
		gcsError(w, err)
		return "", "", false
	}
	if needName {
		if err := storage.ValidateName(name); err != nil {
			gcsError(w, err)
			return "", "", false
		}
	}
	return bkt, name, true
}

// objectStart reads what an object handler starts from: the engine, the
// bucket and object (?bucket=, ?name=, the name when needName) and the
// lens the Studio acts in; when it can't, it has answered the error.
func (s *Studio) objectStart(w http.ResponseWriter, r *http.Request, needName bool) (e *storage.Engine, bkt, name string, who identity.Identity, ok bool) {
	if e, ok = s.gcs(w); !ok {
		return
	}
	if bkt, name, ok = objectRef(w, r, needName); !ok {
		return
	}
	who, err := lens(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return e, bkt, name, who, false
	}
	return e, bkt, name, who, true
}

// gcsList answers one folder: GET /api/storage/objects?bucket=&prefix=
// &pageToken=&limit=N — the sub-prefixes and the objects directly in it.
func (s *Studio) gcsList(w http.ResponseWriter, r *http.Request) {
	e, bkt, _, who, ok := s.objectStart(w, r, false)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit := 200
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > storage.MaxListResults {
			fail(w, http.StatusBadRequest, "limit must be an integer from 1 to "+strconv.Itoa(storage.MaxListResults)+", not "+quote(v))
			return
		}
		limit = n
	}
	before := s.sb.Events().Seq()
	res, err := e.List(who, storage.ListRequest{Bucket: bkt, Prefix: q.Get("prefix"), Delimiter: "/", MaxResults: limit,
		PageToken: q.Get("pageToken"), IncludeTrailingDelimiter: true})
	if err != nil {
		gcsDenied(w, err, s.denialSince(before, storage.Service))
		return
	}
	items := res.Items
	if items == nil {
		items = []*storage.Object{}
	}
	prefixes := res.Prefixes
	if prefixes == nil {
		prefixes = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"bucket": bkt, "prefix": q.Get("prefix"), "prefixes": prefixes, "items": items, "nextPageToken": res.NextPageToken})
}

// gcsStat answers an object's metadata: GET /api/storage/object.
func (s *Studio) gcsStat(w http.ResponseWriter, r *http.Request) {
	e, bkt, name, who, ok := s.objectStart(w, r, true)
	if !ok {
		return
	}
	before := s.sb.Events().Seq()
	o, err := e.Stat(who, storage.ReadRequest{Bucket: bkt, Name: name})
	if err != nil {
		gcsDenied(w, err, s.denialSince(before, storage.Service))
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// gcsDownload answers an object's bytes: GET /api/storage/media
// (?download=1 as an attachment; ?limit=N only the first N bytes, for a
// preview). The bytes are the user's, served on the
// Studio's origin, so they are sandboxed: no script in an uploaded HTML
// or SVG file runs with the Studio's authority.
func (s *Studio) gcsDownload(w http.ResponseWriter, r *http.Request) {
	e, bkt, name, who, ok := s.objectStart(w, r, true)
	if !ok {
		return
	}
	o, rd, err := e.Open(who, storage.ReadRequest{Bucket: bkt, Name: name})
	if err != nil {
		gcsError(w, err)
		return
	}
	defer rd.Close()
	size := o.Size
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			fail(w, http.StatusBadRequest, "limit must be a byte count, not "+quote(v))
			return
		}
		size = min(size, n)
	}
	h := w.Header()
	ct := o.ContentType
	if ct == "" {
		ct = storage.DefaultContentType
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'")
	h.Set("Cache-Control", "no-store")
	if r.URL.Query().Get("download") != "" {
		base := name[strings.LastIndexByte(name, '/')+1:]
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": base}))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, io.NewSectionReader(rd, 0, size))
}

// gcsUpload stores the body as the object: POST /api/storage/object
// ?bucket=&name= with the bytes' Content-Type, minting a download token
// as Firebase uploads do.
func (s *Studio) gcsUpload(w http.ResponseWriter, r *http.Request) {
	e, bkt, name, who, ok := s.objectStart(w, r, true)
	if !ok {
		return
	}
	if r.ContentLength > maxUpload {
		fail(w, http.StatusRequestEntityTooLarge, "an upload through the Studio is at most 64 MiB; use the storage endpoint for larger objects")
		return
	}
	body := http.MaxBytesReader(w, r.Body, maxUpload)
	before := s.sb.Events().Seq()
	o, err := e.Put(who, storage.PutRequest{Bucket: bkt, Name: name, MediaType: r.Header.Get("Content-Type"), Body: body, NewToken: true})
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			fail(w, http.StatusRequestEntityTooLarge, "an upload through the Studio is at most 64 MiB; use the storage endpoint for larger objects")
			return
		}
		gcsDenied(w, err, s.denialSince(before, storage.Service))
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// metadataPatch is the body of PATCH /api/storage/object: a nil field is
// left as it is, "" clears it; in metadata a null value deletes the key.
type metadataPatch struct {
	ContentType        *string            `json:"contentType"`
	ContentEncoding    *string            `json:"contentEncoding"`
	ContentDisposition *string            `json:"contentDisposition"`
	ContentLanguage    *string            `json:"contentLanguage"`
	CacheControl       *string            `json:"cacheControl"`
	Metadata           map[string]*string `json:"metadata"`
}

func (s *Studio) gcsPatch(w http.ResponseWriter, r *http.Request) {
	e, bkt, name, who, ok := s.objectStart(w, r, true)
	if !ok {
		return
	}
	var p metadataPatch
	if !readJSON(w, r, &p) {
		return
	}
	before := s.sb.Events().Seq()
	o, err := e.Update(who, bkt, name, storage.Attrs{ContentType: p.ContentType, ContentEncoding: p.ContentEncoding,
		ContentDisposition: p.ContentDisposition, ContentLanguage: p.ContentLanguage, CacheControl: p.CacheControl,
		Metadata: p.Metadata}, storage.Conditions{})
	if err != nil {
		gcsDenied(w, err, s.denialSince(before, storage.Service))
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (s *Studio) gcsDelete(w http.ResponseWriter, r *http.Request) {
	e, bkt, name, who, ok := s.objectStart(w, r, true)
	if !ok {
		return
	}
	before := s.sb.Events().Seq()
	if err := e.Delete(who, bkt, name, storage.Conditions{}); err != nil {
		gcsDenied(w, err, s.denialSince(before, storage.Service))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"bucket": bkt, "name": name, "deleted": true})
}
