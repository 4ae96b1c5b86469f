package storageserver

import (
	"mime"
	"strings"
)

// activeSandbox is the Content-Security-Policy an object of an active
// content type is served with: the browser renders it in a unique opaque
// origin with no script, so an uploaded page cannot act as the Storage
// port's loopback origin (which the origin policy trusts). The Studio's
// preview sends the same.
const activeSandbox = "sandbox"

// guardContent adds the headers that keep a stored object from becoming
// script on the port's origin: nosniff on every object (a text/plain
// object is never run as a script or styles, never sniffed as HTML), and
// a sandbox for the types a browser runs (HTML, SVG, XML, JavaScript).
// Objects stay inline, as production serves them (the Firebase SDKs'
// getBlob and the GCS clients read the bytes the same either way).
func guardContent(h *mediaHeader, contentType string) {
	h.set("X-Content-Type-Options", "nosniff")
	if activeType(contentType) {
		h.set("Content-Security-Policy", activeSandbox)
	}
}

// activeType reports whether a browser opening an object of this type
// could run script in it. An unparsable type counts as active.
func activeType(contentType string) bool {
	if passiveTypes[contentType] {
		return false
	}
	return parsedActive(contentType)
}

// passiveTypes are common content types no browser runs script in,
// answered without parsing (mime.ParseMediaType allocates its parameters'
// map on every download); TestPassiveTypesParsePassive holds them to
// parsedActive's answer.
var passiveTypes = map[string]bool{
	"application/octet-stream": true, "application/json": true, "application/pdf": true, "application/zip": true,
	"text/plain": true, "text/plain; charset=utf-8": true, "text/csv": true,
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"video/mp4": true, "video/webm": true, "audio/mpeg": true, "audio/ogg": true,
}

// parsedActive is activeType for any content type: parsed.
func parsedActive(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return false // served as application/octet-stream: downloaded
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return true
	}
	switch {
	case mt == "text/html", mt == "application/xhtml+xml", mt == "image/svg+xml",
		mt == "text/xml", mt == "application/xml", mt == "text/xsl", mt == "application/xslt+xml",
		strings.HasSuffix(mt, "+xml"), strings.Contains(mt, "javascript"), strings.Contains(mt, "ecmascript"),
		mt == "multipart/x-mixed-replace":
		return true
	}
	return false
}
