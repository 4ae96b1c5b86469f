package storageserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/pyric/pyric/sandbox/service"
	srv "github.com/pyric/pyric/server/storage"
	"github.com/pyric/pyric/storage"
)

// Serving an engine: the GCS clients are admin; a Firebase client without
// rules is denied.
func ExampleNewHandler() {
	e, _ := storage.New(service.Env{Project: "demo-pyric"}, storage.Options{})
	ts := httptest.NewServer(srv.NewHandler(e))
	defer ts.Close()

	res, _ := http.Post(ts.URL+"/upload/storage/v1/b/demo-pyric.appspot.com/o?uploadType=media&name=hello.txt", "text/plain", strings.NewReader("hi"))
	res.Body.Close()
	fmt.Println("GCS upload:", res.StatusCode)

	res, _ = http.Get(ts.URL + "/demo-pyric.appspot.com/hello.txt")
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println("XML read:", res.StatusCode, string(b), res.Header.Get("X-Goog-Stored-Content-Length"))

	res, _ = http.Get(ts.URL + "/v0/b/demo-pyric.appspot.com/o/hello.txt?alt=media")
	res.Body.Close()
	fmt.Println("Firebase read without rules:", res.StatusCode)
	// Output:
	// GCS upload: 200
	// XML read: 200 hi 2
	// Firebase read without rules: 403
}
