package hosting

import (
	"mime"
	"path"
	"strings"
)

// mimeType is a Content-Type and whether a response of it is worth
// compressing.
type mimeType struct {
	ctype        string
	compressible bool
}

// mimeTypes are the Content-Types of the files a web app ships, with the
// charset the Hosting emulator (mime-types) adds to textual ones. They do
// not depend on the machine's /etc/mime.types, so every machine serves
// the same headers for them; rarer extensions fall back to Go's mime
// package.
var mimeTypes = map[string]mimeType{
	".html":        {"text/html; charset=utf-8", true},
	".htm":         {"text/html; charset=utf-8", true},
	".shtml":       {"text/html; charset=utf-8", true},
	".css":         {"text/css; charset=utf-8", true},
	".js":          {"application/javascript; charset=utf-8", true},
	".mjs":         {"application/javascript; charset=utf-8", true},
	".cjs":         {"application/node", true},
	".json":        {"application/json; charset=utf-8", true},
	".map":         {"application/json; charset=utf-8", true},
	".webmanifest": {"application/manifest+json; charset=utf-8", true},
	".xml":         {"application/xml", true},
	".rss":         {"application/rss+xml", true},
	".atom":        {"application/atom+xml", true},
	".txt":         {"text/plain; charset=utf-8", true},
	".text":        {"text/plain; charset=utf-8", true},
	".md":          {"text/markdown; charset=utf-8", true},
	".markdown":    {"text/markdown; charset=utf-8", true},
	".csv":         {"text/csv; charset=utf-8", true},
	".ics":         {"text/calendar; charset=utf-8", true},
	".vtt":         {"text/vtt; charset=utf-8", true},
	".yaml":        {"text/yaml; charset=utf-8", true},
	".yml":         {"text/yaml; charset=utf-8", true},
	".svg":         {"image/svg+xml", true},
	".png":         {"image/png", false},
	".apng":        {"image/apng", false},
	".jpg":         {"image/jpeg", false},
	".jpeg":        {"image/jpeg", false},
	".gif":         {"image/gif", false},
	".webp":        {"image/webp", false},
	".avif":        {"image/avif", false},
	".ico":         {"image/vnd.microsoft.icon", true},
	".bmp":         {"image/bmp", true},
	".tif":         {"image/tiff", false},
	".tiff":        {"image/tiff", false},
	".woff":        {"font/woff", false},
	".woff2":       {"font/woff2", false},
	".ttf":         {"font/ttf", true},
	".otf":         {"font/otf", true},
	".eot":         {"application/vnd.ms-fontobject", true},
	".wasm":        {"application/wasm", true},
	".pdf":         {"application/pdf", false},
	".zip":         {"application/zip", false},
	".gz":          {"application/gzip", false},
	".tar":         {"application/x-tar", true},
	".mp3":         {"audio/mpeg", false},
	".wav":         {"audio/wav", false},
	".ogg":         {"audio/ogg", false},
	".m4a":         {"audio/mp4", false},
	".mp4":         {"video/mp4", false},
	".webm":        {"video/webm", false},
	".mov":         {"video/quicktime", false},
	".avi":         {"video/x-msvideo", false},
	".swf":         {"application/x-shockwave-flash", false},
	".bin":         {"application/octet-stream", false},
	".exe":         {"application/octet-stream", false},
	".wgsl":        {"text/wgsl; charset=utf-8", true},
}

// defaultMIME is what a file of an unknown type is served as (the
// emulator sends the literal "Content-Type: false").
var defaultMIME = mimeType{"application/octet-stream", false}

// typeOf returns the Content-Type of a file name.
func typeOf(name string) mimeType {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := mimeTypes[ext]; ok {
		return t
	}
	if ext != "" {
		if t := mime.TypeByExtension(ext); t != "" {
			return mimeType{t, strings.HasPrefix(t, "text/")}
		}
	}
	return defaultMIME
}
