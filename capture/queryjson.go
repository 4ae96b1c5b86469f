package capture

import (
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// queryJSON is the protojson form of the queries events carry, kept for
// the queries seen last: an app runs the same few queries again and
// again, and protojson's reflection cost most of capturing a query's
// request event, where the binary encoding that finds a kept form costs a
// tenth of it.
var queryJSON = jsonMemo{max: 256}

// jsonMemo maps messages, by type and deterministic binary encoding, to
// their protojson form; past max forms it starts again.
type jsonMemo struct {
	mu    sync.Mutex
	max   int
	forms map[string][]byte
}

// of returns m's protojson form (shared: never change it).
func (j *jsonMemo) of(m proto.Message) ([]byte, error) {
	key, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return protojson.Marshal(m)
	}
	key = append(key, 0)
	key = append(key, m.ProtoReflect().Descriptor().FullName()...)
	j.mu.Lock()
	b, ok := j.forms[string(key)]
	j.mu.Unlock()
	if ok {
		return b, nil
	}
	if b, err = protojson.Marshal(m); err != nil {
		return nil, err
	}
	j.mu.Lock()
	if len(j.forms) >= j.max || j.forms == nil {
		j.forms = make(map[string][]byte, j.max)
	}
	j.forms[string(key)] = b
	j.mu.Unlock()
	return b, nil
}
