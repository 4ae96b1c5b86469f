package pubsub

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// state is the engine's whole state as Snapshot writes it: every
// configuration and every queue's records (acknowledged ones only where
// retain_acked_messages kept them). Leases are not state: after a
// Restore every unacknowledged message is deliverable.
type state struct {
	LastID        uint64      `json:"lastId,string"`
	Topics        []*Topic    `json:"topics"`
	Subscriptions []queueDump `json:"subscriptions"`
	Snapshots     []queueDump `json:"snapshots"`
	// Schemas lists every revision of each schema, oldest first.
	Schemas []*Schema `json:"schemas,omitempty"`
}

type queueDump struct {
	Subscription *Subscription `json:"subscription,omitempty"`
	Snapshot     *Snapshot     `json:"snapshot,omitempty"`
	Messages     []record      `json:"messages"`
}

// stateOut is state as Snapshot writes it: each queue's messages
// already encoded (appendRecordJSON), without reflection over a large
// backlog.
type stateOut struct {
	LastID        uint64         `json:"lastId,string"`
	Topics        []*Topic       `json:"topics"`
	Subscriptions []queueDumpOut `json:"subscriptions"`
	Snapshots     []queueDumpOut `json:"snapshots"`
	Schemas       []*Schema      `json:"schemas,omitempty"`
}

type queueDumpOut struct {
	Subscription *Subscription   `json:"subscription,omitempty"`
	Snapshot     *Snapshot       `json:"snapshot,omitempty"`
	Messages     json.RawMessage `json:"messages"`
}

