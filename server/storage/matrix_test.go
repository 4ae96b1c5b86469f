package storageserver

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/identity"
	engine "github.com/pyric/pyric/storage"
)

// storageCase is one request of the Storage transport matrix: an
// operation by one identity on one object, and the code (and data) it
// must end with on every transport that offers the operation. In name, %s
// is the transport's own mark, so that each writes its own object.
type storageCase struct {
	name  string
	alice bool   // as the user alice (else admin)
	op    string // upload, read (the bytes), stat (size and content type)
	obj   string
	body  string
	code  errcode.Code
}

var storageCases = []storageCase{
	{"upload allowed", true, "upload", "users/alice/up%s.txt", "hello matrix", errcode.OK},
	{"upload denied by rules", true, "upload", "users/bob/up%s.txt", "x", errcode.PermissionDenied},
	{"upload with a name too long", false, "upload", "long%s/" + strings.Repeat("n", 1100), "x", errcode.InvalidArgument},
	{"read allowed", true, "read", "users/alice/seed.txt", "", errcode.OK},
	{"read of a missing object", true, "read", "users/alice/none%s.txt", "", errcode.NotFound},
	{"read denied by rules", true, "read", "users/bob/seed.txt", "", errcode.PermissionDenied},
	{"stat allowed", true, "stat", "users/alice/seed.txt", "", errcode.OK},
	{"stat of a missing object", false, "stat", "users/alice/none%s.txt", "", errcode.NotFound},
	{"stat denied by rules", true, "stat", "users/bob/seed.txt", "", errcode.PermissionDenied},
}

// storageOutcome is what a transport reported.
type storageOutcome struct {
	code errcode.Code
	data string
}

// codeOfStatus reads an HTTP status back into the engine's code: the
// inverse of storage.HTTPStatus, the one mapping every API answers with.
var codeOfStatus = map[int]errcode.Code{200: errcode.OK, 400: engine.InvalidArgument, 401: engine.Unauthenticated,
	403: engine.PermissionDenied, 404: engine.NotFound, 409: engine.Conflict, 410: engine.DataLoss,
	412: engine.FailedPrecondition, 413: engine.TooLarge, 416: engine.OutOfRange}

