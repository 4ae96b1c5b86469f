package firestoreserver

import (
	"net/http"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
)

// IndexesHandler serves GET {"indexes": [...]}: the composite indexes
// the session's queries need (firestore.SuggestIndexes of session()), each with the
// ids of the events that ran such a query, for the Studio's Rules page.
func IndexesHandler(session func() ([]event.Event, error)) http.Handler {
	type item struct {
		firestore.IndexDef
		Events []string `json:"events"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeJSON(w, http.StatusMethodNotAllowed, branchError{Error: "GET lists the indexes the session's queries need"})
			return
		}
		events, err := session()
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, branchError{Error: err.Error()})
			return
		}
		out := []item{}
		for _, s := range firestore.SuggestIndexes(events) {
			out = append(out, item{IndexDef: s.Index, Events: s.Events})
		}
		writeJSON(w, http.StatusOK, map[string]any{"indexes": out})
	})
}
