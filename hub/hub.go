// Package hub serves the Firebase Emulator Suite hub's discovery API, so
// tools that find emulators through FIREBASE_EMULATOR_HUB alone
// (@firebase/rules-unit-testing, firebase-tools, the Admin SDKs' test
// helpers) find every pyric service:
//
//	GET /emulators  {"firestore": {"name", "host", "port", "listen": [{"address","family","port"}]}, ...}
//	GET /           the hub's locator: {"version", "host", "port", "pid", ...}
package hub

import (
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/pyric/pyric/server/httpjson"
)

// Emulator is one service the hub lists.
type Emulator struct {
	Name string // the Emulator Suite's name: firestore, auth, database, storage, hub, ui, ...
	Host string
	Port int
}

// Options configure New.
type Options struct {
	// Emulators lists the running services (called on each request).
	Emulators func() []Emulator
	// Version is reported in the locator.
	Version string
	// Project is the project id the locator names.
	Project string
}

// listen is one address an emulator listens on.
type listen struct {
	Address string `json:"address"`
	Family  string `json:"family"`
	Port    int    `json:"port"`
}

// info is one entry of GET /emulators.
type info struct {
	Name   string   `json:"name"`
	Host   string   `json:"host"`
	Port   int      `json:"port"`
	PID    int      `json:"pid"`
	Listen []listen `json:"listen"`
}

// New returns the hub handler.
func New(opts Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /emulators", func(w http.ResponseWriter, r *http.Request) {
		out := map[string]info{}
		for _, e := range list(opts) {
			out[e.Name] = info{Name: e.Name, Host: connectable(e.Host), Port: e.Port, PID: os.Getpid(), Listen: []listen{listenOf(e)}}
		}
		api.JSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		loc := map[string]any{"version": opts.Version, "pid": os.Getpid(), "project": opts.Project}
		for _, e := range list(opts) {
			if e.Name == "hub" {
				loc["host"], loc["port"] = connectable(e.Host), e.Port
			}
		}
		api.JSON(w, http.StatusOK, loc)
	})
	return mux
}

func list(opts Options) []Emulator {
	if opts.Emulators == nil {
		return nil
	}
	return opts.Emulators()
}

// FromAddr splits host:port into an Emulator.
func FromAddr(name, addr string) (Emulator, bool) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return Emulator{}, false
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return Emulator{}, false
	}
	return Emulator{Name: name, Host: h, Port: port}, true
}

// connectable turns a wildcard listen address into one clients can dial.
func connectable(h string) string {
	switch h {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return h
}

func listenOf(e Emulator) listen {
	fam := "IPv4"
	if ip := net.ParseIP(e.Host); ip != nil && ip.To4() == nil {
		fam = "IPv6"
	}
	return listen{Address: e.Host, Family: fam, Port: e.Port}
}

// api is how the hub writes JSON, as the emulator hub does.
var api = httpjson.Style{Charset: "utf-8", Newline: true}
