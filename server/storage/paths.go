package storageserver

import (
	"net/url"
	"strings"
)

// target is what a /b/… path names.
type target struct {
	Bucket string
	// HasObjects is true when the path goes on past the bucket to /o.
	HasObjects bool
	// Object is the decoded object name after /o/ ("" for the collection).
	Object string
	// Action is what follows the object for copyTo/rewriteTo/compose, with
	// DstBucket and DstObject for copies.
	Action               string
	DstBucket, DstObject string
}

// parsePath decodes an escaped /b/{bucket}[/o[/{object}[/{action}/b/{bucket}/o/{object}]]]
// path. Object names are percent-decoded once, so %2F is a slash inside a
// name (and a literal slash is one too).
func parsePath(escaped string) (target, bool) {
	var t target
	rest, ok := strings.CutPrefix(escaped, "/b/")
	if !ok {
		return t, escaped == "/b"
	}
	bkt, rest, more := strings.Cut(rest, "/")
	var err error
	if t.Bucket, err = url.PathUnescape(bkt); err != nil || t.Bucket == "" {
		return t, false
	}
	if !more {
		return t, true
	}
	if rest == "o" {
		t.HasObjects = true
		return t, true
	}
	obj, ok := strings.CutPrefix(rest, "o/")
	if !ok {
		if rest == "" {
			return t, true
		}
		return t, false
	}
	t.HasObjects = true
	for _, action := range []string{"copyTo", "rewriteTo"} {
		if src, dst, ok := strings.Cut(obj, "/"+action+"/"); ok {
			d, ok := parsePath("/" + dst)
			if !ok || d.Object == "" {
				return t, false
			}
			t.Action, t.DstBucket, t.DstObject = action, d.Bucket, d.Object
			obj = src
			break
		}
	}
	if src, ok := strings.CutSuffix(obj, "/compose"); ok && t.Action == "" {
		t.Action, obj = "compose", src
	}
	if t.Object, err = url.PathUnescape(obj); err != nil {
		return t, false
	}
	return t, true
}

// parseXMLPath decodes the XML API's /{bucket}/{object}.
func parseXMLPath(escaped string) (bucket, object string, ok bool) {
	b, o, found := strings.Cut(strings.TrimPrefix(escaped, "/"), "/")
	if !found || b == "" || o == "" {
		return "", "", false
	}
	bucket, err1 := url.PathUnescape(b)
	object, err2 := url.PathUnescape(o)
	return bucket, object, err1 == nil && err2 == nil
}
