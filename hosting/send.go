package hosting

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

// compressThreshold is the smallest body that is compressed (1 KiB, as
// in production and the emulator).
const compressThreshold = 1024

// applyHeaders sets the custom headers of the matching rules; they are
// applied last, so they override what the file response set.
func applyHeaders(w http.ResponseWriter, hdrs []Header) {
	for _, h := range hdrs {
		w.Header().Set(h.Key, h.Value)
	}
}

// sendFile answers with f. status is 200 for a file or a rewrite target
// and 404 for the 404 page; only a 200 honours If-None-Match /
// If-Modified-Since (304, for every file, as production does) and Range
// (206/416).
func (s *Site) sendFile(w http.ResponseWriter, r *http.Request, f *file, status int, hdrs []Header) int {
	h := w.Header()
	mt := typeOf(f.rel)
	h.Set("Content-Type", mt.ctype)
	h.Set("ETag", f.etag)
	h.Set("Last-Modified", f.mod.UTC().Format(http.TimeFormat))
	if status == http.StatusOK {
		h.Set("Accept-Ranges", "bytes")
		if notModified(r, f) {
			h.Del("Content-Type")
			applyHeaders(w, hdrs)
			w.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified
		}
	}
	if mt.compressible {
		h.Add("Vary", "Accept-Encoding")
	}
	if status == http.StatusOK && r.Header.Get("Range") != "" && rangeApplies(r, f) {
		// A multi-range or malformed Range gets the whole file.
		if start, end, ok, satisfiable := parseRange(r.Header.Get("Range"), f.size); ok {
			return sendRange(w, f, start, end, satisfiable, hdrs)
		}
	}
	enc := ""
	if mt.compressible && f.size >= compressThreshold && r.Method != http.MethodHead {
		enc = negotiateEncoding(r.Header.Get("Accept-Encoding"))
	}
	if enc != "" {
		if body, ok := s.e.gz.get(f, enc); ok {
			h.Set("Content-Encoding", enc)
			h.Set("Content-Length", strconv.Itoa(len(body)))
			applyHeaders(w, hdrs)
			w.WriteHeader(status)
			_, _ = w.Write(body)
			return status
		}
	}
	if enc != "" {
		h.Set("Content-Encoding", enc)
		applyHeaders(w, hdrs)
		w.WriteHeader(status)
		cw := newCompressor(w, enc)
		_, _ = io.Copy(cw, f.section(0, f.size))
		_ = cw.Close()
		return status
	}
	h.Set("Content-Length", strconv.FormatInt(f.size, 10))
	applyHeaders(w, hdrs)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		f.copyTo(w, 0, f.size)
	}
	return status
}

// plain writes a short text/plain answer.
func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// notModified reports whether the request's validators match: a listed
// ETag (quoted or not, weak or strong) or, without If-None-Match, an
// If-Modified-Since not before the file's time.
func notModified(r *http.Request, f *file) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			t = strings.TrimPrefix(t, "W/")
			t = strings.Trim(t, `"`)
			if t == "*" || t == f.etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil {
			return !f.mod.Truncate(time.Second).After(t)
		}
	}
	return false
}

// rangeApplies checks If-Range: a Range is honoured only when If-Range is
// absent or names the file's current ETag or date.
func rangeApplies(r *http.Request, f *file) bool {
	if r.Method != http.MethodGet {
		return false
	}
	ir := r.Header.Get("If-Range")
	if ir == "" {
		return true
	}
	if t, err := http.ParseTime(ir); err == nil {
		return f.mod.Truncate(time.Second).Equal(t)
	}
	return strings.Trim(strings.TrimPrefix(ir, "W/"), `"`) == f.etag && !strings.HasPrefix(ir, "W/")
}

