package studio

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// dist is the built UI (studio/web, bundled with esbuild: `go generate
// ./studio` or `npm run build` in studio/web). It is committed so that
// `go run ./cmd/pyric` needs no Node; TestBundleFresh fails when it is
// stale.
//
//go:embed dist
var dist embed.FS

//go:generate sh -c "cd web && npm run build"

// ui serves the single-page app: a file of dist, or index.html for every
// page route (/firestore, /traffic/evt-12, ...).
func (s *Studio) ui(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		fail(w, http.StatusNotFound, "no API endpoint "+r.URL.Path)
		return
	}
	sub, _ := fs.Sub(dist, "dist")
	p := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if p != "" && p != "index.html" {
		if f, err := sub.Open(p); err == nil {
			st, _ := f.Stat()
			f.Close()
			if st != nil && !st.IsDir() {
				w.Header().Set("Cache-Control", "no-cache")
				http.ServeFileFS(w, r, sub, p)
				return
			}
		}
		if strings.Contains(path.Base(p), ".") {
			http.NotFound(w, r)
			return
		}
	}
	b, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		http.Error(w, "the Studio UI is not built (studio/dist/index.html missing)", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	_, _ = w.Write(b)
}
