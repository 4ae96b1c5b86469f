package hosting

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// file is a file of the public folder a request resolved to, open.
type file struct {
	rel  string   // the URL path it was found at ("/about.html")
	data []byte   // a small file's content, from the cache; else fd is open
	fd   *os.File // closed when the request ends (reqFiles)
	key  string   // identifies the file for the caches
	size int64
	mod  time.Time
	etag string
}

// section reads n bytes of the file from off.
func (f *file) section(off, n int64) io.Reader {
	if f.data != nil {
		return bytes.NewReader(f.data[off : off+n])
	}
	return io.NewSectionReader(f.fd, off, n)
}

// copyTo writes n bytes of the file from off to w: from memory, or from
// the *os.File itself so the kernel copies it (sendfile).
func (f *file) copyTo(w io.Writer, off, n int64) {
	if f.data != nil {
		_, _ = w.Write(f.data[off : off+n])
		return
	}
	if _, err := f.fd.Seek(off, io.SeekStart); err == nil {
		_, _ = io.Copy(w, io.LimitReader(f.fd, n))
	}
}

// reqFiles are the files one request opened, closed when it ends.
type reqFiles struct {
	open        []*os.File
	rootChecked bool // whether the public folder was checked for a replacement
}

func (q *reqFiles) add(f *os.File) { q.open = append(q.open, f) }

func (q *reqFiles) close() {
	for _, f := range q.open {
		_ = f.Close()
	}
}

// lookup finds and opens the file a URL path names in the public folder,
// or returns nil. Like production, it never reaches outside the folder:
// ".." segments, encoded slashes or backslashes, NUL bytes and symlinks
// leading out (os.Root refuses them) are not files; neither are the files
// "ignore" keeps from being deployed (the emulator serves those),
// directories, or anything but a regular file.
func (s *Site) lookup(q *reqFiles, urlPath string) *file {
	if s.cfg.Public == "" {
		return nil
	}
	p, err := decodeURI(urlPath)
	if err != nil || !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return nil
	}
	lower := strings.ToLower(p)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return nil
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return nil
		}
	}
	rel := strings.TrimPrefix(path.Clean(p), "/")
	if rel == "" || rel == "." || s.ignored(rel) {
		return nil
	}
	key := s.cfg.Public + "/" + rel
	root, err := s.root(false)
	if err != nil {
		return nil
	}
	fi, err := root.Stat(rel)
	if err != nil && errors.Is(err, fs.ErrNotExist) && !q.rootChecked {
		// The folder may have been replaced (a build deleting and
		// recreating dist/): checked once per request that misses.
		q.rootChecked = true
		if s.rootReplaced(root) {
			if root, err = s.root(true); err != nil {
				return nil
			}
			fi, err = root.Stat(rel)
		}
	}
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	// A small file unchanged since it was cached costs that one stat.
	if e, ok := s.e.etags.cached(key, fi); ok && e.data != nil {
		return &file{rel: p, data: e.data, key: key, size: fi.Size(), mod: fi.ModTime(), etag: e.etag}
	}
	fd, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	q.add(fd)
	if fi, err = fd.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	e, ok := s.e.etags.get(key, fd, fi)
	if !ok {
		return nil
	}
	return &file{rel: p, data: e.data, fd: fd, key: key, size: fi.Size(), mod: fi.ModTime(), etag: e.etag}
}

// root returns the open public folder, opening it when needed (or when
// reopen says the one held is stale).
func (s *Site) root(reopen bool) (*os.Root, error) {
	s.rootMu.Lock()
	defer s.rootMu.Unlock()
	if s.rootDir != nil && !reopen {
		return s.rootDir, nil
	}
	r, err := os.OpenRoot(s.cfg.Public)
	if err != nil {
		return nil, err
	}
	if s.rootDir != nil {
		// Requests in flight may still open files through the one
		// replaced: it is closed at the next replacement.
		if s.retired != nil {
			_ = s.retired.Close()
		}
		s.retired = s.rootDir
	}
	s.rootDir = r
	return r, nil
}

// rootReplaced reports whether the public folder on disk is no longer the
// directory held open.
func (s *Site) rootReplaced(r *os.Root) bool {
	held, err1 := r.Stat(".")
	now, err2 := os.Stat(s.cfg.Public)
	return err1 != nil || err2 != nil || !os.SameFile(held, now)
}

// ignored reports whether a path (relative to public, "/"-separated)
// or one of its folders matches an "ignore" glob.
func (s *Site) ignored(rel string) bool {
	if len(s.cfg.ignore) == 0 {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		for _, g := range s.cfg.ignore {
			if g.match(p) {
				return true
			}
		}
	}
	return false
}

