package storageserver

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// multipartUpload is a decoded multipart/related upload: the metadata part
// and a reader of the media part, streamed from the request body.
type multipartUpload struct {
	Resource  *resource
	MediaType string
	Media     io.Reader
}

// decodeMultipart reads a multipart/related body (JS SDK and GCS
// uploadType=multipart): a JSON metadata part, then the bytes. The media
// part is not buffered.
func decodeMultipart(contentType string, body io.Reader) (*multipartUpload, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return nil, badRequest("A multipart upload needs Content-Type multipart/related with a boundary, not %q.", contentType)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, badRequest("The multipart Content-Type has no boundary.")
	}
	mr := multipart.NewReader(body, boundary)
	meta, err := mr.NextPart()
	if err != nil {
		return nil, badRequest("The multipart body has no metadata part: %v", partErr(err))
	}
	res, err := decodeResource(meta)
	if err != nil {
		return nil, err
	}
	media, err := mr.NextPart()
	if err != nil {
		return nil, badRequest("The multipart body has no media part: %v", partErr(err))
	}
	return &multipartUpload{Resource: res, MediaType: partType(media.Header), Media: media}, nil
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
