package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pyric/pyric/sandbox/service"
)

// ServiceStateURI is the URI of a service's state resource.
func ServiceStateURI(name string) string { return "pyric://services/" + name + "/state" }

// addServiceResources adds one resource per service of the sandbox: its
// state as JSON — what a session capture keeps (service.Capturer) when
// the service says so, its snapshot otherwise — described by the service
// (service.Describer). A new service appears here with no edit.
func (s *Server) addServiceResources() {
	for _, svc := range s.sb.Services() {
		name := svc.Name()
		desc := "The " + name + " service's state as JSON (its snapshot)."
		if d, ok := svc.(service.Describer); ok {
			desc = d.Describe() + " As JSON."
		}
		uri := ServiceStateURI(name)
		s.mcp.AddResource(&sdk.Resource{URI: uri, Name: name + " state", MIMEType: "application/json", Description: desc},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				var st json.RawMessage
				var err error
				if c, ok := svc.(service.Capturer); ok {
					st, err = c.CaptureState()
				} else {
					st, err = svc.Snapshot()
				}
				if err != nil {
					return nil, err
				}
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(st)}}}, nil
			})
	}
}
