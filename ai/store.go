package ai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pyric/pyric/sandbox/service"
)

// The bucket layout: one key per project script, one per call record
// (ordered by sequence), and the sequence counter.
//
//	script/<project>              JSON []Entry
//	call/<project>/<%020d seq>    JSON CallRecord
//	seq                           decimal
func scriptKey(project string) []byte  { return []byte("script/" + project) }
func callPrefix(project string) []byte { return []byte("call/" + project + "/") }
func callKey(project string, seq int64) []byte {
	return []byte(fmt.Sprintf("call/%s/%020d", project, seq))
}

var seqKey = []byte("seq")

func (e *Engine) update(fn func(service.Tx) error) error {
	if e.env.Bucket == nil {
		return nil
	}
	if err := e.env.Bucket.Update(fn); err != nil {
		return fmt.Errorf("ai: persist: %w", err)
	}
	return nil
}

func (e *Engine) persistScript(project string, entries []Entry) error {
	return e.update(func(tx service.Tx) error {
		if len(entries) == 0 {
			return tx.Delete(scriptKey(project))
		}
		b, err := wireJSON(entries) // raw envelopes keep their text (whitespace aside)
		if err != nil {
			return err
		}
		return tx.Put(scriptKey(project), b)
	})
}

func (e *Engine) persistCall(project string, rec *CallRecord, dropped []callRef) error {
	return e.update(func(tx service.Tx) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := tx.Put(callKey(project, rec.Seq), b); err != nil {
			return err
		}
		for _, d := range dropped {
			if err := tx.Delete(callKey(d.project, d.seq)); err != nil {
				return err
			}
		}
		return tx.Put(seqKey, []byte(fmt.Sprint(rec.Seq)))
	})
}

func (e *Engine) persistClear(project string) error {
	return e.update(func(tx service.Tx) error {
		if err := tx.Delete(scriptKey(project)); err != nil {
			return err
		}
		return tx.DeletePrefix(callPrefix(project))
	})
}

func (e *Engine) persistAll(s snapshot) error {
	return e.update(func(tx service.Tx) error {
		for _, p := range [][]byte{[]byte("script/"), []byte("call/")} {
			if err := tx.DeletePrefix(p); err != nil {
				return err
			}
		}
		for p, ps := range s.Projects {
			if len(ps.Script) > 0 {
				b, err := wireJSON(ps.Script)
				if err != nil {
					return err
				}
				if err := tx.Put(scriptKey(p), b); err != nil {
					return err
				}
			}
			for _, c := range ps.Calls {
				b, err := json.Marshal(c)
				if err != nil {
					return err
				}
				if err := tx.Put(callKey(p, c.Seq), b); err != nil {
					return err
				}
			}
		}
		return tx.Put(seqKey, []byte(fmt.Sprint(s.Seq)))
	})
}

// load restores the engine's state from its bucket.
func (e *Engine) load() error {
	if e.env.Bucket == nil {
		return nil
	}
	return e.env.Bucket.View(func(tx service.Tx) error {
		if v := tx.Get(seqKey); v != nil {
			fmt.Sscan(string(v), &e.seq)
		}
		if err := tx.ForEach([]byte("script/"), func(k, v []byte) error {
			entries, err := DecodeScript(v)
			if err != nil {
				return fmt.Errorf("ai: stored script %s: %w", k, err)
			}
			e.project(string(k[len("script/"):])).Script = entries
			return nil
		}); err != nil {
			return err
		}
		return tx.ForEach([]byte("call/"), func(k, v []byte) error {
			rest := k[len("call/"):]
			i := bytes.LastIndexByte(rest, '/')
			if i < 0 {
				return nil
			}
			var rec CallRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("ai: stored call %s: %w", k, err)
			}
			ps := e.project(string(rest[:i]))
			ps.Calls = append(ps.Calls, &rec)
			return nil
		})
	})
}