// sendRange answers a single byte range with 206, an unsatisfiable one
// with 416.
func sendRange(w http.ResponseWriter, f *file, start, end int64, satisfiable bool, hdrs []Header) int {
	h := w.Header()
	if !satisfiable {
		h.Del("Vary")
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", f.size))
		h.Set("Content-Type", "text/plain; charset=utf-8")
		applyHeaders(w, hdrs)
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		_, _ = io.WriteString(w, "Requested range not satisfiable\n")
		return http.StatusRequestedRangeNotSatisfiable
	}
	h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, f.size))
	h.Set("Content-Length", strconv.FormatInt(end-start+1, 10))
	applyHeaders(w, hdrs)
	w.WriteHeader(http.StatusPartialContent)
	f.copyTo(w, start, end-start+1)
	return http.StatusPartialContent
}

// parseRange reads a "bytes=" Range with one range. ok is false for a
// header to ignore (another unit, several ranges, bad syntax).
func parseRange(v string, size int64) (start, end int64, ok, satisfiable bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, false
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "" && b == "":
		return 0, 0, false, false
	case a == "": // suffix: the last b bytes
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, false
		}
		if n == 0 || size == 0 {
			return 0, 0, true, false
		}
		if n > size {
			n = size
		}
		return size - n, size - 1, true, true
	default:
		s, err := strconv.ParseInt(a, 10, 64)
		if err != nil || s < 0 {
			return 0, 0, false, false
		}
		e := size - 1
		if b != "" {
			e, err = strconv.ParseInt(b, 10, 64)
			if err != nil || e < s {
				return 0, 0, false, false
			}
			if e > size-1 {
				e = size - 1
			}
		}
		if s >= size {
			return 0, 0, true, false
		}
		return s, e, true, true
	}
}

// negotiateEncoding picks br, gzip or deflate from Accept-Encoding by
// q-value, preferring brotli then gzip on a tie; "" is identity.
func negotiateEncoding(ae string) string {
	if ae == "" {
		return ""
	}
	best, bestQ, bestRank := "", 0.0, 99
	rank := map[string]int{"br": 0, "gzip": 1, "deflate": 2}
	star := -1.0
	seen := map[string]bool{}
	for _, part := range strings.Split(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if name == "*" {
			star = q
			continue
		}
		r, ok := rank[name]
		if !ok {
			continue
		}
		seen[name] = true
		if q > 0 && (q > bestQ || (q == bestQ && r < bestRank)) {
			best, bestQ, bestRank = name, q, r
		}
	}
	if star > 0 {
		for name, r := range rank {
			if !seen[name] && (star > bestQ || (star == bestQ && r < bestRank)) {
				best, bestQ, bestRank = name, star, r
			}
		}
	}
	return best
}

func newCompressor(w io.Writer, enc string) io.WriteCloser {
	switch enc {
	case "br":
		return brotli.NewWriterLevel(w, 4)
	case "gzip":
		return gzip.NewWriter(w)
	default:
		return zlib.NewWriter(w)
	}
}

// compressedCache keeps compressed bodies of small files by path, ETag
// and encoding, within a byte budget, so a hot file is compressed once.
type compressedCache struct {
	mu    sync.Mutex
	m     map[string][]byte
	bytes int
}

const (
	maxCachedCompressed = 4 << 20  // larger files are compressed as they stream
	compressedBudget    = 64 << 20 // past it the cache starts over
)

func newCompressedCache() *compressedCache { return &compressedCache{m: map[string][]byte{}} }

func (c *compressedCache) get(f *file, enc string) ([]byte, bool) {
	if f.size > maxCachedCompressed {
		return nil, false
	}
	key := f.key + "\x00" + f.etag + "\x00" + enc
	c.mu.Lock()
	body, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return body, true
	}
	raw := f.data
	if raw == nil {
		raw = make([]byte, f.size)
		if _, err := f.fd.ReadAt(raw, 0); err != nil {
			return nil, false
		}
	}
	var buf bytes.Buffer
	cw := newCompressor(&buf, enc)
	_, _ = cw.Write(raw)
	if err := cw.Close(); err != nil {
		return nil, false
	}
	body = buf.Bytes()
	c.mu.Lock()
	if c.bytes+len(body) > compressedBudget {
		c.m, c.bytes = map[string][]byte{}, 0
	}
	c.m[key] = body
	c.bytes += len(body)
	c.mu.Unlock()
	return body, true
}
