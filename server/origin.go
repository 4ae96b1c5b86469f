package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime/trace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/server/httpjson"
)

// Policy is who may call pyric's ports from a browser: the one origin and
// host policy every port applies (the services, the Studio, the hub, MCP).
//
// Cross-origin access (CORS) is granted to loopback origins
// (http(s)://localhost:*, 127.0.0.1:*, [::1]:*, where app dev servers run)
// and to the origins listed in Origins; a request carrying any other Origin
// is refused with 403 before a handler sees it, whatever it asks (a web
// page can otherwise wipe the data with a simple POST that no preflight
// guards, or replace the rules). Requests without an Origin (Node, Go,
// curl, the Admin SDKs) are not browsers' cross-origin requests and pass.
//
// The Host header must name a loopback host, the address the connection
// came in on, a host listed in Hosts, or the host of a listed origin: a
// page whose host name was rebound to 127.0.0.1 (DNS rebinding) sends its
// own name and is refused.
type Policy struct {
	// Origins are the origins allowed besides loopback ones, as
	// scheme://host[:port]; "*" allows every origin.
	Origins []string
	// Hosts are host names the Host header may carry besides loopback
	// names, IP addresses of the port and the hosts of Origins.
	Hosts []string
}

// AllowOriginFlag is how a user allows an origin; refusals name it.
const AllowOriginFlag = "--allow-origin"

// ConfigKey is firebase.json's list of allowed origins.
const ConfigKey = "emulators.allowOrigins"

// ParseOrigin checks an origin as --allow-origin takes it and returns its
// canonical form (lower-case scheme and host, no trailing slash).
func ParseOrigin(s string) (string, error) {
	if s == "*" || s == "null" {
		return s, nil
	}
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("origin %q: want scheme://host[:port] (http or https, no path), or *", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// allowsAny reports whether "*" is listed.
func (p *Policy) allowsAny() bool {
	for _, o := range p.Origins {
		if o == "*" {
			return true
		}
	}
	return false
}

// AllowsOrigin reports whether a browser page of origin may call the ports.
func (p *Policy) AllowsOrigin(origin string) bool {
	if loopbackOrigin(origin) {
		return true
	}
	if p == nil {
		return false
	}
	o := strings.ToLower(origin)
	for _, a := range p.Origins {
		if a == "*" || strings.ToLower(a) == o {
			return true
		}
	}
	return false
}

// loopbackOrigin reports whether origin is http(s) on a loopback host.
// Every request of a web page carries its origin, so the usual form,
// http(s)://name[:port], is read here without url.Parse's allocation;
// any other goes through it (loopbackOriginParsed).
func loopbackOrigin(origin string) bool {
	if host, ok := plainOriginHost(origin); ok {
		return LoopbackHost(host)
	}
	return loopbackOriginParsed(origin)
}

// plainOriginHost is the host[:port] of an origin of the form
// http(s)://name[:digits], name being letters, digits, dots and hyphens
// (ok false for any other form): url.Parse reads such an origin with
// that Host and no path.
func plainOriginHost(origin string) (string, bool) {
	host, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		if host, ok = strings.CutPrefix(origin, "https://"); !ok {
			return "", false
		}
	}
	name, port, hasPort := strings.Cut(host, ":")
	if name == "" || strings.IndexFunc(name, notNameByte) >= 0 || (hasPort && strings.IndexFunc(port, notDigit) >= 0) {
		return "", false
	}
	return host, true
}

func notNameByte(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-')
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

// loopbackOriginParsed is loopbackOrigin for any origin.
func loopbackOriginParsed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false
	}
	return LoopbackHost(u.Host)
}