// Snapshot returns the engine's state as JSON.
func (e *Engine) Snapshot() (json.RawMessage, error) {
	e.mu.Lock()
	st := stateOut{LastID: e.lastID}
	type q struct {
		d   *queueDumpOut
		uid string
	}
	var qs []q
	for _, n := range sortedKeys(e.topics) {
		st.Topics = append(st.Topics, cloneTopic(e.topics[n].cfg))
	}
	for _, n := range sortedKeys(e.schemas) {
		for _, r := range e.schemas[n].revs { // every revision, oldest first
			st.Schemas = append(st.Schemas, cloneSchema(r.cfg, true))
		}
	}
	for _, n := range sortedKeys(e.subs) {
		s := e.subs[n]
		st.Subscriptions = append(st.Subscriptions, queueDumpOut{Subscription: cloneSub(s.cfg)})
	}
	for i, n := range sortedKeys(e.subs) {
		qs = append(qs, q{&st.Subscriptions[i], e.subs[n].uid})
	}
	for _, n := range sortedKeys(e.snaps) {
		c := *e.snaps[n].cfg
		st.Snapshots = append(st.Snapshots, queueDumpOut{Snapshot: &c})
	}
	for i, n := range sortedKeys(e.snaps) {
		qs = append(qs, q{&st.Snapshots[i], e.snaps[n].uid})
	}
	e.mu.Unlock()
	err := e.bucket.View(func(tx service.Tx) error {
		var r record
		for _, x := range qs {
			b := []byte{'['}
			if err := forEachQueued(tx, x.uid, 0, func(q *queued) error {
				r = q.rec
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = appendRecordJSON(b, &r)
				return nil
			}); err != nil {
				return err
			}
			x.d.Messages = append(b, ']')
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(&st)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Restore replaces the engine's state with a Snapshot's output; on
// error nothing changes.
func (e *Engine) Restore(raw json.RawMessage) error {
	var st state
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("pubsub: restore: %w", err)
		}
	}
	for _, t := range st.Topics {
		if t == nil {
			return fmt.Errorf("pubsub: restore: a null topic")
		}
		if _, _, err := ParseName(kindTopics, t.Name); err != nil {
			return fmt.Errorf("pubsub: restore: %w", err)
		}
	}
	for _, d := range st.Subscriptions {
		if d.Subscription == nil {
			return fmt.Errorf("pubsub: restore: a subscription without its configuration")
		}
		c := cloneSub(d.Subscription)
		if err := checkSub(c); err != nil {
			return fmt.Errorf("pubsub: restore %s: %w", d.Subscription.Name, err)
		}
	}
	for _, d := range st.Snapshots {
		if d.Snapshot == nil {
			return fmt.Errorf("pubsub: restore: a snapshot without its configuration")
		}
	}
	for _, sc := range st.Schemas {
		if sc == nil {
			return fmt.Errorf("pubsub: restore: a null schema")
		}
		if _, _, err := ParseName(kindSchemas, sc.Name); err != nil {
			return fmt.Errorf("pubsub: restore: %w", err)
		}
		if _, err := compileSchema(sc.Type, sc.Definition); err != nil {
			return fmt.Errorf("pubsub: restore %s: %w", sc.Name, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.com.do(func(tx service.Tx) error {
		for _, p := range []string{"t/", "s/", "n/", "q/", "k/", "x/"} {
			if err := tx.DeletePrefix([]byte(p)); err != nil {
				return err
			}
		}
		last := st.LastID
		// A schema's revisions are its entries, oldest first.
		revs := map[string]*schemaRecord{}
		for _, sc := range st.Schemas {
			if revs[sc.Name] == nil {
				revs[sc.Name] = &schemaRecord{}
			}
			revs[sc.Name].Revisions = append(revs[sc.Name].Revisions, sc)
		}
		for name, r := range revs {
			if err := putJSON(tx, schemaKey(name), r); err != nil {
				return err
			}
		}
		for _, t := range st.Topics {
			if err := putJSON(tx, topicKey(t.Name), t); err != nil {
				return err
			}
		}
		put := func(uid string, msgs []record) error {
			for i := range msgs {
				r := &msgs[i]
				if r.Msg == nil {
					return fmt.Errorf("a message without content")
				}
				n, err := strconv.ParseUint(r.Msg.ID, 10, 64)
				if err != nil {
					return fmt.Errorf("message id %q: %w", r.Msg.ID, err)
				}
				last = max(last, n)
				if err := putRecord(tx, queueKey(uid, n), r); err != nil {
					return err
				}
			}
			return nil
		}
		for _, d := range st.Subscriptions {
			rec := subRecord{Config: d.Subscription, UID: e.env.NewID()}
			if err := putJSON(tx, subKey(d.Subscription.Name), &rec); err != nil {
				return err
			}
			if err := put(rec.UID, d.Messages); err != nil {
				return err
			}
		}
		for _, d := range st.Snapshots {
			rec := snapRecord{Config: d.Snapshot, UID: e.env.NewID()}
			if err := putJSON(tx, snapKey(d.Snapshot.Name), &rec); err != nil {
				return err
			}
			if err := put(rec.UID, d.Messages); err != nil {
				return err
			}
		}
		return tx.Put(keyLastID, []byte(strconv.FormatUint(last, 10)))
	})
	if err != nil {
		return fmt.Errorf("pubsub: restore: %w", err)
	}
	for _, s := range e.subs {
		e.dropSub(s)
	}
	e.clear()
	err = e.load()
	for _, s := range e.subs {
		e.startPush(s)
	}
	e.emit(event.Event{Kind: event.KindMutation, Method: "pubsub.restore", Mutation: &event.Mutation{Op: "pubsub_restore"}})
	return err
}

// Stats returns a subscription's backlog figures.
func (e *Engine) Stats(sub string) (SubStats, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[sub]
	if s == nil {
		return SubStats{}, errSubNotFound
	}
	return e.statsLocked(s), nil
}

func (e *Engine) statsLocked(s *subState) SubStats {
	st := SubStats{Backlog: s.backlog, Outstanding: len(s.leases)}
	for _, en := range s.entries {
		if st.OldestAt.IsZero() || en.msg.PublishTime.Before(st.OldestAt) {
			st.OldestAt = en.msg.PublishTime
		}
	}
	return st
}

// Peek returns up to max of a subscription's unacknowledged messages in
// order without leasing them.
func (e *Engine) Peek(sub string, max int) ([]*Message, error) {
	e.mu.Lock()
	s := e.subs[sub]
	if s == nil {
		e.mu.Unlock()
		return nil, errSubNotFound
	}
	uid := s.uid
	e.mu.Unlock()
	var out []*Message
	err := e.bucket.View(func(tx service.Tx) error {
		return forEachQueued(tx, uid, 0, func(q *queued) error {
			if len(out) >= max {
				return errStop
			}
			if !q.rec.Acked {
				out = append(out, q.rec.Msg)
			}
			return nil
		})
	})
	if err != nil && err != errStop {
		return nil, err
	}
	return out, nil
}

var errStop = fmt.Errorf("stop")

// TopicView is a topic and its subscriptions as Studio and MCP list them.
type TopicView struct {
	Topic         *Topic             `json:"topic"`
	Subscriptions []SubscriptionView `json:"subscriptions"`
}

// SubscriptionView is a subscription with its backlog figures.
type SubscriptionView struct {
	Subscription *Subscription `json:"subscription"`
	Stats        SubStats      `json:"stats"`
}

// Overview lists every topic with its subscriptions (and, under the
// empty topic name, subscriptions whose topic was deleted), by name.
func (e *Engine) Overview() []TopicView {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []TopicView
	byTopic := map[string]int{}
	for _, n := range sortedKeys(e.topics) {
		byTopic[n] = len(out)
		out = append(out, TopicView{Topic: cloneTopic(e.topics[n].cfg), Subscriptions: []SubscriptionView{}})
	}
	for _, n := range sortedKeys(e.subs) {
		s := e.subs[n]
		v := SubscriptionView{Subscription: cloneSub(s.cfg), Stats: e.statsLocked(s)}
		i, ok := byTopic[s.cfg.Topic]
		if !ok {
			byTopic[s.cfg.Topic] = len(out)
			i = len(out)
			out = append(out, TopicView{Topic: &Topic{Name: s.cfg.Topic}})
		}
		out[i].Subscriptions = append(out[i].Subscriptions, v)
	}
	return out
}

// captureOut is the state a session capture keeps: every configuration
// and each subscription's counts, not the messages (the capture's
// publish events list them). The recorder rewrites it after changes, so
// it must cost the number of configurations, not the backlog: the full
// Snapshot made every flush cost every stored message and took a third
// of a publishing server's CPU.
type captureOut struct {
	LastID        uint64        `json:"lastId,string"`
	Topics        []*Topic      `json:"topics"`
	Subscriptions []capturedSub `json:"subscriptions"`
	Snapshots     []*Snapshot   `json:"snapshots"`
	Schemas       []*Schema     `json:"schemas,omitempty"`
}

type capturedSub struct {
	Subscription *Subscription `json:"subscription"`
	SubStats
}

// CaptureState implements service.Capturer.
func (e *Engine) CaptureState() (json.RawMessage, error) {
	e.mu.Lock()
	out := captureOut{LastID: e.lastID, Topics: []*Topic{}, Subscriptions: []capturedSub{}, Snapshots: []*Snapshot{}}
	for _, n := range sortedKeys(e.topics) {
		out.Topics = append(out.Topics, cloneTopic(e.topics[n].cfg))
	}
	for _, n := range sortedKeys(e.subs) {
		s := e.subs[n]
		out.Subscriptions = append(out.Subscriptions, capturedSub{Subscription: cloneSub(s.cfg), SubStats: e.statsLocked(s)})
	}
	for _, n := range sortedKeys(e.snaps) {
		c := *e.snaps[n].cfg
		out.Snapshots = append(out.Snapshots, &c)
	}
	for _, n := range sortedKeys(e.schemas) {
		out.Schemas = append(out.Schemas, cloneSchema(e.schemas[n].current().cfg, true))
	}
	e.mu.Unlock()
	return json.Marshal(out)
}
