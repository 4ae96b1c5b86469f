package studio

import (
	"net/http"

	"github.com/pyric/pyric/internal/compat"
)

// conformance serves GET /api/conformance[?service=ID]: the conformance
// registry (internal/compat) with a score per service, for the
// Conformance page. It depends on nothing the sandbox holds: the
// registry is built into the binary.
func (s *Studio) conformance(w http.ResponseWriter, r *http.Request) {
	services, err := compat.Services()
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if id := r.URL.Query().Get("service"); id != "" {
		sv, err := compat.Lookup(id)
		if err != nil {
			fail(w, http.StatusNotFound, err.Error())
			return
		}
		services = []*compat.Service{sv}
	}
	writeJSON(w, http.StatusOK, compat.Report(services))
}
