package hosting

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// callFunction runs a function rewrite in process. The function gets the
// original path and query (as behind production's Hosting), the
// x-forwarded-* headers, and of the cookies only __session; its response
// gets production's policy: Cache-Control "private" when it sets none,
// Set-Cookie dropped unless private, Vary naming Accept-Encoding,
// Authorization and Cookie, then the site's custom headers. A 404 with
// X-Cascade: PASS hands the request on to the 404 page (handled false).
func (s *Site) callFunction(w http.ResponseWriter, r *http.Request, ft *FunctionTarget, hdrs []Header) (int, bool) {
	router := s.e.functions()
	if router == nil {
		applyHeaders(w, hdrs)
		plain(w, http.StatusNotImplemented, fmt.Sprintf("Not Implemented: this URL is rewritten to the function %q (%s), and Cloud Functions are not running in pyric", ft.FunctionID, ft.Region))
		return http.StatusNotImplemented, true
	}
	return s.invoke(w, r, router, ft, hdrs, func() int {
		applyHeaders(w, hdrs)
		plain(w, http.StatusNotFound, fmt.Sprintf("Not Found: this URL is rewritten to the function %q in %s, and no such HTTPS function is loaded", ft.FunctionID, ft.Region))
		return http.StatusNotFound
	})
}

// callRun answers a Cloud Run rewrite: Cloud Run is not emulated, but as
// in the Emulator Suite an HTTPS function named like the service (and in
// its region) answers for it when one is loaded.
func (s *Site) callRun(w http.ResponseWriter, r *http.Request, rt *RunTarget, hdrs []Header) (int, bool) {
	notEmulated := func() int {
		applyHeaders(w, hdrs)
		plain(w, http.StatusNotImplemented, fmt.Sprintf("Not Implemented: this URL is rewritten to the Cloud Run service %q in %s, which pyric does not emulate (nor is an HTTPS function of that name loaded): run the service yourself and call it directly, or deploy it.", rt.ServiceID, rt.Region))
		return http.StatusNotImplemented
	}
	router := s.e.functions()
	if router == nil {
		return notEmulated(), true
	}
	return s.invoke(w, r, router, &FunctionTarget{FunctionID: rt.ServiceID, Region: rt.Region}, hdrs, notEmulated)
}

// invoke calls a function through the router; missing answers when it
// has no such function.
func (s *Site) invoke(w http.ResponseWriter, r *http.Request, router FunctionRouter, ft *FunctionTarget, hdrs []Header, missing func() int) (int, bool) {
	fr := r.Clone(r.Context())
	fr.Header.Set("X-Forwarded-Host", r.Host)
	fr.Header.Set("X-Forwarded-Proto", "http")
	fr.Header.Set("X-Original-Url", requestURI(r))
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		appendHeader(fr.Header, "X-Forwarded-For", host)
	}
	fr.Header.Del("Cookie")
	if c, err := r.Cookie("__session"); err == nil {
		fr.Header.Set("Cookie", "__session="+c.Value)
	}
	fw := &functionWriter{w: w, hdrs: hdrs}
	if !router.ServeFunction(fw, fr, ft.FunctionID, ft.Region) {
		if fw.wrote {
			return fw.status, true
		}
		return missing(), true
	}
	if fw.passed {
		return 0, false
	}
	if !fw.wrote {
		fw.WriteHeader(http.StatusOK)
	}
	return fw.status, true
}

func appendHeader(h http.Header, key, v string) {
	if old := h.Get(key); old != "" {
		h.Set(key, old+", "+v)
		return
	}
	h.Set(key, v)
}

// functionWriter applies Hosting's response policy to a function's
// response when its header is written.
type functionWriter struct {
	w      http.ResponseWriter
	hdrs   []Header
	wrote  bool
	passed bool // a 404 with X-Cascade: PASS: nothing is written
	status int
}

func (f *functionWriter) Header() http.Header { return f.w.Header() }

func (f *functionWriter) WriteHeader(status int) {
	if f.wrote {
		return
	}
	f.wrote, f.status = true, status
	h := f.w.Header()
	if status == http.StatusNotFound && strings.EqualFold(h.Get("X-Cascade"), "pass") {
		f.passed = true
		for k := range h {
			delete(h, k)
		}
		return
	}
	cc := h.Get("Cache-Control")
	if cc == "" {
		cc = "private"
		h.Set("Cache-Control", cc)
	}
	if !strings.Contains(cc, "private") {
		h.Del("Set-Cookie")
	}
	h.Set("Vary", varyWith(h.Values("Vary")))
	applyHeaders(f.w, f.hdrs)
	f.w.WriteHeader(status)
}

func (f *functionWriter) Write(p []byte) (int, error) {
	if !f.wrote {
		f.WriteHeader(http.StatusOK)
	}
	if f.passed {
		return len(p), nil
	}
	return f.w.Write(p)
}

// Flush lets a function stream.
func (f *functionWriter) Flush() {
	if !f.wrote {
		f.WriteHeader(http.StatusOK)
	}
	if fl, ok := f.w.(http.Flusher); ok && !f.passed {
		fl.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (f *functionWriter) Unwrap() http.ResponseWriter { return f.w }

// varyWith adds Accept-Encoding, Authorization and Cookie to a Vary list.
func varyWith(vals []string) string {
	var out []string
	seen := map[string]bool{}
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" || seen[strings.ToLower(p)] {
				continue
			}
			seen[strings.ToLower(p)] = true
			out = append(out, http.CanonicalHeaderKey(p))
		}
	}
	for _, req := range []string{"Accept-Encoding", "Authorization", "Cookie"} {
		if !seen[strings.ToLower(req)] {
			out = append(out, req)
		}
	}
	return strings.Join(out, ", ")
}
