package cli

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/server/httpjson"
)

// hostingOptions are the backend's Hosting options for o (none without a
// "hosting" section).
func hostingOptions(o *serveOptions) backend.HostingOptions {
	if o.hosting == nil {
		return backend.HostingOptions{}
	}
	return *o.hosting
}

// printHostingSites adds one banner line per Hosting site.
func printHostingSites(w io.Writer, he *backend.HostingEndpoint) {
	if he == nil {
		return
	}
	for _, s := range he.Sites {
		public := s.Public
		if public == "" {
			public = "(no public folder)"
		} else if fi, err := os.Stat(public); err != nil || !fi.IsDir() {
			public += " (not there yet: files are served once it is built)"
		}
		fmt.Fprintf(w, "  %-10s %-22s site %q from %s\n", "", s.Addr, s.Name, public)
	}
}

// hostingJSONKeys adds "hosting:<site>" for every site to --json's line
// ("hosting" is the first site's, like the other services).
func hostingJSONKeys(line map[string]string, he *backend.HostingEndpoint) {
	if he == nil {
		return
	}
	for _, s := range he.Sites {
		line["hosting:"+s.Name] = s.Addr
	}
}

// hostingHandler answers GET /__pyric/hosting on the Studio port: the
// sites with their URL and public folder, and the last requests each
// answered with the rule that handled it.
func hostingHandler(he *backend.HostingEndpoint) http.Handler {
	type site struct {
		Name   string `json:"name"`
		URL    string `json:"url"`
		Public string `json:"public,omitempty"`
	}
	type request struct {
		At         time.Time `json:"at"`
		Site       string    `json:"site"`
		Method     string    `json:"method"`
		Path       string    `json:"path"`
		Status     int       `json:"status"`
		Rule       string    `json:"rule"`
		Headers    []string  `json:"headers,omitempty"`
		File       string    `json:"file,omitempty"`
		DurationMs float64   `json:"durationMs"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		out := struct {
			Sites    []site    `json:"sites"`
			Requests []request `json:"requests"`
		}{Sites: []site{}, Requests: []request{}}
		for _, s := range he.Sites {
			out.Sites = append(out.Sites, site{Name: s.Name, URL: "http://" + s.Addr, Public: s.Public})
		}
		for _, rec := range he.Engine.Requests() {
			out.Requests = append(out.Requests, request{At: rec.At, Site: rec.Site, Method: rec.Method, Path: rec.Path, Status: rec.Status,
				Rule: rec.Rule, Headers: rec.Headers, File: rec.File, DurationMs: float64(rec.Duration.Microseconds()) / 1000})
		}
		httpjson.Style{Charset: "utf-8", Newline: true}.JSON(w, http.StatusOK, out)
	})
}
