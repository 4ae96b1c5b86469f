package storageserver

import (
	"bufio"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
	"sync"
)

// multipartUpload is a decoded multipart/related upload: the metadata part
// and a reader of the media part, streamed from the request body.
type multipartUpload struct {
	Resource  *resource
	MediaType string
	Media     io.Reader

	body  *bufio.Reader // pooled: see release
	media mediaPart     // Media, when the body had the SDKs' shape
}

// multipartReadSize is the buffer the body is read through: mime/multipart
// reads its input 4 KiB at a time, which for a large upload straight from
// the socket is a system call per 4 KiB, most of its CPU time.
const multipartReadSize = 64 << 10

var multipartBodies = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, multipartReadSize) }}

// release returns the body's buffer once the media is read (or given up);
// Media must not be read after it.
func (m *multipartUpload) release() {
	if m.body != nil {
		m.body.Reset(nil)
		multipartBodies.Put(m.body)
		m.body = nil
	}
}

// decodeMultipart reads a multipart/related body (JS SDK and GCS
// uploadType=multipart): a JSON metadata part, then the bytes. The media
// part is not buffered; the caller releases the upload once it read it.
// A body in the shape the SDKs send (see splitUpload) is read without
// mime/multipart, whose reader, parts and header maps are most of a small
// upload's allocations; any other body goes through mime/multipart, so
// that it is read, or refused, exactly as before.
func decodeMultipart(contentType string, body io.Reader) (*multipartUpload, error) {
	return decodeParts(contentType, body, true)
}

// decodeParts is decodeMultipart, with the SDKs' shape read without
// mime/multipart only when sdkShape is set (tests compare both).
func decodeParts(contentType string, body io.Reader, sdkShape bool) (*multipartUpload, error) {
	boundary, ok := plainBoundary(contentType)
	if !ok || !sdkShape {
		mt, params, err := mime.ParseMediaType(contentType)
		if err != nil || !strings.HasPrefix(mt, "multipart/") {
			return nil, badRequest("A multipart upload needs Content-Type multipart/related with a boundary, not %q.", contentType)
		}
		boundary = params["boundary"]
	}
	if boundary == "" {
		return nil, badRequest("The multipart Content-Type has no boundary.")
	}
	br := multipartBodies.Get().(*bufio.Reader)
	br.Reset(body)
	mp := &multipartUpload{body: br}
	if sdkShape && len(boundary) <= maxPlainBoundary {
		nlDashBoundary := append(append(make([]byte, 0, 4+len(boundary)), "\r\n--"...), boundary...)
		if meta, mediaType, n, ok := peekUpload(br, nlDashBoundary); ok {
			res, err := resourceOf(meta)
			if err != nil {
				mp.release()
				return nil, err
			}
			br.Discard(n)
			mp.media = mediaPart{br: br, nlDashBoundary: nlDashBoundary}
			mp.Resource, mp.MediaType, mp.Media = res, mediaType, &mp.media
			return mp, nil
		}
	}
	mr := multipart.NewReader(br, boundary)
	meta, err := mr.NextPart()
	if err != nil {
		mp.release()
		return nil, badRequest("The multipart body has no metadata part: %v", partErr(err))
	}
	res, err := decodeResource(meta)
	if err != nil {
		mp.release()
		return nil, err
	}
	media, err := mr.NextPart()
	if err != nil {
		mp.release()
		return nil, badRequest("The multipart body has no media part: %v", partErr(err))
	}
	mp.Resource, mp.MediaType, mp.Media = res, partType(media.Header), media
	return mp, nil
}

func partType(h textproto.MIMEHeader) string {
	return h.Get("Content-Type")
}

func partErr(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("unexpected end of body")
	}
	return err
}
