package hosting

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// The reserved URLs of every Hosting site:
//
//	/__/firebase/init.json            the project's web config
//	/__/firebase/init.js              initializes the namespaced (compat) SDK
//	                                  with it; ?useEmulator=true also connects
//	                                  each SDK to pyric's emulators
//	/__/firebase/<version>/<file>.js  the SDK's CDN files, from a local copy
//	/__/auth/handler, /__/auth/iframe the Auth helper pages, answered by the
//	                                  Auth emulator's
var (
	sdkPathRE = regexp.MustCompile(`^/__/firebase/([^/]+)/([^/]+)$`)
	sdkNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// webConfig is init.json: the config production serves for a web app,
// filled with the values the emulator uses for a project it cannot look
// up (pyric never reaches Firebase).
type webConfig struct {
	ProjectID     string `json:"projectId"`
	DatabaseURL   string `json:"databaseURL"`
	StorageBucket string `json:"storageBucket"`
	APIKey        string `json:"apiKey"`
	AuthDomain    string `json:"authDomain"`
}

func (s *Site) webConfigJSON() []byte {
	p := s.e.opts.Project
	b, _ := json.MarshalIndent(webConfig{ProjectID: p, DatabaseURL: "https://" + p + ".firebaseio.com",
		StorageBucket: p + ".appspot.com", APIKey: "fake-api-key", AuthDomain: p + ".firebaseapp.com"}, "", "  ")
	return b
}

// emulatorInfo is one entry of init.js's list of emulators.
type emulatorInfo struct {
	Host        string `json:"host"`
	Port        int    `json:"port"`
	HostAndPort string `json:"hostAndPort"`
}

// useEmulatorServices are the services init.js connects (the SDKs that
// have a useEmulator call).
var useEmulatorServices = []string{"auth", "database", "firestore", "functions", "storage"}

func (s *Site) emulators() map[string]string {
	if s.e.opts.Emulators == nil {
		return nil
	}
	return s.e.opts.Emulators()
}

func (s *Site) emulatorsJSON() []byte {
	running := s.emulators()
	out := map[string]emulatorInfo{}
	for _, name := range useEmulatorServices {
		addr, ok := running[name]
		if !ok {
			continue
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		n, _ := strconv.Atoi(port)
		switch host {
		case "", "0.0.0.0":
			host = "127.0.0.1"
		case "::":
			host = "::1"
		}
		out[name] = emulatorInfo{Host: host, Port: n, HostAndPort: net.JoinHostPort(host, port)}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return b
}

// initScript is /__/firebase/init.js: it needs the namespaced SDK
// (firebase-app-compat.js and friends) loaded first.
const initScript = `/* Served by pyric's Hosting: the web config of project %[3]s. */
(function () {
  if (typeof firebase === 'undefined') {
    throw new Error('hosting/init-error: load the Firebase SDK (the compat scripts) before /__/firebase/init.js');
  }
  var config = %[1]s;
  var emulators = %[2]s;
  firebase.initializeApp(config);
  if (!emulators) {
    console.log('Firebase: to connect the SDKs to the local emulators, load /__/firebase/init.js?useEmulator=true instead of /__/firebase/init.js');
    return;
  }
  var names = Object.keys(emulators);
  console.log('Firebase: connecting to the local emulators: ' + names.map(function (n) { return n + ' at http://' + emulators[n].hostAndPort; }).join(', '));
  function has(sdk) { return typeof firebase[sdk] === 'function'; }
  if (emulators.auth && has('auth')) firebase.auth().useEmulator('http://' + emulators.auth.hostAndPort);
  if (emulators.firestore && has('firestore')) firebase.firestore().useEmulator(emulators.firestore.host, emulators.firestore.port);
  if (emulators.database && has('database')) firebase.database().useEmulator(emulators.database.host, emulators.database.port);
  if (emulators.storage && has('storage')) firebase.storage().useEmulator(emulators.storage.host, emulators.storage.port);
  if (emulators.functions && has('functions')) firebase.functions().useEmulator(emulators.functions.host, emulators.functions.port);
})();
`

// serveReserved answers the reserved URLs; ok is false for other /__/
// paths (they are looked up as files).
func (s *Site) serveReserved(q *reqFiles, w http.ResponseWriter, r *http.Request, rawPath string, hdrs []Header) (int, bool) {
	h := w.Header()
	switch rawPath {
	case "/__/firebase/init.json":
		h.Set("Content-Type", "application/json")
		applyHeaders(w, hdrs)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(s.webConfigJSON())
		return http.StatusOK, true
	case "/__/firebase/init.js":
		emu := []byte("undefined")
		if r.URL.Query().Get("useEmulator") == "true" {
			emu = s.emulatorsJSON()
		}
		h.Set("Content-Type", "application/javascript")
		applyHeaders(w, hdrs)
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, initScript, s.webConfigJSON(), emu, s.e.opts.Project)
		return http.StatusOK, true
	case "/__/auth/handler", "/__/auth/iframe":
		addr, ok := s.emulators()["auth"]
		if !ok {
			applyHeaders(w, hdrs)
			plain(w, http.StatusNotFound, "Not Found: "+rawPath+" is answered by the Auth emulator, which is not running")
			return http.StatusNotFound, true
		}
		loc := "http://" + addr + "/emulator/auth/" + strings.TrimPrefix(rawPath, "/__/auth/")
		if q := r.URL.RawQuery; q != "" {
			loc += "?" + q
		}
		h.Set("Location", loc)
		h.Set("Cache-Control", "no-store")
		applyHeaders(w, hdrs)
		w.WriteHeader(http.StatusFound)
		return http.StatusFound, true
	}
	if m := sdkPathRE.FindStringSubmatch(rawPath); m != nil {
		return s.serveSDK(q, w, r, m[1], m[2], hdrs), true
	}
	return 0, false
}

// serveSDK answers /__/firebase/<version>/<file> from a local copy of the
// npm `firebase` package of that version, or says why there is none.
func (s *Site) serveSDK(q *reqFiles, w http.ResponseWriter, r *http.Request, version, name string, hdrs []Header) int {
	if !sdkNameRE.MatchString(version) || !sdkNameRE.MatchString(name) || strings.Contains(name, "..") {
		applyHeaders(w, hdrs)
		plain(w, http.StatusNotFound, fmt.Sprintf("Not Found: %q is not a Firebase SDK file name", name))
		return http.StatusNotFound
	}
	var found []string
	for _, dir := range s.e.opts.SDKDirs {
		v := packageVersion(dir)
		if v == "" {
			continue
		}
		found = append(found, v+" in "+dir)
		if v != version {
			continue
		}
		full := filepath.Join(dir, name)
		fd, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		q.add(fd)
		fi, err := fd.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		e, ok := s.e.etags.get(full, fd, fi)
		if !ok {
			continue
		}
		f := &file{rel: "/" + name, data: e.data, fd: fd, key: full, size: fi.Size(), mod: fi.ModTime(), etag: e.etag}
		return s.sendFile(w, r, f, http.StatusOK, hdrs)
	}
	sort.Strings(found)
	msg := fmt.Sprintf("Not Found: pyric serves the Firebase JS SDK only from a local copy and has none of %s version %s", name, version)
	if len(found) > 0 {
		msg += " (it found firebase " + strings.Join(found, ", ") + ")"
	}
	msg += ". Install it with `npm install firebase@" + version + "` in the project, or bundle the SDK with your app."
	applyHeaders(w, hdrs)
	plain(w, http.StatusNotFound, msg)
	return http.StatusNotFound
}

// packageVersion is the version in dir/package.json, or "".
func packageVersion(dir string) string {
	f, err := os.Open(filepath.Join(dir, "package.json"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&pkg); err != nil || pkg.Name != "firebase" {
		return ""
	}
	return pkg.Version
}
