package storageserver

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// The SDKs send a multipart upload in one shape: Content-Type
// "multipart/related; boundary=B" and a body of
//
//	--B\r\n
//	Content-Type: application/json…\r\n
//	\r\n
//	{metadata}\r\n
//	--B\r\n
//	Content-Type: media/type\r\n
//	\r\n
//	bytes…\r\n
//	--B--
//
// (each Content-Type line optional). This file reads that shape without
// mime/multipart, to the same parts and bytes; decodeMultipart gives
// anything else (a preamble, other part headers such as
// Content-Transfer-Encoding, bare \n line ends, a boundary line with
// trailing blanks, …) to mime/multipart. TestSDKShapeMatchesMimeMultipart
// and FuzzSDKShapeMatchesMimeMultipart hold both readings to be the same.

// maxPlainBoundary is the longest boundary read here (RFC 2046 allows
// 70 characters); a longer one goes to mime/multipart.
const maxPlainBoundary = 200

// plainBoundary returns the boundary of a Content-Type of the form
// multipart/<subtype>; boundary=<token>, which mime.ParseMediaType
// reads as a multipart type with that one parameter, and whether
// contentType has that form.
func plainBoundary(contentType string) (string, bool) {
	const prefix, param = "multipart/", "; boundary="
	if len(contentType) < len(prefix) || !strings.EqualFold(contentType[:len(prefix)], prefix) {
		return "", false
	}
	subtype, boundary, ok := strings.Cut(contentType[len(prefix):], param)
	if !ok || !isMIMEToken(subtype) || !isMIMEToken(boundary) || len(boundary) > maxPlainBoundary {
		return "", false
	}
	return boundary, true
}

