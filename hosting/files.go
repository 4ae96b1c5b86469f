package hosting

import (
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// file is a file of the public folder a request resolved to.
type file struct {
	rel  string // the URL path it was found at ("/about.html")
	abs  string // the real path on disk
	size int64
	mod  time.Time
	etag string
}

// lookup finds the file a URL path names in the public folder, or nil.
// Like production, it never reaches outside the folder: ".." segments,
// encoded slashes or backslashes, NUL bytes and symlinks leading out are
// not files; neither are the files "ignore" keeps from being deployed
// (the emulator serves those) nor directories.
func (s *Site) lookup(urlPath string) *file {
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
	rel := strings.TrimPrefix(filepath.Clean(p), "/")
	if rel == "" || rel == "." {
		return nil
	}
	if s.ignored(rel) {
		return nil
	}
	root := s.root()
	if root == "" {
		return nil
	}
	full := filepath.Join(s.cfg.Public, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return nil // a symlink pointing out of public
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	etag, ok := s.e.etags.get(real, fi)
	if !ok {
		return nil
	}
	return &file{rel: p, abs: real, size: fi.Size(), mod: fi.ModTime(), etag: etag}
}

// root returns the public folder with symlinks resolved ("" while it does
// not exist).
func (s *Site) root() string {
	s.realOnce.Lock()
	defer s.realOnce.Unlock()
	if s.realRoot == "" {
		if r, err := filepath.EvalSymlinks(s.cfg.Public); err == nil {
			s.realRoot = r
		}
	}
	return s.realRoot
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
func (s *Site) lookupI18n(r *http.Request, urlPath string) *file {
	for _, p := range s.i18nPaths(r, urlPath) {
		if f := s.lookup(p); f != nil {
			return f
		}
	}
	return s.lookup(urlPath)
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
// path, size and modification time, so a file is hashed once per change.
type etagCache struct {
	mu sync.Mutex
	m  map[string]etagEntry
}

type etagEntry struct {
	size int64
	mod  time.Time
	etag string
}

// maxEtags bounds the cache; past it the cache starts over.
const maxEtags = 50000

func newEtagCache() *etagCache { return &etagCache{m: map[string]etagEntry{}} }

func (c *etagCache) get(path string, fi os.FileInfo) (string, bool) {
	c.mu.Lock()
	e, ok := c.m[path]
	c.mu.Unlock()
	if ok && e.size == fi.Size() && e.mod.Equal(fi.ModTime()) {
		return e.etag, true
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false
	}
	etag := hex.EncodeToString(h.Sum(nil))
	c.mu.Lock()
	if len(c.m) >= maxEtags {
		c.m = map[string]etagEntry{}
	}
	c.m[path] = etagEntry{size: fi.Size(), mod: fi.ModTime(), etag: etag}
	c.mu.Unlock()
	return etag, true
}
