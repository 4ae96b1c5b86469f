package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/pyric/pyric/sandbox/service"
)

// State is the engine's snapshot state, the one declaration of its
// schema (service.TypedState): every object's metadata and bytes.
type State struct {
	Objects []StateObject `json:"objects"`
	// Captured are objects' metadata without their bytes, by bucket and
	// name: what a session capture appends object by object (Records).
	// They are restored as objects with no bytes, after Objects.
	Captured map[string]map[string]*Object `json:"captured,omitempty"`
}

// objects returns the state's objects, the captured ones (by bucket then
// name) after Objects.
func (s *State) objects() []StateObject {
	out := s.Objects
	for _, bkt := range sortedKeys(s.Captured) {
		for _, name := range sortedKeys(s.Captured[bkt]) {
			if o := s.Captured[bkt][name]; o != nil {
				c := *o
				c.Bucket, c.Name = bkt, name
				out = append(out, StateObject{Object: c})
			}
		}
	}
	return out
}

// StateObject is one object of a State: its metadata and its bytes
// (base64 in JSON).
type StateObject struct {
	Object
	Data []byte `json:"data"`
}

// Snapshot implements service.Service.
func (e *Engine) Snapshot() (json.RawMessage, error) {
	e.mu.Lock()
	var objs []*Object
	for _, bn := range sortedBuckets(e.buckets) {
		b := e.buckets[bn]
		for _, n := range b.names() {
			if o := e.visible(bn, n, b.objects[n]); o != nil {
				objs = append(objs, o.clone())
			}
		}
	}
	readers := make([]*objectReader, len(objs))
	var err error
	for i, o := range objs {
		if readers[i], err = e.openObject(o); err != nil {
			break
		}
	}
	e.mu.Unlock()
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.Close()
			}
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("storage: snapshot: %w", err)
	}
	s := State{Objects: make([]StateObject, len(objs))}
	for i, o := range objs {
		data, err := io.ReadAll(readers[i])
		if err != nil {
			return nil, fmt.Errorf("storage: snapshot: %w", err)
		}
		s.Objects[i] = StateObject{Object: *o, Data: data}
	}
	return json.Marshal(s)
}

// Objects returns the metadata of every object, by bucket then name,
// without reading any bytes (what a session capture keeps).
func (e *Engine) Objects() []*Object {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*Object
	for _, bn := range sortedBuckets(e.buckets) {
		b := e.buckets[bn]
		for _, n := range b.names() {
			if o := e.visible(bn, n, b.objects[n]); o != nil {
				out = append(out, o.clone())
			}
		}
	}
	return out
}

func sortedBuckets(m map[string]*bucket) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// Restore implements service.Service: the snapshot's objects replace the
// engine's, bytes first, then the metadata in one Bucket transaction. A
// snapshot that does not decode leaves the state as it was.
func (e *Engine) Restore(state json.RawMessage) error {
	var s State
	if len(bytes.TrimSpace(state)) > 0 && string(bytes.TrimSpace(state)) != "null" {
		if err := json.Unmarshal(state, &s); err != nil {
			return fmt.Errorf("storage: restore: %w", err)
		}
	}
	s.Objects = s.objects()
	for i := range s.Objects {
		o := &s.Objects[i].Object
		if err := validate(o.Bucket, o.Name); err != nil {
			return fmt.Errorf("storage: restore objects[%d]: %w", i, err)
		}
		o.Size = int64(len(s.Objects[i].Data))
		if o.Metageneration < 1 {
			o.Metageneration = 1
		}
	}
	e.lockAllSettled()
	defer e.mu.Unlock()
	// A restored object keeps its generation unless a live object of
	// another content holds it; a live blob of the same generation and
	// checksum is the same bytes and is kept.
	live := map[int64]*Object{}
	for _, b := range e.buckets {
		for _, o := range b.objects {
			live[o.Generation] = o
		}
	}
	type staged struct {
		o      *Object
		reused bool
	}
	var objs []staged
	undo := func() {
		for _, st := range objs {
			if !st.reused {
				e.blobs.remove(st.o.Generation)
			}
		}
	}
	for i := range s.Objects {
		so := &s.Objects[i]
		o := so.Object.clone()
		h := newHasher()
		h.write(so.Data)
		o.MD5Hash, o.CRC32C = h.sums()
		if l := live[o.Generation]; o.Generation > 0 && l != nil && l.MD5Hash == o.MD5Hash && l.Size == o.Size {
			objs = append(objs, staged{o: o, reused: true})
			continue
		}
		if o.Generation <= 0 || live[o.Generation] != nil {
			o.Generation = e.nextGen()
		} else if o.Generation > e.lastGen {
			e.lastGen = o.Generation
		}
		w, err := e.blobs.create()
		if err == nil {
			if _, err = w.Write(so.Data); err == nil {
				err = w.finish()
			}
			if err == nil {
				err = w.commit(o.Generation)
			} else {
				w.abort()
			}
		}
		if err != nil {
			undo()
			return fmt.Errorf("storage: restore %s/%s: %w", o.Bucket, o.Name, err)
		}
		live[o.Generation] = o
		objs = append(objs, staged{o: o})
	}
	var err error
	switch {
	case e.env.Log != nil:
		// One record: every object out, the restored ones in.
		changes := []service.LogChange{{Key: "", Prefix: true}}
		for _, st := range objs {
			b, merr := e.record(st.o)
			if merr != nil {
				err = merr
				break
			}
			changes = append(changes, service.LogChange{Key: objLogKey(st.o.Bucket, st.o.Name), Value: b})
		}
		if err == nil {
			err = e.env.Log.Append(objectSpace, changes)
		}
	case e.env.Bucket != nil:
		err = e.env.Bucket.Update(func(tx service.Tx) error {
			if err := tx.DeletePrefix([]byte(objPrefix)); err != nil {
				return err
			}
			for _, st := range objs {
				b, err := e.record(st.o)
				if err != nil {
					return err
				}
				if err := tx.Put(objKey(st.o.Bucket, st.o.Name), b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		undo()
		return fmt.Errorf("storage: restore: %w", err)
	}
	old := e.buckets
	e.buckets = map[string]*bucket{}
	keep := map[int64]bool{}
	for _, st := range objs {
		e.bucketFor(st.o.Bucket).put(st.o)
		keep[st.o.Generation] = true
	}
	for _, b := range old {
		for _, o := range b.objects {
			if !keep[o.Generation] {
				e.blobs.remove(o.Generation)
			}
		}
	}
	return nil
}
