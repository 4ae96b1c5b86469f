package backend

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/pyric/pyric/hosting"
	"github.com/pyric/pyric/server"
)

// HostingOptions configure the Hosting endpoint.
type HostingOptions struct {
	// Sites are firebase.json's hosting sites (hosting.ParseConfig); none
	// leaves the endpoint off, as the Emulator Suite does without a
	// "hosting" section.
	Sites []*hosting.SiteConfig
	// SDKDirs are where a local copy of the Firebase JS SDK may be found
	// for /__/firebase/<version>/<file>.js (npm `firebase` packages).
	SDKDirs []string
}

// HostingEndpoint is the running Hosting engine and the address of each
// site.
type HostingEndpoint struct {
	Engine *hosting.Engine
	// Sites are the sites in firebase.json's order with their host:port:
	// the first on the Hosting port, the next ones from that port + 5
	// upward (the emulator's numbering), each on a free port when the
	// Hosting port is 0.
	Sites []HostingSite
	extra []*server.Port
}

// HostingSite is one served site.
type HostingSite struct {
	Name, Addr, Public string
}

// emulatorAddrs lists the running services by name (pyric's names are
// the Emulator Suite's), for /__/firebase/init.js and the Auth pages.
func (b *Backend) emulatorAddrs() map[string]string {
	out := map[string]string{}
	for _, e := range b.Endpoints() {
		out[e.Service] = e.Addr
	}
	return out
}

// functionRouter serves Hosting's function rewrites with the running
// Functions endpoint, in process; nil when Functions is off.
func (b *Backend) functionRouter() hosting.FunctionRouter {
	if eng := b.Functions(); eng != nil {
		return functionRewrites{eng}
	}
	return nil
}

func startHosting(b *Backend, opts *Options, l net.Listener) (*running, error) {
	eng := hosting.New(opts.Hosting.Sites, hosting.Options{Project: b.Project, Emulators: b.emulatorAddrs, SDKDirs: opts.Hosting.SDKDirs,
		Functions: b.functionRouter})
	sites := eng.Sites()
	he := &HostingEndpoint{Engine: eng}
	first := server.NewPort(l, nil, sites[0])
	he.Sites = append(he.Sites, HostingSite{Name: sites[0].Name(), Addr: l.Addr().String(), Public: sites[0].Config().Public})
	host, portStr, _ := net.SplitHostPort(l.Addr().String())
	base, _ := strconv.Atoi(portStr)
	fixed := opts.Ports[Hosting] != 0
	next := base + 5
	for _, s := range sites[1:] {
		var el net.Listener
		var err error
		if !fixed {
			el, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
		} else {
			// The emulator's numbering: port+5, port+6, ..., skipping
			// ports in use (and the Functions emulator's 5001).
			for tries := 0; tries < 100; tries, next = tries+1, next+1 {
				if next == 5001 || next > 65535 {
					continue
				}
				el, err = net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(next)))
				if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
					next++
					break
				}
			}
		}
		if err != nil || el == nil {
			he.shutdown()
			return nil, &ListenError{Service: Hosting, Addr: net.JoinHostPort(host, strconv.Itoa(next)), Err: err}
		}
		p := server.NewPort(el, nil, s)
		he.extra = append(he.extra, p)
		he.Sites = append(he.Sites, HostingSite{Name: s.Name(), Addr: el.Addr().String(), Public: s.Config().Public})
		go func() { _ = p.Serve() }()
	}
	return &running{port: first, state: he, drain: he.shutdown}, nil
}

// shutdown stops the sites beyond the first (the backend stops the first
// with the other endpoints).
func (he *HostingEndpoint) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range he.extra {
		_ = p.Shutdown(ctx)
	}
}

// Hosting returns the running Hosting endpoint, or nil.
func (b *Backend) Hosting() *HostingEndpoint {
	he, _ := b.state(Hosting).(*HostingEndpoint)
	return he
}

// DefaultSDKDirs are where a project keeps the npm `firebase` package.
func DefaultSDKDirs(projectDir string) []string {
	if projectDir == "" {
		return nil
	}
	return []string{filepath.Join(projectDir, "node_modules", "firebase")}
}
