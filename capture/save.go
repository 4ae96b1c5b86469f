package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// ErrBadName is a fixture name that is not a plain file name.
var ErrBadName = errors.New("a fixture name is a plain file name, without directories or a leading dot")

// SaveNamed writes f as dir/NAME.json (".json" added when missing),
// atomically, creating dir: the named fixture `pyric capture save` and
// the Studio keep for committing into the repository. It returns the
// path written.
func SaveNamed(dir, name string, f *Fixture) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsAny(name, `/\`+"\x00") || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("%q: %w", name, ErrBadName)
	}
	data, err := Encode(f)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, strings.TrimSuffix(name, ".json")+".json")
	if err := WriteFileAtomic(path, data); err != nil {
		return "", err
	}
	return path, nil
}

// AdminHandler serves the session on the admin plane (mount it with
// http.StripPrefix): GET / returns the session so far as a fixture; POST
// /save {"name": "...", "description": "..."} keeps it as dir/NAME.json
// and answers {"path", "events"}. fixture builds the session's fixture.
func AdminHandler(fixture func() (*Fixture, error), dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply := func(code int, v any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(v)
		}
		switch p := strings.Trim(r.URL.Path, "/"); {
		case p == "" && r.Method == http.MethodGet:
			f, err := fixture()
			var data []byte
			if err == nil {
				data, err = Encode(f)
			}
			if err != nil {
				reply(http.StatusInternalServerError, map[string]string{"error": err.Error()})
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(data)
		case p == "":
			w.Header().Set("Allow", "GET")
			reply(http.StatusMethodNotAllowed, map[string]string{"error": "GET returns the captured session; POST …/save keeps it"})
		case p == "save" && r.Method == http.MethodPost:
			var body struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			}
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
			if err == nil {
				err = json.Unmarshal(b, &body)
			}
			if err != nil {
				reply(http.StatusBadRequest, map[string]string{"error": `the body must be {"name": "...", "description": "..."}: ` + err.Error()})
				return
			}
			f, err := fixture()
			if err != nil {
				reply(http.StatusInternalServerError, map[string]string{"error": err.Error()})
				return
			}
			if body.Description != "" {
				f.Description = body.Description
			}
			path, err := SaveNamed(dir, body.Name, f)
			if errors.Is(err, ErrBadName) {
				reply(http.StatusBadRequest, map[string]string{"error": err.Error()})
				return
			}
			if err != nil {
				reply(http.StatusInternalServerError, map[string]string{"error": "saving the fixture: " + err.Error()})
				return
			}
			reply(http.StatusOK, map[string]any{"path": path, "events": len(f.Events)})
		case p == "save":
			w.Header().Set("Allow", "POST")
			reply(http.StatusMethodNotAllowed, map[string]string{"error": `POST {"name": "..."} keeps the session as a named fixture`})
		default:
			reply(http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no capture route %q", r.URL.Path)})
		}
	})
}