// TestTransportMatrix runs one table of operations in-process (the engine,
// its errors read by errcode.Of), through the Firebase v0 API, the GCS
// JSON API (its upload and download paths) and the XML API (reads), and
// requires the same code and the same data from each.
func TestTransportMatrix(t *testing.T) {
	s := newServer(t, openRules)
	admin := identity.AdminIdentity()
	alice := identity.NewUser("alice", map[string]any{"sub": "alice", "user_id": "alice"})
	for _, n := range []string{"users/alice/seed.txt", "users/bob/seed.txt"} {
		if _, err := s.e.Put(admin, engine.PutRequest{Bucket: bkt, Name: n, MediaType: "text/plain", Body: strings.NewReader("seed bytes")}); err != nil {
			t.Fatal(err)
		}
	}
	firebaseAuth := "Firebase " + mockToken("alice")
	who := func(c storageCase) identity.Identity {
		if c.alice {
			return alice
		}
		return admin
	}
	auth := func(c storageCase) []string {
		if c.alice {
			return []string{"Authorization", firebaseAuth}
		}
		return []string{"Authorization", "Bearer owner"}
	}
	// overHTTP reads a response: the bytes for a read, size and content
	// type from the metadata for a stat.
	overHTTP := func(c storageCase, r resp) storageOutcome {
		code, ok := codeOfStatus[r.status]
		if !ok {
			t.Fatalf("%s: status %d %s", c.name, r.status, r.body)
		}
		switch {
		case code != errcode.OK:
			return storageOutcome{code: code}
		case c.op == "read":
			return storageOutcome{code, r.body}
		case c.op == "stat" && r.body == "": // HEAD
			return storageOutcome{code, r.header.Get("Content-Length") + ";" + r.header.Get("Content-Type")}
		case c.op == "stat":
			m := r.json(t)
			return storageOutcome{code, fmt.Sprint(m["size"], ";", m["contentType"])}
		}
		return storageOutcome{code: code}
	}
	esc := url.PathEscape
	transports := []struct {
		name string
		run  func(c storageCase, obj string) (storageOutcome, bool) // false: the transport does not offer the operation
	}{
		{"in-process", func(c storageCase, obj string) (storageOutcome, bool) {
			var data string
			var err error
			switch c.op {
			case "upload":
				_, err = s.e.Put(who(c), engine.PutRequest{Bucket: bkt, Name: obj, MediaType: "text/plain", Body: strings.NewReader(c.body)})
			case "read":
				var rd engine.Reader
				if _, rd, err = s.e.Open(who(c), engine.ReadRequest{Bucket: bkt, Name: obj}); err == nil {
					b, _ := io.ReadAll(rd)
					rd.Close()
					data = string(b)
				}
			case "stat":
				var o *engine.Object
				if o, err = s.e.Stat(who(c), engine.ReadRequest{Bucket: bkt, Name: obj}); err == nil {
					data = strconv.FormatInt(o.Size, 10) + ";" + o.ContentType
				}
			}
			return storageOutcome{errcode.Of(err), data}, true
		}},
		{"Firebase v0", func(c storageCase, obj string) (storageOutcome, bool) {
			p := "/v0/b/" + bkt + "/o"
			switch c.op {
			case "upload":
				return overHTTP(c, s.do("POST", p+"?name="+url.QueryEscape(obj), c.body, append(auth(c), "Content-Type", "text/plain")...)), true
			case "read":
				return overHTTP(c, s.do("GET", p+"/"+esc(obj)+"?alt=media", "", auth(c)...)), true
			}
			return overHTTP(c, s.do("GET", p+"/"+esc(obj), "", auth(c)...)), true
		}},
		{"GCS JSON", func(c storageCase, obj string) (storageOutcome, bool) {
			switch c.op {
			case "upload":
				return overHTTP(c, s.do("POST", "/upload/storage/v1/b/"+bkt+"/o?uploadType=media&name="+url.QueryEscape(obj), c.body, append(auth(c), "Content-Type", "text/plain")...)), true
			case "read":
				return overHTTP(c, s.do("GET", "/storage/v1/b/"+bkt+"/o/"+esc(obj)+"?alt=media", "", auth(c)...)), true
			}
			return overHTTP(c, s.do("GET", "/storage/v1/b/"+bkt+"/o/"+esc(obj), "", auth(c)...)), true
		}},
		{"GCS JSON multipart", func(c storageCase, obj string) (storageOutcome, bool) {
			if c.op != "upload" {
				return storageOutcome{}, false
			}
			body, ct := multipartBody(`{"name":"`+obj+`"}`, "text/plain", c.body)
			return overHTTP(c, s.do("POST", "/upload/storage/v1/b/"+bkt+"/o?uploadType=multipart", body, append(auth(c), "Content-Type", ct)...)), true
		}},
		{"GCS download", func(c storageCase, obj string) (storageOutcome, bool) {
			if c.op != "read" {
				return storageOutcome{}, false
			}
			return overHTTP(c, s.do("GET", "/download/storage/v1/b/"+bkt+"/o/"+esc(obj)+"?alt=media", "", auth(c)...)), true
		}},
		{"XML", func(c storageCase, obj string) (storageOutcome, bool) {
			switch c.op {
			case "read":
				return overHTTP(c, s.do("GET", "/"+bkt+"/"+obj, "", auth(c)...)), true
			case "stat":
				return overHTTP(c, s.do("HEAD", "/"+bkt+"/"+obj, "", auth(c)...)), true
			}
			return storageOutcome{}, false // the XML API serves reads only
		}},
	}
	for _, c := range storageCases {
		t.Run(c.name, func(t *testing.T) {
			var first *storageOutcome
			ran := 0
			for i, tr := range transports {
				obj := strings.ReplaceAll(c.obj, "%s", fmt.Sprint("tx", i))
				got, offered := tr.run(c, obj)
				if !offered {
					continue
				}
				ran++
				if got.code != c.code {
					t.Errorf("%s: %v, want %v", tr.name, got.code, c.code)
				}
				if got.code == errcode.OK && c.op == "upload" {
					// What an upload stored, read back from the engine.
					_, rd, err := s.e.Open(admin, engine.ReadRequest{Bucket: bkt, Name: obj})
					if err != nil {
						t.Fatalf("%s: %v", tr.name, err)
					}
					var b bytes.Buffer
					io.Copy(&b, rd)
					rd.Close()
					got.data = b.String()
				}
				if first == nil {
					first = &got
				} else if got != *first {
					t.Errorf("%s: %+v differs from in-process %+v", tr.name, got, *first)
				}
			}
			if ran < 3 {
				t.Errorf("only %d transports offer %s", ran, c.op)
			}
		})
	}
}
