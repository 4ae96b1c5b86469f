package storage

import (
	"encoding/json"
	"strings"

	"github.com/pyric/pyric/event"
)

// Storage's state in a session capture is record by record
// (service.Records): an object is one record, its metadata without its
// bytes (as CaptureState keeps it) at key ["captured", bucket, name] of
// the state (State.Captured). So a capture appends the objects a change
// touched instead of listing every object again at each flush.

// RecordChange names the object a change event (upload, metadata
// update, delete, download token) touched, as a token for Records: its
// bucket, a NUL and its name. Other events (rules) are no record.
func (e *Engine) RecordChange(ev event.Event) (string, bool) {
	if ev.Kind != event.KindMutation || ev.Mutation == nil {
		return "", false
	}
	switch ev.Method {
	case OpObjectPut, OpObjectDelete, OpMetadataUpdate, OpTokenCreate:
	default:
		return "", false
	}
	view := ev.Mutation.Current
	if view == nil {
		view = ev.Mutation.Previous
	}
	m, _ := view.(map[string]any)
	bkt, _ := m["bucket"].(string)
	if bkt == "" || ev.Path == "" {
		return "", false
	}
	return bkt + "\x00" + ev.Path, true
}

// Records calls fn with the object token names as it is now (nil:
// absent).
func (e *Engine) Records(token string, fn func(key []string, value json.RawMessage) error) error {
	bkt, name, ok := strings.Cut(token, "\x00")
	if !ok {
		return nil
	}
	e.rlockSettled(bkt, name) // a read: uploads and downloads go on meanwhile
	var o *Object
	if cur := e.lookup(bkt, name); cur != nil {
		o = cur.clone()
	}
	e.mu.RUnlock()
	var v json.RawMessage
	if o != nil {
		b, err := marshalObject(o)
		if err != nil {
			return err
		}
		v = b
	}
	return fn([]string{"captured", bkt, name}, v)
}

// EachRecord calls fn with every object's metadata.
func (e *Engine) EachRecord(fn func(key []string, value json.RawMessage) error) error {
	for _, o := range e.Objects() {
		b, err := marshalObject(o)
		if err != nil {
			return err
		}
		if err := fn([]string{"captured", o.Bucket, o.Name}, b); err != nil {
			return err
		}
	}
	return nil
}
