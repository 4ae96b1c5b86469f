package identity

import (
	"encoding/base64"
	"errors"
	"testing"
)

func jwt(payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(payload)) + "."
}

func TestFromAuthorization(t *testing.T) {
	tests := []struct {
		name   string
		header string
		kind   Kind
		uid    string
		err    error
	}{
		{"none", "", Unauthenticated, "", nil},
		{"owner", "Bearer owner", Admin, "", nil},
		{"jwt", "Bearer " + jwt(`{"sub":"alice","email_verified":true,"iat":1}`), User, "alice", nil},
		{"user_id is not the uid", "Bearer " + jwt(`{"user_id":"bob"}`), User, "", nil},
		{"not a jwt", "Bearer abc", 0, "", ErrInvalidJWT},
		{"bad base64", "Bearer a.!!!.c", 0, "", ErrInvalidJWT},
		{"payload not object", "Bearer " + jwt(`[1]`), 0, "", ErrInvalidJWT},
		{"other scheme", "Basic abc", 0, "", ErrInvalidJWT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := FromAuthorization(tt.header)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if id.Kind != tt.kind || id.UID != tt.uid {
				t.Errorf("got %+v", id)
			}
		})
	}
	id, _ := FromAuthorization("Bearer " + jwt(`{"sub":"a","n":3,"f":1.5}`))
	if _, ok := id.Token["n"].(int64); !ok {
		t.Errorf("integral claim is %T, want int64", id.Token["n"])
	}
	if _, ok := id.Token["f"].(float64); !ok {
		t.Errorf("fractional claim is %T, want float64", id.Token["f"])
	}
}

func FuzzFromAuthorization(f *testing.F) {
	f.Add("Bearer owner")
	f.Add("Bearer " + jwt(`{"sub":"x"}`))
	f.Add("Bearer a.b.c")
	f.Fuzz(func(t *testing.T, h string) {
		id, err := FromAuthorization(h)
		if err == nil && id.Kind == User && id.Token == nil {
			t.Fatal("user without token")
		}
	})
}
