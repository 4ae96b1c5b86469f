package firestore

import (
	"net/http"
)

// coverage records which rule expressions were evaluated and their values.
type coverage struct {
	s *Server
}

func newCoverage(s *Server) *coverage { return &coverage{s: s} }

func (c *coverage) install() {}
func (c *coverage) reset()   {}

func (h *httpHandler) ruleCoverage(w http.ResponseWriter, ep emulatorPath) {
	writeJSONValue(w, map[string]any{})
}

func (h *httpHandler) ruleCoverageHTML(w http.ResponseWriter, ep emulatorPath) {
	w.WriteHeader(200)
}
