package storageserver

import (
	"errors"
	"io"
	"mime"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// decoded is what a multipart body decodes to, for comparing two
// readings of it.
type decoded struct {
	err       string
	res       *resource
	mediaType string
	media     string
	mediaErr  error
	sdkShape  bool // read without mime/multipart
}

func decodeForTest(t *testing.T, ct string, body io.Reader, sdkShape bool) decoded {
	t.Helper()
	mp, err := decodeParts(ct, body, sdkShape)
	if err != nil {
		return decoded{err: err.Error()}
	}
	defer mp.release()
	b, err := io.ReadAll(mp.Media)
	return decoded{res: mp.Resource, mediaType: mp.MediaType, media: string(b), mediaErr: err, sdkShape: mp.Media == &mp.media}
}

// sameDecoding checks that ct and body decode to the same upload with
// and without the SDK-shape reader, whole and in small reads, and
// returns whether the SDK-shape reader took it.
func sameDecoding(t *testing.T, ct, body string) bool {
	t.Helper()
	want := decodeForTest(t, ct, strings.NewReader(body), false)
	var took bool
	for i, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body)), iotest.HalfReader(strings.NewReader(body)),
		iotest.DataErrReader(strings.NewReader(body))} {
		got := decodeForTest(t, ct, r, true)
		if i == 0 {
			took = got.sdkShape
		}
		got.sdkShape = false
		if !errors.Is(got.mediaErr, want.mediaErr) || !errors.Is(want.mediaErr, got.mediaErr) {
			t.Fatalf("reader %d: %q %q: media error %v, mime/multipart's %v", i, ct, body, got.mediaErr, want.mediaErr)
		}
		got.mediaErr = want.mediaErr
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("reader %d: %q %q:\n got %+v\nwant %+v", i, ct, body, got, want)
		}
	}
	return took
}

