package hosting

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ServeHTTP answers one request in production's order: redirects (first
// match, on the decoded path, the query carried over), custom headers
// (every matching rule, a later one overriding an earlier), the reserved
// /__/ URLs, files (exact, directory index, cleanUrls/trailingSlash),
// rewrites (first match), and the 404 page.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Record{Site: s.cfg.Name, Method: r.Method}
	start := time.Now()
	rec.Status, rec.Rule, rec.File = s.serve(w, r, &rec)
	rec.At, rec.Duration = start, time.Since(start)
	s.e.record(rec)
}

// maxPathLen bounds the request paths served (each rule's match is
// linear in it).
const maxPathLen = 16 << 10

// requestURI is the request's path and query as the client sent them.
func requestURI(r *http.Request) string {
	if u := r.RequestURI; strings.HasPrefix(u, "/") {
		return u
	}
	return r.URL.RequestURI()
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request, rec *Record) (status int, rule, file string) {
	q := &reqFiles{}
	defer q.close()
	uri := requestURI(r)
	rec.Path = uri
	rawPath, rawQuery, hasQuery := strings.Cut(uri, "?")
	if len(rawPath) > maxPathLen {
		plain(w, http.StatusRequestURITooLong, fmt.Sprintf("URI Too Long: the path has %d bytes, more than the %d served", len(rawPath), maxPathLen))
		return http.StatusRequestURITooLong, "bad-request", ""
	}
	decoded, err := decodeURI(rawPath)
	if err != nil {
		// The emulator's process dies on such a URL; production answers 400.
		plain(w, http.StatusBadRequest, fmt.Sprintf("Bad Request: the URL path %q has a malformed percent-encoding", rawPath))
		return http.StatusBadRequest, "bad-request", ""
	}

	// 1. Redirects: the first that matches the decoded path.
	for i := range s.cfg.Redirects {
		rd := &s.cfg.Redirects[i]
		if loc, ok := rd.apply(decoded, rawQuery, hasQuery); ok {
			redirect(w, loc, rd.Type, nil)
			return rd.Type, fmt.Sprintf("redirects[%d]", i), ""
		}
	}

	// 2. Custom headers: every rule matching the path as sent.
	path := slashed(rawPath)
	hdrs, names := s.headersFor(path)
	rec.Headers = names

	// 3. The reserved URLs.
	if strings.HasPrefix(rawPath, "/__/") {
		if st, ok := s.serveReserved(q, w, r, rawPath, hdrs); ok {
			return st, "reserved", ""
		}
	}

	// 4. Files.
	if st, f, ok := s.serveFiles(q, w, r, rawPath, rawQuery, hasQuery, hdrs); ok {
		return st, "file", f
	}

	// 5. Rewrites: the first that matches.
	for i := range s.cfg.Rewrites {
		rw := &s.cfg.Rewrites[i]
		if !rw.m.match(path) {
			continue
		}
		st, f, handled := s.rewrite(q, w, r, rw, hdrs)
		if handled {
			return st, fmt.Sprintf("rewrites[%d]", i), f
		}
		break // a missing destination or a passed function falls to the 404 page
	}

	// 6. The 404 page.
	st, f := s.notFound(q, w, r, hdrs)
	return st, "404", f
}

// redirect answers with a redirect as the emulator does.
func redirect(w http.ResponseWriter, loc string, status int, hdrs []Header) {
	h := w.Header()
	h.Set("Location", loc)
	h.Set("Content-Type", "text/html; charset=utf-8")
	applyHeaders(w, hdrs)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "Redirecting to "+loc)
}

// apply returns where a redirect sends a decoded path, with the query
// appended, when it matches.
func (rd *Redirect) apply(decoded, rawQuery string, hasQuery bool) (string, bool) {
	addQuery := func(u string) string {
		switch {
		case strings.Contains(u, "?") && hasQuery:
			return u + "&" + rawQuery
		case hasQuery && rawQuery != "":
			return u + "?" + rawQuery
		}
		return u
	}
	if rd.capture != nil {
		if m := rd.capture.FindStringSubmatch(decoded); m != nil {
			idx := rd.capture.FindStringSubmatchIndex(decoded)
			params := map[string][]string{}
			if rd.Source != "" {
				for i, k := range rd.keys {
					if i+1 >= len(m) || idx[2*(i+1)] < 0 {
						continue // an unmatched optional segment is undefined
					}
					if v := m[i+1]; strings.Contains(v, "/") {
						params[k.name] = strings.Split(v, "/")
					} else {
						params[k.name] = []string{v}
					}
				}
			} else {
				names := rd.capture.SubexpNames()
				for i := range m {
					if idx[2*i] < 0 {
						continue // an unmatched group is undefined
					}
					params[fmt.Sprint(i)] = []string{m[i]}
					if names[i] != "" {
						params[names[i]] = []string{m[i]}
					}
				}
			}
			dest, ok := fillRoute(rd.dest, params)
			if !ok {
				return "", false
			}
			return externalURL(encodeURI(addQuery(dest))), true
		}
	}
	if rd.m.match(decoded) {
		return externalURL(encodeURI(addQuery(rd.Destination))), true
	}
	return "", false
}

// externalURL undoes a leading slash put before an absolute URL
// ("/https:/x" → "https://x").
func externalURL(u string) string {
	for _, scheme := range []string{"http", "https"} {
		if rest, ok := strings.CutPrefix(u, "/"+scheme+":/"); ok && !strings.HasPrefix(rest, "/") {
			return scheme + "://" + rest
		}
	}
	return u
}

