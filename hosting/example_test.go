package hosting_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/pyric/pyric/hosting"
)

// A site from firebase.json's "hosting" section: a single-page app whose
// routes all serve index.html, and an old path redirected.
func Example() {
	dir, _ := os.MkdirTemp("", "hosting-example")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "dist"), 0o755)
	os.WriteFile(filepath.Join(dir, "dist", "index.html"), []byte("<div id=app></div>"), 0o644)

	sites, err := hosting.ParseConfig(json.RawMessage(`{
		"public": "dist",
		"redirects": [{"source": "/blog/:post", "destination": "/posts/:post", "type": 302}],
		"rewrites": [{"source": "**", "destination": "/index.html"}]
	}`), dir, "demo-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	site := hosting.New(sites, hosting.Options{Project: "demo-example"}).Sites()[0]

	for _, path := range []string{"/settings/profile", "/blog/hello?ref=x"} {
		w := httptest.NewRecorder()
		site.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, w.Code, w.Header().Get("Location"), w.Body.String())
	}
	// Output:
	// /settings/profile 200  <div id=app></div>
	// /blog/hello?ref=x 302 /posts/hello?ref=x Redirecting to /posts/hello?ref=x
}
