package messaging

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// Production's web registration tokens: "<22-character instance id>:" then
// "APA91b" and more URL-safe base64, 142 characters in all (the matrix's
// messaging-web-token-shape observation).
const (
	tokenLength     = 142
	instanceIDChars = 22
	tokenMarker     = "APA91b"
)

// mintToken derives a token in production's shape from a seed (an id from
// the sandbox's id source) and a counter, so a deterministic sandbox mints
// the same tokens on every run.
func mintToken(project, seed string, n uint64) string {
	var buf []byte
	block := func(i uint64) []byte {
		h := sha256.New()
		h.Write([]byte(project))
		h.Write([]byte{0})
		h.Write([]byte(seed))
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], n)
		binary.BigEndian.PutUint64(b[8:], i)
		h.Write(b[:])
		return h.Sum(nil)
	}
	for i := uint64(0); len(buf) < 112; i++ {
		buf = append(buf, block(i)...)
	}
	enc := base64.RawURLEncoding
	id := enc.EncodeToString(buf[:16])[:instanceIDChars]
	rest := enc.EncodeToString(buf[16:112])
	tok := id + ":" + tokenMarker + rest
	return tok[:tokenLength]
}

// wellFormedToken reports whether s has the characters a registration
// token can have (URL-safe base64 and ':'), so a caller-chosen token
// registered through the emulator endpoint still looks like one.
func wellFormedToken(s string) bool {
	if s == "" || len(s) > 4096 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}
