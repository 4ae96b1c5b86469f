package aiserver

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/pyric/pyric/ai"
)

// emulator serves /emulator/v1/projects/{p}/ai/...:
//
//	GET    .../ai/script   the remaining script entries
//	PUT    .../ai/script   replace the script (a JSON array or {"entries": [...]})
//	POST   .../ai/script   append entries
//	DELETE .../ai/script   empty the script
//	GET    .../ai/calls    the call log, oldest first
//	DELETE .../ai          clear the project: script and call log
func (h *Handler) emulator(w http.ResponseWriter, r *http.Request, rest string) {
	project, sub, _ := strings.Cut(rest, "/")
	if project == "" {
		writeError(w, ai.NotFound("Requested entity was not found."))
		return
	}
	switch {
	case sub == "ai/script" && r.Method == http.MethodGet:
		api.JSON(w, 200, map[string]any{"entries": h.eng.Script(project)})
	case sub == "ai/script" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		body, err := io.ReadAll(io.LimitReader(r.Body, ai.MaxScriptBytes+1))
		if err != nil {
			writeError(w, ai.InvalidArgument("Request body could not be read."))
			return
		}
		entries, err := ai.DecodeScript(body)
		if err != nil {
			writeError(w, ai.InvalidArgument(err.Error()))
			return
		}
		if r.Method == http.MethodPut {
			err = h.eng.SetScript(project, entries)
		} else {
			err = h.eng.AppendScript(project, entries)
		}
		if errors.Is(err, ai.ErrInvalidScript) {
			writeError(w, ai.InvalidArgument(err.Error()))
			return
		}
		if err != nil {
			writeError(w, &ai.Error{Code: 503, Status: "UNAVAILABLE", Message: err.Error()})
			return
		}
		api.JSON(w, 200, map[string]any{"entries": len(h.eng.Script(project))})
	case sub == "ai/script" && r.Method == http.MethodDelete:
		if err := h.eng.SetScript(project, nil); err != nil {
			writeError(w, &ai.Error{Code: 503, Status: "UNAVAILABLE", Message: err.Error()})
			return
		}
		api.JSON(w, 200, map[string]any{})
	case sub == "ai/calls" && r.Method == http.MethodGet:
		api.JSON(w, 200, map[string]any{"calls": h.eng.Calls(project)})
	case sub == "ai" && r.Method == http.MethodDelete:
		if err := h.eng.Clear(project); err != nil {
			writeError(w, &ai.Error{Code: 503, Status: "UNAVAILABLE", Message: err.Error()})
			return
		}
		api.JSON(w, 200, map[string]any{})
	case sub == "ai/script" || sub == "ai/calls" || sub == "ai":
		writeError(w, &ai.Error{Code: 405, Status: "INVALID_ARGUMENT", Message: "Method " + r.Method + " is not allowed on " + sub + "."})
	default:
		writeError(w, ai.NotFound("Requested entity was not found."))
	}
}
