package storageserver

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pyric/pyric/identity"
	engine "github.com/pyric/pyric/storage"
)

// chunkGranularity is the resumable chunk size unit (256 KiB).
const chunkGranularity = 256 << 10

// firebase serves the Firebase v0 API; p is /b/….
func (h *Handler) firebase(w http.ResponseWriter, r *http.Request, p string) {
	who, err := firebaseIdentity(r)
	if err != nil {
		h.firebaseFail(w, r, err)
		return
	}
	t, ok := parsePath(p)
	if !ok || !t.HasObjects || t.Action != "" {
		h.firebaseFail(w, r, notFound("Not Found."))
		return
	}
	q := query(r.URL.RawQuery)
	if t.Object == "" {
		switch r.Method {
		case http.MethodGet:
			h.firebaseList(w, r, who, t.Bucket)
		case http.MethodPost:
			if id := q.Get("upload_id"); id != "" {
				h.firebaseChunk(w, r, t.Bucket, id)
				return
			}
			h.firebaseUpload(w, r, who, t.Bucket, q.Get("name"))
		default:
			h.firebaseFail(w, r, methodNotAllowed(r))
		}
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		rr := engine.ReadRequest{Bucket: t.Bucket, Name: t.Object, Token: q.Get("token")}
		if q.Get("alt") == "media" {
			o, rd, err := h.e.Open(who, rr)
			if err != nil {
				h.firebaseFail(w, r, err)
				return
			}
			defer rd.Close()
			serveMedia(w, r, o, rd)
			return
		}
		rr.EnsureToken = true
		o, err := h.e.Stat(who, rr)
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		api.JSON(w, http.StatusOK, firebaseMetadata(o))
	case http.MethodPatch:
		res, err := decodeResource(r.Body)
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		o, err := h.e.Update(who, t.Bucket, t.Object, res.Attrs, engine.Conditions{})
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		api.JSON(w, http.StatusOK, firebaseMetadata(o))
	case http.MethodDelete:
		if err := h.e.Delete(who, t.Bucket, t.Object, engine.Conditions{}); err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		// The emulator's token management: ?create_token=true mints one,
		// ?delete_token=<t> revokes one.
		var o *engine.Object
		var err error
		switch {
		case q.Get("create_token") == "true":
			o, err = h.e.AddToken(who, t.Bucket, t.Object)
		case q.Get("delete_token") != "":
			o, err = h.e.RevokeToken(who, t.Bucket, t.Object, q.Get("delete_token"))
		default:
			h.firebaseUpload(w, r, who, t.Bucket, t.Object)
			return
		}
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		api.JSON(w, http.StatusOK, firebaseMetadata(o))
	default:
		h.firebaseFail(w, r, methodNotAllowed(r))
	}
}

func (h *Handler) firebaseList(w http.ResponseWriter, r *http.Request, who identity.Identity, bucket string) {
	q := query(r.URL.RawQuery)
	req := engine.ListRequest{Bucket: bucket, Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), PageToken: q.Get("pageToken"), SkipPrefixObject: true, Shared: true}
	if m := q.Get("maxResults"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n < 1 || n > engine.MaxListResults {
			h.firebaseFail(w, r, badRequest("Invalid maxResults %q: it must be an integer from 1 to %d.", m, engine.MaxListResults))
			return
		}
		req.MaxResults = n
	}
	res, err := h.e.List(who, req)
	if err != nil {
		h.firebaseFail(w, r, err)
		return
	}
	items := make([]map[string]string, 0, len(res.Items))
	for _, o := range res.Items {
		items = append(items, map[string]string{"name": o.Name, "bucket": o.Bucket})
	}
	out := map[string]any{"prefixes": nonNil(res.Prefixes), "items": items}
	if res.NextPageToken != "" {
		out["nextPageToken"] = res.NextPageToken
	}
	api.JSON(w, http.StatusOK, out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// firebaseUpload serves POST /v0/b/{bucket}/o?name=…: multipart, the start
// of a resumable upload, or the raw bytes.
func (h *Handler) firebaseUpload(w http.ResponseWriter, r *http.Request, who identity.Identity, bucket, name string) {
	switch strings.ToLower(r.Header.Get("X-Goog-Upload-Protocol")) {
	case "multipart":
		mp, err := decodeMultipart(r.Header.Get("Content-Type"), r.Body)
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		defer mp.release()
		if name == "" {
			name = mp.Resource.Name
		}
		o, err := h.e.Put(who, engine.PutRequest{Bucket: bucket, Name: name, Attrs: mp.Resource.Attrs, MediaType: mp.MediaType,
			Body: mp.Media, NewToken: true, ExpectMD5: mp.Resource.MD5Hash, ExpectCRC32C: mp.Resource.CRC32C})
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		api.JSON(w, http.StatusOK, firebaseMetadata(o))
	case "resumable":
		if cmd := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Goog-Upload-Command"))); cmd != "start" {
			h.firebaseFail(w, r, badRequest("A resumable upload starts with X-Goog-Upload-Command: start, not %q.", cmd))
			return
		}
		res, err := decodeResource(r.Body)
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		if name == "" {
			name = res.Name
		}
		total := int64(-1)
		if v := r.Header.Get("X-Goog-Upload-Header-Content-Length"); v != "" {
			if total, err = strconv.ParseInt(v, 10, 64); err != nil || total < 0 {
				h.firebaseFail(w, r, badRequest("Invalid X-Goog-Upload-Header-Content-Length %q.", v))
				return
			}
		}
		u, err := h.e.StartUpload(who, engine.PutRequest{Bucket: bucket, Name: name, Attrs: res.Attrs,
			MediaType: r.Header.Get("X-Goog-Upload-Header-Content-Type"), NewToken: true}, total)
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		loc := baseURL(r) + "/v0/b/" + url.PathEscape(bucket) + "/o?name=" + url.QueryEscape(name) +
			"&upload_id=" + u.ID + "&upload_protocol=resumable"
		w.Header().Set("X-Goog-Upload-URL", loc)
		w.Header().Set("X-Goog-Upload-Control-URL", loc)
		w.Header().Set("X-Goog-Upload-Status", "active")
		w.Header().Set("X-Goog-Upload-Chunk-Granularity", strconv.Itoa(chunkGranularity))
		w.WriteHeader(http.StatusOK)
	default:
		o, err := h.e.Put(who, engine.PutRequest{Bucket: bucket, Name: name, MediaType: r.Header.Get("Content-Type"), Body: r.Body, NewToken: true})
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		api.JSON(w, http.StatusOK, firebaseMetadata(o))
	}
}