// lookupI18n finds a URL path trying the i18n folders first, as
// production does: language_country, ALL_country, then language_ALL and
// language for each accepted language, then the path itself.
func (s *Site) lookupI18n(q *reqFiles, r *http.Request, urlPath string) *file {
	for _, p := range s.i18nPaths(r, urlPath) {
		if f := s.lookup(q, p); f != nil {
			return f
		}
	}
	return s.lookup(q, urlPath)
}

func (s *Site) i18nPaths(r *http.Request, p string) []string {
	if s.cfg.I18nRoot == "" {
		return nil
	}
	country := countryOf(r)
	langs := languagesOf(r)
	var out []string
	join := func(folder string) string {
		return collapseSlashes(s.cfg.I18nRoot + "/" + folder + "/" + p)
	}
	if country != "" {
		for _, l := range langs {
			out = append(out, join(l+"_"+country))
		}
		out = append(out, join("ALL_"+country))
	}
	for _, l := range langs {
		out = append(out, join(l+"_ALL"), join(l))
	}
	return out
}

// countryOf is the firebase-country-override cookie, else the
// x-country-code header (lowercased, as production's folder names are).
func countryOf(r *http.Request) string {
	if c, err := r.Cookie("firebase-country-override"); err == nil && c.Value != "" {
		return strings.ToLower(c.Value)
	}
	return strings.ToLower(strings.TrimSpace(r.Header.Get("x-country-code")))
}

// languagesOf is the firebase-language-override cookie's list, else the
// primary languages of Accept-Language by preference (q-values honoured;
// the emulator ignores them and so misreads "fr;q=0.8").
func languagesOf(r *http.Request) []string {
	if c, err := r.Cookie("firebase-language-override"); err == nil && c.Value != "" {
		return strings.Split(strings.ToLower(c.Value), ",")
	}
	al := r.Header.Get("Accept-Language")
	if al == "" {
		return nil
	}
	type lq struct {
		lang string
		q    float64
		i    int
	}
	var ls []lq
	seen := map[string]bool{}
	for i, part := range strings.Split(al, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if lang == "" || lang == "*" || q <= 0 || seen[lang] {
			continue
		}
		seen[lang] = true
		ls = append(ls, lq{lang, q, i})
		if len(ls) >= 16 {
			break
		}
	}
	sort.SliceStable(ls, func(a, b int) bool { return ls[a].q > ls[b].q })
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.lang
	}
	return out
}

func collapseSlashes(p string) string {
	if !strings.Contains(p, "//") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// etagCache remembers each file's MD5 (the emulator's unquoted ETag) by
// path, size and modification time, so a file is hashed once per change,
// and the content of small files, so serving one costs a stat.
type etagCache struct {
	mu    sync.Mutex
	m     map[string]etagEntry
	bytes int
}

type etagEntry struct {
	size int64
	mod  time.Time
	etag string
	data []byte // the content of a file up to maxCachedFile; else nil
}

const (
	maxEtags      = 50000    // past it the cache starts over
	maxCachedFile = 64 << 10 // larger files are read from disk each time
	contentBudget = 32 << 20 // bytes of content kept; past it the cache starts over
)

func newEtagCache() *etagCache { return &etagCache{m: map[string]etagEntry{}} }

// cached returns the entry of a file if it is unchanged.
func (c *etagCache) cached(key string, fi os.FileInfo) (etagEntry, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	return e, ok && e.size == fi.Size() && e.mod.Equal(fi.ModTime())
}

// get returns the entry of an open file, hashing (and for a small file
// keeping) its content when it changed.
func (c *etagCache) get(key string, fd *os.File, fi os.FileInfo) (etagEntry, bool) {
	if e, ok := c.cached(key, fi); ok {
		return e, true
	}
	e := etagEntry{size: fi.Size(), mod: fi.ModTime()}
	h := md5.New()
	if fi.Size() <= maxCachedFile {
		data := make([]byte, fi.Size())
		if n, err := fd.ReadAt(data, 0); int64(n) != fi.Size() && err != nil {
			return etagEntry{}, false
		}
		h.Write(data)
		e.data = data
	} else if _, err := io.Copy(h, io.NewSectionReader(fd, 0, fi.Size())); err != nil {
		return etagEntry{}, false
	}
	e.etag = hex.EncodeToString(h.Sum(nil))
	c.mu.Lock()
	if len(c.m) >= maxEtags || c.bytes+len(e.data) > contentBudget {
		c.m, c.bytes = map[string]etagEntry{}, 0
	}
	if old, ok := c.m[key]; ok {
		c.bytes -= len(old.data)
	}
	c.m[key] = e
	c.bytes += len(e.data)
	c.mu.Unlock()
	return e, true
}