// isMIMEToken reports whether s is a non-empty RFC 2045 token: visible
// ASCII without tspecials.
func isMIMEToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?=`, c) >= 0 {
			return false
		}
	}
	return true
}

// splitResult says what splitUpload made of the bytes it was given.
type splitResult int

const (
	splitDone  splitResult = iota // both parts' headers and the metadata were read
	splitMore                     // the bytes end before that: more may complete it
	splitOther                    // the body does not have the SDKs' shape
)

// peekUpload reads, without consuming it, the start of a body up to its
// media part's bytes, and returns the metadata part's bytes (in br's
// buffer: valid until br is read), the media part's Content-Type, and how
// many bytes precede the media; ok is false when the body does not have
// the SDKs' shape within br's buffer, and then nothing of it was consumed.
func peekUpload(br *bufio.Reader, nlDashBoundary []byte) (meta []byte, mediaType string, n int, ok bool) {
	for {
		buf, _ := br.Peek(br.Buffered())
		meta, mediaType, n, res := splitUpload(buf, nlDashBoundary)
		switch {
		case res == splitDone:
			return meta, mediaType, n, true
		case res == splitOther || len(buf) == br.Size():
			return nil, "", 0, false
		}
		if _, err := br.Peek(len(buf) + 1); err != nil {
			return nil, "", 0, false
		}
	}
}

// splitUpload reads buf as the start of a body of the SDKs' shape.
func splitUpload(buf, nlDashBoundary []byte) (meta []byte, mediaType string, n int, res splitResult) {
	dashBoundary := nlDashBoundary[2:]
	p, res := cutPrefix(buf, dashBoundary)
	if res == splitDone {
		p, res = cutPrefix(p, crlf)
	}
	if res != splitDone {
		return nil, "", 0, res
	}
	if _, p, res = partHeader(p); res != splitDone { // the metadata's type is not read
		return nil, "", 0, res
	}
	// The metadata runs to the first "\r\n--B", which must end its line
	// (mime/multipart reads other bytes after it differently: as data,
	// or as the last boundary, or an error). A part that starts with
	// "--B" is empty to mime/multipart.
	if len(p) < len(dashBoundary) {
		return nil, "", 0, splitMore
	}
	if bytes.HasPrefix(p, dashBoundary) {
		return nil, "", 0, splitOther
	}
	end := bytes.Index(p, nlDashBoundary)
	if end < 0 {
		return nil, "", 0, splitMore
	}
	meta = p[:end]
	if p, res = cutPrefix(p[end+len(nlDashBoundary):], crlf); res != splitDone {
		return nil, "", 0, res
	}
	typ, p, res := partHeader(p)
	if res != splitDone {
		return nil, "", 0, res
	}
	return meta, string(typ), len(buf) - len(p), splitDone
}

var crlf = []byte("\r\n")

// cutPrefix returns p after prefix.
func cutPrefix(p, prefix []byte) ([]byte, splitResult) {
	if len(p) < len(prefix) {
		if bytes.HasPrefix(prefix, p) {
			return nil, splitMore
		}
		return nil, splitOther
	}
	if !bytes.HasPrefix(p, prefix) {
		return nil, splitOther
	}
	return p[len(prefix):], splitDone
}

// partHeader reads a part's header lines, up to and with the empty one,
// and returns its Content-Type (as textproto reads it: the value without
// the blanks around it; in p) and the bytes after. Only one Content-Type line
// and lines ending in \r\n are of the SDKs' shape: any other header
// could change how mime/multipart reads the part.
func partHeader(p []byte) (contentType, rest []byte, res splitResult) {
	seen := false
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return nil, nil, splitMore
		}
		if i == 0 || p[i-1] != '\r' {
			return nil, nil, splitOther
		}
		line := p[:i-1]
		p = p[i+1:]
		if len(line) == 0 {
			return contentType, p, splitDone
		}
		const name = "Content-Type:"
		if seen || len(line) < len(name) || !strings.EqualFold(string(line[:len(name)]), name) {
			return nil, nil, splitOther
		}
		if len(p) == 0 {
			return nil, nil, splitMore // the next line could continue this one
		}
		if p[0] == ' ' || p[0] == '\t' {
			return nil, nil, splitOther // it does
		}
		v := bytes.Trim(line[len(name):], " \t")
		for _, c := range v {
			if c < ' ' || c > '~' {
				return nil, nil, splitOther
			}
		}
		contentType, seen = v, true
	}
}

// mediaPart reads a media part's bytes from the body up to the
// delimiter "\r\n--B" that ends it, as a mime/multipart part does: a
// delimiter counts when a blank, a line end, or "--" follows it (or the
// body ends after it), and at the part's very start "--B" without the
// line end before it counts too. A body that ends before the delimiter
// is an io.ErrUnexpectedEOF after its bytes, so a cut-short upload
// never stores what arrived.
type mediaPart struct {
	br             *bufio.Reader
	nlDashBoundary []byte
	read           int64 // bytes returned so far
	ready          int   // buffered bytes known to be the part's, not yet returned
	after          error // what follows the ready bytes: nil, io.EOF at the delimiter, or a read error
	readErr        error // the body's error, once it had one
}

func (m *mediaPart) Read(d []byte) (int, error) {
	for m.ready == 0 && m.after == nil {
		buf, _ := m.br.Peek(m.br.Buffered())
		m.ready, m.after = m.scan(buf)
		if m.ready == 0 && m.after == nil {
			// Nothing can be decided on these bytes: read more.
			if _, m.readErr = m.br.Peek(len(buf) + 1); m.readErr == io.EOF {
				m.readErr = io.ErrUnexpectedEOF
			}
		}
	}
	if m.ready == 0 {
		return 0, m.after
	}
	n, _ := m.br.Read(d[:min(len(d), m.ready)])
	m.read += int64(n)
	m.ready -= n
	if m.ready == 0 {
		return n, m.after
	}
	return n, nil
}

// scan decides how many of buf's bytes are the part's and what follows
// them.
func (m *mediaPart) scan(buf []byte) (int, error) {
	nlDash := m.nlDashBoundary
	if m.read == 0 {
		dash := nlDash[2:]
		if bytes.HasPrefix(buf, dash) {
			return m.delimiterAt(buf, 0, len(dash))
		}
		if bytes.HasPrefix(dash, buf) {
			return 0, m.readErr // too few bytes to tell
		}
	}
	if i := bytes.Index(buf, nlDash); i >= 0 {
		return m.delimiterAt(buf, i, len(nlDash))
	}
	if bytes.HasPrefix(nlDash, buf) {
		return 0, m.readErr
	}
	// Bytes up to a last '\r' that may start the delimiter are the
	// part's; so are all when none may.
	if i := bytes.LastIndexByte(buf, '\r'); i >= 0 && bytes.HasPrefix(nlDash, buf[i:]) {
		return i, nil
	}
	return len(buf), m.readErr
}

// delimiterAt answers scan for a delimiter of size bytes found at buf[i:]:
// the part ends at i if it is one, goes on past it if it is not, and is
// undecided while the bytes after it are not there yet.
func (m *mediaPart) delimiterAt(buf []byte, i, size int) (int, error) {
	after := buf[i+size:]
	switch {
	case len(after) == 0 && m.readErr != nil:
		return i, io.EOF
	case len(after) == 0:
		return i, nil
	case after[0] == ' ' || after[0] == '\t' || after[0] == '\r' || after[0] == '\n':
		return i, io.EOF
	case after[0] == '-' && len(after) == 1 && m.readErr == nil:
		return i, nil
	case after[0] == '-' && len(after) > 1 && after[1] == '-':
		return i, io.EOF
	}
	return i + size, nil // not a delimiter: its bytes are the part's
}