// headersFor collects the custom headers of every rule matching path, in
// order (a later value for a key replaces an earlier one).
func (s *Site) headersFor(path string) ([]Header, []string) {
	var out []Header
	var names []string
	for i := range s.cfg.Headers {
		hr := &s.cfg.Headers[i]
		if hr.m.match(path) {
			out = append(out, hr.Headers...)
			names = append(names, fmt.Sprintf("headers[%d]", i))
		}
	}
	return out, names
}

// serveFiles answers from the public folder with the cleanUrls and
// trailingSlash rules; ok is false when no file applies.
func (s *Site) serveFiles(q *reqFiles, w http.ResponseWriter, r *http.Request, rawPath, rawQuery string, hasQuery bool, hdrs []Header) (int, string, bool) {
	if s.cfg.Public == "" {
		return 0, "", false
	}
	search := ""
	if hasQuery {
		search = "?" + rawQuery
	}
	pathname := collapseSlashes(rawPath)
	ts := s.cfg.TrailingSlash
	clean := s.cfg.CleanURLs
	redir := func(to string) (int, string, bool) {
		if to == "" {
			to = "/"
		}
		redirect(w, to, http.StatusMovedPermanently, hdrs)
		return http.StatusMovedPermanently, "", true
	}
	serve := func(f *file) (int, string, bool) {
		return s.sendFile(w, r, f, http.StatusOK, hdrs), f.rel, true
	}
	// The exact file always wins.
	if f := s.lookupI18n(q, r, pathname); f != nil {
		if clean && strings.HasSuffix(pathname, ".html") {
			to := strings.TrimSuffix(pathname, ".html")
			to = strings.TrimSuffix(to, "/index")
			if ts != nil && *ts {
				to = addSlash(to)
			}
			return redir(orSlash(to) + search)
		}
		return serve(f)
	}
	hasSlash := strings.HasSuffix(pathname, "/")
	index := addSlash(pathname) + "index.html"
	if f := s.lookupI18n(q, r, index); f != nil {
		switch {
		case ts == nil && !hasSlash && !clean:
			return redir(addSlash(pathname) + search)
		case ts != nil && !*ts && hasSlash && pathname != "/":
			return redir(orSlash(strings.TrimSuffix(pathname, "/")) + search)
		case ts != nil && *ts && !hasSlash:
			return redir(addSlash(pathname) + search)
		}
		return serve(f)
	}
	if !clean {
		return 0, "", false
	}
	appended := pathname
	if hasSlash {
		if ts != nil {
			appended = strings.TrimSuffix(pathname, "/") + ".html"
		}
	} else {
		appended += ".html"
	}
	f := s.lookupI18n(q, r, appended)
	if f == nil {
		return 0, "", false
	}
	switch {
	case ts != nil && !*ts && hasSlash:
		return redir(orSlash(strings.TrimSuffix(pathname, "/")) + search)
	case ts != nil && *ts && !hasSlash:
		to := strings.TrimSuffix(appended, ".html")
		to = strings.TrimSuffix(to, "/index")
		return redir(addSlash(to) + search)
	case strings.HasSuffix(appended, "/index.html"):
		return redir(orSlash(strings.TrimSuffix(appended, "/index.html")) + search)
	}
	return serve(f)
}

func addSlash(p string) string {
	if strings.HasSuffix(p, "/") {
		return p
	}
	return p + "/"
}

func orSlash(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// rewrite answers with a rewrite's target; handled is false when its
// file does not exist or its function passed the request on.
func (s *Site) rewrite(q *reqFiles, w http.ResponseWriter, r *http.Request, rw *Rewrite, hdrs []Header) (status int, file string, handled bool) {
	switch {
	case rw.Destination != "":
		f := s.lookup(q, rw.Destination)
		if f == nil {
			return 0, "", false
		}
		return s.sendFile(w, r, f, http.StatusOK, hdrs), f.rel, true
	case rw.Function != nil:
		st, ok := s.callFunction(w, r, rw.Function, hdrs)
		return st, "", ok
	case rw.Run != nil:
		st, ok := s.callRun(w, r, rw.Run, hdrs)
		return st, "", ok
	default: // dynamicLinks
		applyHeaders(w, hdrs)
		plain(w, http.StatusNotImplemented, "This URL is rewritten to Firebase Dynamic Links (\"dynamicLinks\": true), a service Google has shut down; pyric does not serve it. Remove the rewrite or point it at your own handler.")
		return http.StatusNotImplemented, "", true
	}
}

// notFound answers with the 404 page: intl/<lang>/404.html first when
// i18n is on, then /404.html, else a built-in page.
func (s *Site) notFound(q *reqFiles, w http.ResponseWriter, r *http.Request, hdrs []Header) (int, string) {
	const page = "/404.html"
	pageHdrs, _ := s.headersFor(page)
	all := append(append([]Header{}, pageHdrs...), hdrs...)
	if f := s.lookupI18n(q, r, page); f != nil {
		return s.sendFile(w, r, f, http.StatusNotFound, all), f.rel
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	applyHeaders(w, all)
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, defaultNotFound)
	}
	return http.StatusNotFound, ""
}

// defaultNotFound is the page of a site without a 404.html.
const defaultNotFound = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Page Not Found</title>
<style>body{font-family:system-ui,sans-serif;background:#eceff1;color:#263238;margin:0}main{max-width:360px;margin:100px auto 16px;background:#fff;padding:32px 24px;border-radius:3px}h1{font-size:22px;margin:0 0 16px}</style></head>
<body><main><h1>Page Not Found</h1><p>Nothing is served at this address: no file matches it, no rewrite applies, and the site has no 404.html.</p></main></body>
</html>
`
