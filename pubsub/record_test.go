package pubsub

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []record{
		{Msg: &Message{ID: "1", Data: []byte("hi"), PublishTime: time.Unix(1, 5).UTC()}},
		{Msg: &Message{ID: "18446744073709551615", Attributes: map[string]string{"a": "b", "": "x"}, OrderingKey: "k", PublishTime: time.Unix(1e9, 0).UTC()}, Attempts: 7, Acked: true},
	} {
		var got record
		if err := decodeRecord(encodeRecord(&r), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip:\n got %+v %+v\nwant %+v %+v", got, got.Msg, r, r.Msg)
		}
	}
	var got record
	if err := decodeRecord([]byte(`{"m":{"id":"3","data":"aGk=","publishTime":"2026-01-01T00:00:00Z"},"a":2}`), &got); err != nil || got.Attempts != 2 || string(got.Msg.Data) != "hi" {
		t.Fatalf("JSON record: %+v %v", got, err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(&record{Msg: &Message{ID: "9", Data: []byte("x"), Attributes: map[string]string{"k": "v"}}}))
	f.Add([]byte{1, 0, 0, 0, 0, 5})
	f.Add([]byte(`{"m":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r record
		if decodeRecord(b, &r) == nil && r.Msg == nil {
			t.Fatal("nil message accepted")
		}
	})
}

// TestRecordJSONAsEncodingJSON: the hand-written encoder writes what
// encoding/json writes for a record, byte for byte.
func TestRecordJSONAsEncodingJSON(t *testing.T) {
	for _, r := range []record{
		{Msg: &Message{ID: "1", PublishTime: time.Unix(1, 5).UTC()}},
		{Msg: &Message{ID: "2", Data: []byte{0, 255, 'x'}, Attributes: map[string]string{"b": "2", "a": "<&>\"\\\n\u00e9\xff", "": ""}, OrderingKey: "k\t", PublishTime: time.Unix(1e9, 123).In(time.FixedZone("x", 3600))}, Attempts: 3, Acked: true},
	} {
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendRecordJSON(nil, &r); string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
