package storage

import "testing"

// FuzzStoredFile: the Storage metadata decoder never panics, and what it
// accepts names a valid object.
func FuzzStoredFile(f *testing.F) {
	f.Add([]byte(`{"name":"a/b.txt","bucket":"b","generation":1700000000000,"metageneration":1,"size":3,"md5Hash":"x","crc32c":"123","timeCreated":"2026-01-01T00:00:00.000Z","updated":"2026-01-01T00:00:00Z","downloadTokens":["t"],"customMetadata":{"k":"v","firebaseStorageDownloadTokens":"u,t"}}`))
	f.Add([]byte(`{"name":"","bucket":"b"}`))
	f.Add([]byte(`{"name":"x","bucket":"b","generation":1.7e12}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := decodeStoredFile(data)
		if err != nil {
			return
		}
		if ValidateName(o.Name) != nil || ValidateBucket(o.Bucket) != nil {
			t.Fatalf("accepted an invalid object %q/%q", o.Bucket, o.Name)
		}
	})
}
