package messagingserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	messagingserver "github.com/pyric/pyric/server/messaging"
)

// FuzzHandler drives every body-reading endpoint with arbitrary bodies: no
// panic, never a 500, always a JSON answer (or a multipart one for a
// successful batch).
func FuzzHandler(f *testing.F) {
	eng, err := messaging.NewEngine(service.Env{Project: "p"}, messaging.Options{NoDeviceRateLimit: true})
	if err != nil {
		f.Fatal(err)
	}
	tok, _ := eng.MintToken(admin, "p", messaging.MintRequest{Token: "tok:APA91bfuzz"})
	h := messagingserver.NewHandler(eng, messagingserver.Options{})
	paths := []string{"/v1/projects/p/messages:send", "/iid/v1:batchAdd", "/iid/v1:batchRemove", "/emulator/v1/projects/p/tokens", "/batch"}
	for i, body := range []string{
		`{"message": {"token": "` + tok.Token + `", "data": {"k": "v"}}}`,
		`{"to": "/topics/a", "registration_tokens": ["` + tok.Token + `", "x"]}`,
		`{"to": "a", "registration_tokens": []}`,
		`{"platform": "android", "instance": "i"}`,
		"--b\r\nContent-Type: application/http\r\n\r\nPOST /v1/projects/p/messages:send HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}\r\n--b--\r\n",
	} {
		f.Add(uint8(i), []byte(body))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := paths[int(which)%len(paths)]
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		if path == "/batch" {
			req.Header.Set("Content-Type", "multipart/mixed; boundary=b")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		ct := rec.Header().Get("Content-Type")
		if path == "/batch" && rec.Code == http.StatusOK {
			if !strings.HasPrefix(ct, "multipart/mixed") {
				t.Fatalf("batch answered %s", ct)
			}
			return
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %q: non-JSON answer %q", path, body, rec.Body)
		}
	})
}
