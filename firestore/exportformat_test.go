package firestore

import (
	"bytes"
	"testing"
)

func FuzzReadLog(f *testing.F) {
	f.Add(writeLog([][]byte{[]byte("hello"), bytes.Repeat([]byte("x"), 40000)}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := readLog(data)
		if err != nil {
			return
		}
		for _, r := range recs {
			decodeEntity(r, exportTestDB) // must not panic
		}
	})
}

var exportTestDB = DatabaseName{Project: "p", Database: "(default)"}
