package firestore

import (
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

func FuzzDecodeJSONFields(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `{"a": {"__type": "timestamp", "seconds": 1, "nanos": 2}}`, `{"v": {"__type__": "__vector__", "value": [1]}}`,
		`{"r": {"__type": "reference", "path": "a/b"}}`, `{"f": {"__type": "float", "value": "NaN"}}`, `{"x": 99999999999999999999}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := DecodeJSONFields(data, testDB)
		if err != nil {
			return
		}
		enc := EncodeFields(fields, testDB)
		back, err := DecodeFields(enc, testDB)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", data, err)
		}
		if !fieldsEqualNaN(fields, back) {
			t.Fatalf("round trip of %s changed the fields", data)
		}
	})
}

// fieldsEqualNaN compares by Firestore order, where NaN equals NaN.
func fieldsEqualNaN(a, b map[string]*pb.Value) bool {
	return Compare(Map(a), Map(b)) == 0
}
