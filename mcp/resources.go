package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pyric/pyric/firestore"
)

// Resource URIs.
const (
	ResourceFirestoreRules = "pyric://rules/firestore"
	ResourceDatabaseRules  = "pyric://rules/database"
	ResourceRecentEvents   = "pyric://events/recent"
)

func (s *Server) addResources() {
	s.addServiceResources()
	s.mcp.AddResource(&sdk.Resource{URI: ResourceFirestoreRules, Name: "firestore.rules", MIMEType: "text/plain",
		Description: "The Firestore Security Rules the sandbox enforces (empty when none are loaded: every client request is denied)."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			text := ""
			if eng, err := s.engine(); err == nil {
				if g, ok := eng.Rules().(*firestore.RulesGate); ok && g != nil {
					text = g.Ruleset().File().Text
				}
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: ResourceFirestoreRules, MIMEType: "text/plain", Text: text}}}, nil
		})
	s.mcp.AddResource(&sdk.Resource{URI: ResourceDatabaseRules, Name: "database.rules.json", MIMEType: "application/json",
		Description: "The Realtime Database rules the sandbox enforces (empty when none are loaded)."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			text := ""
			if s.opts.RTDB != nil {
				text, _ = s.opts.RTDB()
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: ResourceDatabaseRules, MIMEType: "application/json", Text: text}}}, nil
		})
	s.mcp.AddResource(&sdk.Resource{URI: ResourceRecentEvents, Name: "recent events", MIMEType: "application/json",
		Description: "The 100 most recent sandbox events (requests with verdicts, commits, listener deliveries), without full rules explanations."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			h := s.history()
			if len(h) > 100 {
				h = h[len(h)-100:]
			}
			b, err := json.Marshal(stripExplanations(h))
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: ResourceRecentEvents, MIMEType: "application/json", Text: string(b)}}}, nil
		})
}
