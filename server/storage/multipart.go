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

	body *bufio.Reader // pooled: see release
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
func decodeMultipart(contentType string, body io.Reader) (*multipartUpload, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return nil, badRequest("A multipart upload needs Content-Type multipart/related with a boundary, not %q.", contentType)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, badRequest("The multipart Content-Type has no boundary.")
	}
	br := multipartBodies.Get().(*bufio.Reader)
	br.Reset(body)
	mp := &multipartUpload{body: br}
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
