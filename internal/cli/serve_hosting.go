package cli

import (
	"fmt"
	"io"

	"github.com/pyric/pyric/backend"
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
