package studio

import (
	"errors"
	"io"
	"net/http"

	"github.com/pyric/pyric/ai"
	"github.com/pyric/pyric/sandbox"
)

// The AI page's endpoints, on the engine's own script API (what
// /emulator/v1/projects/{p}/ai/script does on the AI port): the call log
// (prompt, answer, tokens, raw request and response) and the loaded
// script, which the page replaces, appends to or empties.

func (s *Studio) aiEngine(w http.ResponseWriter) (*ai.Engine, bool) {
	e, ok := sandbox.Lookup[*ai.Engine](s.sb)
	if !ok {
		fail(w, http.StatusNotFound, "AI Logic is not running in this sandbox")
		return nil, false
	}
	return e, true
}

// aiState answers GET /api/ai: the newest calls (oldest first) and the
// remaining script entries of the default project.
func (s *Studio) aiState(w http.ResponseWriter, r *http.Request) {
	e, ok := s.aiEngine(w)
	if !ok {
		return
	}
	p := e.DefaultProject()
	calls := e.Calls(p)
	total := len(calls)
	if len(calls) > maxListed {
		calls = calls[len(calls)-maxListed:]
	}
	if calls == nil {
		calls = []ai.CallRecord{}
	}
	script := e.Script(p)
	if script == nil {
		script = []ai.Entry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"project": p, "calls": calls, "callCount": total, "script": script})
}

// aiScript replaces (PUT), appends to (POST) or empties (DELETE) the
// script; a body is a JSON array of entries or {"entries": [...]}, as the
// emulator endpoint takes. An invalid script is a 400 naming the entry.
func (s *Studio) aiScript(w http.ResponseWriter, r *http.Request) {
	e, ok := s.aiEngine(w)
	if !ok {
		return
	}
	p := e.DefaultProject()
	var entries []ai.Entry
	if r.Method != http.MethodDelete {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, ai.MaxScriptBytes))
		if err != nil {
			fail(w, http.StatusRequestEntityTooLarge, "a script is at most 8 MiB")
			return
		}
		if entries, err = ai.DecodeScript(body); err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{Error: err.Error(), Code: "INVALID_ARGUMENT"})
			return
		}
	}
	var err error
	if r.Method == http.MethodPost {
		err = e.AppendScript(p, entries)
	} else {
		err = e.SetScript(p, entries)
	}
	if errors.Is(err, ai.ErrInvalidScript) {
		writeJSON(w, http.StatusBadRequest, apiError{Error: err.Error(), Code: "INVALID_ARGUMENT"})
		return
	}
	if err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": len(e.Script(p))})
}

// aiClear clears the project: script and call log.
func (s *Studio) aiClear(w http.ResponseWriter, r *http.Request) {
	e, ok := s.aiEngine(w)
	if !ok {
		return
	}
	if err := e.Clear(e.DefaultProject()); err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"cleared": true})
}
