// Package hosting is the Firebase Hosting engine: it serves a web app's
// built front end as configured by firebase.json's "hosting" section, in
// production's order — redirects, then custom headers, then the reserved
// /__/ URLs (the SDK's auto-configuration and the Auth helper pages), then
// files (with cleanUrls, trailingSlash and i18n), then rewrites (to a
// file, or in process to an HTTPS function through a FunctionRouter),
// then the 404 page. Files are read fresh from disk on every request and
// served with ETag/Last-Modified validators, 304s, byte ranges and
// brotli/gzip; a request can never read outside the site's public folder.
//
// A Site is an http.Handler; the backend serves each site on its own port.
package hosting

import (
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// FunctionRouter runs an HTTPS function in process for a rewrite. The
// request it gets carries the original path and query, and the
// x-forwarded-* headers a function sees behind production's Hosting.
type FunctionRouter interface {
	// ServeFunction answers r with the function functionID deployed in
	// region and reports true, or reports false (writing nothing) when
	// no such function exists.
	ServeFunction(w http.ResponseWriter, r *http.Request, functionID, region string) bool
}

// Options configure New.
type Options struct {
	// Project is the project id (init.json's config).
	Project string
	// Emulators returns the running services by Emulator Suite name
	// (auth, firestore, database, storage, functions) and their
	// host:port, for /__/firebase/init.js?useEmulator=true and the Auth
	// helper pages; nil lists none.
	Emulators func() map[string]string
	// SDKDirs are directories that may hold a local copy of the Firebase
	// JS SDK's CDN files (an npm `firebase` package), for
	// /__/firebase/<version>/<file>.js. Pyric never fetches them.
	SDKDirs []string
	// Log, when set, is told about every request a site answered (also
	// kept by Engine.Requests).
	Log func(Record)
	// Functions, when set, finds the FunctionRouter at request time (nil:
	// Functions are not running) when none was set with
	// SetFunctionRouter.
	Functions func() FunctionRouter
}

// Record is one request a site answered and the rule that handled it.
type Record struct {
	Site   string
	Method string
	Path   string // the request's path and query, as sent
	Status int
	// Rule says what answered: "redirects[2]", "file", "rewrites[0]",
	// "reserved", "404", "bad-request"; Headers lists the header rules
	// that applied ("headers[1]").
	Rule    string
	Headers []string
	// File is the file served, as a path under the public folder ("" for
	// none).
	File     string
	At       time.Time
	Duration time.Duration
}

// Engine holds the sites of one firebase.json.
type Engine struct {
	opts  Options
	sites []*Site
	fn    atomic.Pointer[functionRouterBox]
	etags *etagCache
	gz    *compressedCache

	logMu  sync.Mutex
	recent []Record // a ring of the last maxRecent requests
	next   int
}

// maxRecent is how many answered requests Requests keeps.
const maxRecent = 500

// Requests returns the last requests the sites answered, oldest first,
// with the rule that handled each (what the Studio lists).
func (e *Engine) Requests() []Record {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	out := make([]Record, 0, len(e.recent))
	if len(e.recent) == maxRecent {
		out = append(out, e.recent[e.next:]...)
		return append(out, e.recent[:e.next]...)
	}
	return append(out, e.recent...)
}

func (e *Engine) record(r Record) {
	e.logMu.Lock()
	if len(e.recent) < maxRecent {
		e.recent = append(e.recent, r)
	} else {
		e.recent[e.next] = r
		e.next = (e.next + 1) % maxRecent
	}
	e.logMu.Unlock()
	if e.opts.Log != nil {
		e.opts.Log(r)
	}
}

type functionRouterBox struct{ r FunctionRouter }

// New builds the engine for the sites ParseConfig read.
func New(cfgs []*SiteConfig, opts Options) *Engine {
	e := &Engine{opts: opts, etags: newEtagCache(), gz: newCompressedCache()}
	for _, c := range cfgs {
		e.sites = append(e.sites, &Site{cfg: c, e: e})
	}
	return e
}

// Sites returns the sites in firebase.json's order.
func (e *Engine) Sites() []*Site { return e.sites }

// SetFunctionRouter sets (nil: removes) what rewrites to functions call.
func (e *Engine) SetFunctionRouter(r FunctionRouter) {
	if r == nil {
		e.fn.Store(nil)
		return
	}
	e.fn.Store(&functionRouterBox{r})
}

func (e *Engine) functions() FunctionRouter {
	if b := e.fn.Load(); b != nil {
		return b.r
	}
	if e.opts.Functions != nil {
		return e.opts.Functions()
	}
	return nil
}

// Site serves one site of firebase.json.
type Site struct {
	cfg *SiteConfig
	e   *Engine

	rootMu  sync.Mutex
	rootDir *os.Root // the public folder, once it exists
	retired *os.Root // the last replaced one, still read by requests in flight
}

// Config returns the site's configuration.
func (s *Site) Config() *SiteConfig { return s.cfg }

// Name returns the site's label (site, target or project id).
func (s *Site) Name() string { return s.cfg.Name }
