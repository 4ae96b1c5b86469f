package storageserver

import "encoding/base64"

func b64(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