func TestSDKShapeMatchesMimeMultipart(t *testing.T) {
	const ct = "multipart/related; boundary=B"
	meta := `{"name":"a","contentType":"text/plain","metadata":{"k":"v"}}`
	sdk := []struct{ name, ct, body string }{
		{"js sdk", ct, "--B\r\nContent-Type: application/json; charset=utf-8\r\n\r\n" + meta + "\r\n--B\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B--"},
		{"go client", "multipart/related; boundary=0f1e2d3c4b5a", "--0f1e2d3c4b5a\r\nContent-Type: application/json\r\n\r\n" + meta + "\n\r\n--0f1e2d3c4b5a\r\nContent-Type: application/octet-stream\r\n\r\n" + strings.Repeat("s", 100<<10) + "\r\n--0f1e2d3c4b5a--\r\n"},
		{"no part headers", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"empty media", ct, "--B\r\n\r\n{}\r\n--B\r\nContent-Type: a/b\r\n\r\n\r\n--B--"},
		{"media starts with the boundary", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\n--B--"},
		{"media starts with the boundary and data", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\n--Bx\r\n--B--"},
		{"lookalike delimiters in the media", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\na\r\n--Bb\r\n--B-c\r\n-\r\n--B--"},
		{"delimiter then blank", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\nab\r\n--B \r\n"},
		{"delimiter at the end", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\nab\r\n--B"},
		{"delimiter and a dash at the end", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\nab\r\n--B-"},
		{"cut short", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\nabc"},
		{"cut short in the delimiter", ct, "--B\r\n\r\n{}\r\n--B\r\n\r\nabc\r\n--"},
		{"blanks around the type", ct, "--B\r\nContent-Type: \t a/b \t\r\n\r\n{}\r\n--B\r\ncontent-type:a/b\r\n\r\nx\r\n--B--"},
		{"empty type", ct, "--B\r\n\r\n{}\r\n--B\r\nContent-Type:\r\n\r\nx\r\n--B--"},
		{"empty metadata", ct, "--B\r\n\r\n\r\n--B\r\n\r\nx\r\n--B--"},
		{"quoted boundary", `multipart/related; boundary="B"`, "--B\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"upper-case type name", "MULTIPART/form-data; boundary=B", "--B\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
	}
	for _, c := range sdk {
		t.Run(c.name, func(t *testing.T) {
			if !sameDecoding(t, c.ct, c.body) {
				t.Errorf("not read as the SDKs' shape")
			}
		})
	}
	others := []struct{ name, ct, body string }{
		{"preamble", ct, "hello\r\n--B\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"bare line ends", ct, "--B\n\n{}\n--B\n\nx\n--B--"},
		{"blank after the boundary", ct, "--B \r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"quoted-printable", ct, "--B\r\n\r\n{}\r\n--B\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na=3Db\r\n--B--"},
		{"two types", ct, "--B\r\nContent-Type: a/b\r\nContent-Type: c/d\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"continued header", ct, "--B\r\nContent-Type: a/b\r\n c\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"metadata starts with the boundary", ct, "--B\r\n\r\n--B\r\n\r\nx\r\n--B--"},
		{"no media part", ct, "--B\r\n\r\n{}\r\n--B--"},
		{"no parts", ct, "--B--"},
		{"empty body", ct, ""},
		{"only metadata headers", ct, "--B\r\nContent-Type: a/b\r\n"},
		{"two parameters", "multipart/related; boundary=B; type=a/b", "--B\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"not multipart", "text/plain; boundary=B", "--B\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--"},
		{"control byte in a type", ct, "--B\r\n\r\n{}\r\n--B\r\nContent-Type: a\x01b\r\n\r\nx\r\n--B--"},
		{"metadata larger than the buffer", ct, "--B\r\n\r\n{\"name\":\"" + strings.Repeat("n", multipartReadSize) + "\"}\r\n--B\r\n\r\nx\r\n--B--"},
	}
	// A bad metadata part is refused with the same error either way.
	sameDecoding(t, ct, "--B\r\n\r\n{\"name\":5}\r\n--B\r\n\r\nx\r\n--B--")
	for _, c := range others {
		t.Run(c.name, func(t *testing.T) {
			if sameDecoding(t, c.ct, c.body) {
				t.Errorf("read as the SDKs' shape")
			}
		})
	}
}

// TestPlainBoundaryIsParseMediaType: a Content-Type plainBoundary reads
// is a multipart type with one parameter, the boundary, to
// mime.ParseMediaType.
func TestPlainBoundaryIsParseMediaType(t *testing.T) {
	for _, ct := range []string{"multipart/related; boundary=B", "Multipart/Related; boundary=a'b.c_d-e+f", "multipart/related; boundary=", "multipart/; boundary=B",
		"multipart/related;boundary=B", "multipart/related; boundary=B ", "multipart/related; boundary=a=b", "multipart/a/b; boundary=B", "multipart/related; boundary=\"B\"",
		"multipart/related; boundary=é", "multipart/rel ated; boundary=B", "multipart/related; Boundary=B"} {
		checkPlainBoundary(t, ct)
	}
}

func checkPlainBoundary(t *testing.T, ct string) {
	t.Helper()
	b, ok := plainBoundary(ct)
	if !ok {
		return
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || len(params) != 1 || params["boundary"] != b {
		t.Fatalf("%q: plainBoundary %q; ParseMediaType %q %v %v", ct, b, mt, params, err)
	}
}

// FuzzSDKShapeMatchesMimeMultipart: whatever the body, it decodes as
// mime/multipart decodes it.
func FuzzSDKShapeMatchesMimeMultipart(f *testing.F) {
	for _, b := range []string{"--B\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--", "--B\r\nContent-Type: a/b\r\n\r\n{}\r\n--B\r\ncontent-type: c\r\n\r\n\r\n--B-", "--B\r\n\r\n{}\r\n--B\r\n\r\n--B\r\n--B--"} {
		f.Add("B", b)
	}
	f.Fuzz(func(t *testing.T, boundary, body string) {
		ct := "multipart/related; boundary=" + boundary
		checkPlainBoundary(t, ct)
		sameDecoding(t, ct, body)
	})
}
