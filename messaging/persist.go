package messaging

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/pyric/pyric/sandbox/service"
)

// The bucket's key space:
//
//	t/<project>\x00<token>   a TokenInfo (deleted tokens stay, so sends
//	                         keep reporting UNREGISTERED)
//	m/<project>\x00<id:020>  a Sent message with its delivery list
//	lastId                   the newest message id
const keyLastID = "lastId"

func tokenKey(t *TokenInfo) []byte { return []byte("t/" + t.Project + "\x00" + t.Token) }

func sentPrefix(project string) []byte { return []byte("m/" + project + "\x00") }

func sentKey(s *Sent) []byte {
	n, _ := strconv.ParseInt(s.ID, 10, 64)
	return append(sentPrefix(s.Project), fmt.Sprintf("%020d", n)...)
}

func putJSON(tx service.Tx, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(key, b)
}

// persist runs fn in one durable transaction when the engine has a
// bucket; the caller changes memory only after it returned nil.
func (e *Engine) persist(fn func(service.Tx) error) error {
	if e.env.Bucket == nil {
		return nil
	}
	if err := e.env.Bucket.Update(fn); err != nil {
		return fmt.Errorf("messaging: persist: %w", err)
	}
	return nil
}

// load rebuilds memory from the bucket.
func (e *Engine) load() error {
	return e.env.Bucket.View(func(tx service.Tx) error {
		if v := tx.Get([]byte(keyLastID)); v != nil {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("lastId %q: %w", v, err)
			}
			e.lastID = n
		}
		if err := tx.ForEach([]byte("t/"), func(k, v []byte) error {
			var t TokenInfo
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("token %q: %w", k, err)
			}
			e.index(&t)
			return nil
		}); err != nil {
			return err
		}
		return tx.ForEach([]byte("m/"), func(k, v []byte) error {
			var s Sent
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("message %q: %w", k, err)
			}
			e.sent[s.Project] = append(e.sent[s.Project], &s)
			return nil
		})
	})
}