// LoopbackHost reports whether a host or host:port names this machine's
// loopback interface: localhost (and *.localhost, which browsers resolve
// to loopback), 127.0.0.0/8 or ::1.
func LoopbackHost(hostport string) bool {
	h := hostOnly(hostport)
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func hostOnly(hostport string) string {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// AllowsHost reports whether a request's Host header may reach a port
// whose connection arrived on local (nil when unknown).
func (p *Policy) AllowsHost(host string, local net.Addr) bool {
	if host == "" || LoopbackHost(host) {
		return true // HTTP/1.0 without Host is no browser
	}
	h := hostOnly(host)
	if ip := net.ParseIP(h); ip != nil {
		// An IP address cannot be rebound: the client connected to it.
		// It must still be this port's own address.
		if ta, ok := local.(*net.TCPAddr); ok {
			return ta.IP.Equal(ip)
		}
		return false
	}
	if googleHost(h) {
		return true
	}
	if p == nil {
		return false
	}
	for _, a := range p.Hosts {
		if strings.EqualFold(hostOnly(a), h) {
			return true
		}
	}
	for _, o := range p.Origins {
		if u, err := url.Parse(o); err == nil && u.Host != "" && strings.EqualFold(u.Hostname(), h) {
			return true
		}
	}
	return false
}

// googleDomains are production's API domains. Clients that redirect
// production traffic here keep production's Host (the Node Admin SDK's
// messaging calls send Host: fcm.googleapis.com), and no attacker can make
// a Google-run name resolve to 127.0.0.1, so they are no rebinding risk.
var googleDomains = []string{"googleapis.com", "firebaseio.com", "firebasedatabase.app"}

func googleHost(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	for _, d := range googleDomains {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// Check returns why r is refused (a message for a person), or "".
func (p *Policy) Check(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !p.AllowsHost(r.Host, local) {
		return fmt.Sprintf("pyric: refusing Host %q: this port answers only loopback names (localhost, 127.0.0.1, [::1]), its own address and the hosts of origins listed with %s; a page whose host name resolves to this machine (DNS rebinding) cannot call it", r.Host, AllowOriginFlag)
	}
	if o, ok := r.Header["Origin"]; ok && len(o) > 0 && !p.AllowsOrigin(o[0]) {
		return fmt.Sprintf("pyric: refusing a request from origin %q: only loopback origins (http://localhost:*, http://127.0.0.1:*, http://[::1]:*) may call the emulators from a browser; to allow this one, start pyric serve with %s=%s (or list it in firebase.json's %s)", o[0], AllowOriginFlag, o[0], ConfigKey)
	}
	return ""
}

// exposedHeaders are the response headers browser SDKs read: Firestore's
// WebChannel handshake and Storage's resumable upload protocol.
const exposedHeaders = "Content-Type, Content-Length, Content-Range, Content-Disposition, Content-Encoding, Cache-Control, ETag, Location, Range, " +
	"X-Goog-Upload-URL, X-Goog-Upload-Status, X-Goog-Upload-Size-Received, X-Goog-Upload-Chunk-Granularity, X-Goog-Upload-Control-URL, " +
	"X-Goog-Generation, X-Goog-Metageneration, X-Goog-Hash, X-Goog-Stored-Content-Encoding, X-Goog-Stored-Content-Length, " +
	"X-Firebase-ETag, x-client-wire-protocol, x-http-session-id, x-http-initial-response"

// CORSAnswerer is a handler that answers CORS itself (preflights and
// the headers of each answer): the Cloud Functions port, where CORS is the
// function's own (firebase-functions' cors option, and the cors it wraps
// every function in under the Emulator Suite's debug features), as on
// the Emulator Suite and in production.
type CORSAnswerer interface {
	http.Handler
	AnswersCORS()
}

// Guard serves h behind the policy: refused requests get 403 with the
// reason, preflights of allowed origins are answered here (with Private
// Network Access's header when asked), and responses to allowed origins
// carry the CORS headers. policy is read on every request, so a port can be
// given its policy after it was built; nil is the default (loopback only).
//
// A handler that is a CORSAnswerer answers CORS itself: Guard still
// refuses what the policy refuses, and adds no CORS header. A handler that
// is a BodyStreamer is served without the heavy-work gate.
func Guard(h http.Handler, policy *atomic.Pointer[Policy]) http.Handler {
	_, ownsCORS := h.(CORSAnswerer)
	_, streams := h.(BodyStreamer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if trace.IsEnabled() {
			// With a runtime trace running (PYRIC_DEBUG_PPROF's
			// /debug/pprof/trace), each request is a region of its
			// goroutine, its path logged, so a trace tells a slow
			// request's waits (a processor, the collector) from others'.
			defer trace.StartRegion(r.Context(), "http "+r.Method).End()
			trace.Log(r.Context(), "path", r.URL.Path)
		}
		var p *Policy
		if policy != nil {
			p = policy.Load()
		}
		if msg := p.Check(r); msg != "" {
			Refuse(w, msg)
			return
		}
		body := r.Body
		defer drainRefused(w, r, body)
		var a *admission
		if !streams {
			r, a = admit(heavyWork, r)
		}
		origin := r.Header.Get("Origin")
		preflight := origin != "" && r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if preflight && r.Header.Get("Access-Control-Request-Private-Network") == "true" {
			// The policy allowed this origin, so it may reach a private
			// network, whoever answers the rest of the preflight (a
			// CORSAnswerer answers it itself).
			w.Header().Set("Access-Control-Allow-Private-Network", "true")
		}
		if origin == "" || ownsCORS {
			serve(a, h, w, r)
			return
		}
		hd := w.Header()
		setCORS(hd, origin, !preflight)
		if preflight {
			hd.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				hd.Set("Access-Control-Allow-Headers", req)
			}
			hd.Set("Access-Control-Max-Age", "3600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		serve(a, h, w, r)
	})
}

// setCORS sets the CORS headers of an answer to an allowed origin (with
// the exposed headers unless it is a preflight's), as Header's Set and
// Add (Vary) would, their values in one allocation.
func setCORS(hd http.Header, origin string, expose bool) {
	vals := make([]string, 4)
	vals[0], vals[1], vals[2], vals[3] = origin, "true", "Origin", exposedHeaders
	hd["Access-Control-Allow-Origin"] = vals[0:1:1]
	hd["Access-Control-Allow-Credentials"] = vals[1:2:2]
	if vary, ok := hd["Vary"]; ok {
		hd["Vary"] = append(vary, "Origin")
	} else {
		hd["Vary"] = vals[2:3:3]
	}
	if expose {
		hd["Access-Control-Expose-Headers"] = vals[3:4:4]
	}
}

// serve serves h, behind the gate when a is an admission.
func serve(a *admission, h http.Handler, w http.ResponseWriter, r *http.Request) {
	if a == nil {
		h.ServeHTTP(w, r)
		return
	}
	serveAdmitted(a, h, w, r)
}

// drainLimit bounds how much of a request body left unread (one refused as
// too large, say) is read and dropped after the answer.
const drainLimit = 64 << 20

// drainRefused reads and drops, at network speed and without keeping it,
// what a handler left of a request body once its answer is sent: closing a
// connection with unread bytes makes the kernel reset it, and the client,
// still sending, sees "connection reset" instead of the 413 that names
// the limit. Past drainLimit (or 10 s) the connection is closed anyway.
func drainRefused(w http.ResponseWriter, r *http.Request, body io.ReadCloser) {
	if body == nil || body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var probe [1]byte
	if n, err := body.Read(probe[:]); n == 0 && err != nil {
		return // read to the end (or hijacked, or gone): nothing to drop
	}
	if rc.Flush() != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body, drainLimit)
}

// Refuse answers 403 with msg in Google's JSON error envelope, which every
// Firebase client decodes.
func Refuse(w http.ResponseWriter, msg string) {
	refusal.Fail(w, errcode.PermissionDenied, msg)
}

var refusal = httpjson.Style{Charset: "utf-8", Newline: true, Header: map[string]string{"X-Content-Type-Options": "nosniff"}}

// Warnings are what a user should be told about p at start.
func (p *Policy) Warnings() []string {
	if p != nil && p.allowsAny() {
		return []string{"WARNING: " + AllowOriginFlag + "=* lets every web page you open read and wipe this server's data (CORS is granted to any origin)"}
	}
	return nil
}
