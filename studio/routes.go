package studio

import (
	"sort"
	"strings"

	"github.com/pyric/pyric/sandbox/service"
)

// Route is one row of the Studio's route table: a page, and the service
// it belongs to ("" for the Studio's own pages: Home, Traffic, Rules,
// Conformance).
// The UI draws its navigation, its links from Home and its keyboard
// shortcuts from the table, and opens the view Page names (the generic
// state view when it is empty).
type Route struct {
	service.StudioPage
	Service string `json:"service"`
}

// The Studio's own pages, first (Home) and last (Traffic, Rules,
// Conformance).
var (
	homeRoute = Route{StudioPage: service.StudioPage{Path: "/", Label: "Home", Page: "home", Key: "h"}}
	ownRoutes = []Route{
		{StudioPage: service.StudioPage{Path: "/traffic", Label: "Traffic", Page: "traffic", Key: "t"}},
		{StudioPage: service.StudioPage{Path: "/rules", Label: "Rules", Page: "rules", Key: "r"}},
		{StudioPage: service.StudioPage{Path: "/conformance", Label: "Conformance", Page: "conformance", Key: "c"}},
	}
)

// routeTable is the route table: Home, the pages of the sandbox's
// services implementing service.Studio in the sandbox's order, those of
// the services beside it (Options.Beside) by name, then Traffic, Rules
// and Conformance.
// A page whose path is taken, or is not a page route (/api/..., not
// starting with /), is left out; a key already taken is dropped.
func (s *Studio) routeTable() []Route {
	out := []Route{homeRoute}
	taken := map[string]bool{homeRoute.Path: true}
	keys := map[string]bool{homeRoute.Key: true}
	for _, r := range ownRoutes {
		taken[r.Path], keys[r.Key] = true, true
	}
	add := func(name string, st service.Studio) {
		for _, p := range st.StudioPages() {
			if !strings.HasPrefix(p.Path, "/") {
				continue
			}
			p.Path = "/" + strings.Trim(p.Path, "/")
			if taken[p.Path] || p.Path == "/api" || strings.HasPrefix(p.Path, "/api/") || strings.HasPrefix(p.Path, "/__") {
				continue
			}
			if p.Label == "" {
				p.Label = name
			}
			if keys[p.Key] || len(p.Key) != 1 {
				p.Key = ""
			}
			taken[p.Path], keys[p.Key] = true, p.Key != ""
			out = append(out, Route{StudioPage: p, Service: name})
		}
	}
	for _, sv := range s.sb.Services() {
		if st, ok := sv.(service.Studio); ok {
			add(sv.Name(), st)
		}
	}
	names := make([]string, 0, len(s.opts.Beside))
	for n := range s.opts.Beside {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		add(n, s.opts.Beside[n])
	}
	return append(out, ownRoutes...)
}