// firebaseChunk serves the resumable protocol's commands on a session
// URL: query, cancel, upload, finalize ("upload, finalize" together).
func (h *Handler) firebaseChunk(w http.ResponseWriter, r *http.Request, bucket, id string) {
	u, err := h.e.Upload(id)
	if err == nil && u.Bucket() != bucket {
		err = notFound("No such upload: %s", id)
	}
	if err != nil {
		h.firebaseFail(w, r, err)
		return
	}
	cmds, err := parseUploadCommand(r.Header.Get("X-Goog-Upload-Command"))
	if err != nil {
		h.firebaseFail(w, r, err)
		return
	}
	hd := w.Header()
	status := func() {
		hd.Set("X-Goog-Upload-Status", u.State())
		hd.Set("X-Goog-Upload-Size-Received", strconv.FormatInt(u.Received(), 10))
	}
	if cmds.query {
		status()
		w.WriteHeader(http.StatusOK)
		return
	}
	if cmds.cancel {
		if err := u.Cancel(); err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		hd.Set("X-Goog-Upload-Status", "cancelled")
		w.WriteHeader(http.StatusOK)
		return
	}
	if cmds.upload {
		v := r.Header.Get("X-Goog-Upload-Offset")
		off, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			h.firebaseFail(w, r, badRequest("An upload command needs X-Goog-Upload-Offset, not %q.", v))
			return
		}
		if _, err := u.Append(off, r.Body); err != nil {
			status()
			h.firebaseFail(w, r, err)
			return
		}
	}
	if cmds.finalize {
		o, err := u.Finalize()
		if err != nil {
			h.firebaseFail(w, r, err)
			return
		}
		hd.Set("X-Goog-Upload-Status", "final")
		api.JSON(w, http.StatusOK, firebaseMetadata(o))
		return
	}
	status()
	w.WriteHeader(http.StatusOK)
}

// uploadCommand is a parsed X-Goog-Upload-Command.
type uploadCommand struct {
	query, cancel, upload, finalize bool
}

// parseUploadCommand reads "upload", "upload, finalize", "finalize",
// "query" or "cancel".
func parseUploadCommand(v string) (uploadCommand, error) {
	var c uploadCommand
	n := 0
	for _, part := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(part)) {
		case "query":
			c.query = true
		case "cancel":
			c.cancel = true
		case "upload":
			c.upload = true
		case "finalize":
			c.finalize = true
		case "":
			continue
		default:
			return c, badRequest("Unknown X-Goog-Upload-Command %q.", strings.TrimSpace(part))
		}
		n++
	}
	if n == 0 {
		return c, badRequest("A resumable upload request needs X-Goog-Upload-Command.")
	}
	if (c.query || c.cancel) && n > 1 {
		return c, badRequest("X-Goog-Upload-Command %q combines commands that cannot go together.", v)
	}
	return c, nil
}

// baseURL is where this server was reached, for session and media links.
func baseURL(r *http.Request) string {
	return originOf(r).String()
}
