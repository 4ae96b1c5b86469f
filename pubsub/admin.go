package pubsub

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pyric/pyric/sandbox/service"
)

// CreateTopic creates a topic.
func (e *Engine) CreateTopic(t *Topic) (*Topic, error) {
	if _, _, err := ParseName(kindTopics, t.Name); err != nil {
		return nil, err
	}
	if err := checkLabels(t.Labels); err != nil {
		return nil, err
	}
	if d := t.MessageRetentionDuration; d != 0 && (d < MinRetention || d > MaxRetention) {
		return nil, invalid("Invalid message_retention_duration: must be between %s and %s.", MinRetention, MaxRetention)
	}
	t = cloneTopic(t)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.topics[t.Name] != nil {
		return nil, errTopicExists
	}
	if err := e.checkTopicSchema(t.SchemaSettings); err != nil {
		return nil, err
	}
	if err := e.com.do(func(tx service.Tx) error { return putJSON(tx, topicKey(t.Name), t) }); err != nil {
		return nil, err
	}
	e.topics[t.Name] = &topicState{cfg: t, subs: map[string]*subState{}, snaps: map[string]*snapState{}}
	e.emitConfig("topic_create", t.Name, nil, t)
	return cloneTopic(t), nil
}

func checkLabels(l map[string]string) error {
	if len(l) > MaxLabels {
		return invalid("Too many labels: %d; the limit is %d.", len(l), MaxLabels)
	}
	for k, v := range l {
		if k == "" || len(k) > 63 || len(v) > 63 || !labelWord(k) || !labelWord(v) || !(k[0] >= 'a' && k[0] <= 'z') {
			return invalid("Invalid label (%s=%s): keys start with a lowercase letter; keys and values are up to 63 lowercase letters, digits, '-' and '_'.", k, v)
		}
	}
	return nil
}

func labelWord(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c > 127) {
			return false
		}
	}
	return true
}

func cloneTopic(t *Topic) *Topic {
	c := *t
	c.Labels = maps.Clone(t.Labels)
	c.SchemaSettings = cloneSettings(t.SchemaSettings)
	return &c
}

func cloneSettings(s *SchemaSettings) *SchemaSettings {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// GetTopic returns a topic.
func (e *Engine) GetTopic(name string) (*Topic, error) {
	t, err := e.getTopic(name)
	if errors.Is(err, errTopicNotFound) && e.awaitTopics() {
		return e.getTopic(name)
	}
	return t, err
}

func (e *Engine) getTopic(name string) (*Topic, error) {
	if _, _, err := ParseName(kindTopics, name); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.topics[name]
	if t == nil {
		return nil, errTopicNotFound
	}
	return cloneTopic(t.cfg), nil
}

// UpdateTopic changes the fields of a topic that paths name (proto field
// names, as in an update mask).
func (e *Engine) UpdateTopic(patch *Topic, paths []string) (*Topic, error) {
	if _, _, err := ParseName(kindTopics, patch.Name); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, invalid("No update_mask provided in the UpdateTopicRequest.")
	}
	for _, p := range paths {
		switch p {
		case "labels", "message_retention_duration", "kms_key_name", "schema_settings", "message_storage_policy":
		default:
			return nil, errUpdateMask("UpdateTopicRequest", p, "Topic", "schema_settings")
		}
	}
	if err := checkLabels(patch.Labels); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.topics[patch.Name]
	if t == nil {
		return nil, errTopicNotFound
	}
	next := cloneTopic(t.cfg)
	for _, p := range paths {
		switch p {
		case "labels":
			next.Labels = maps.Clone(patch.Labels)
		case "message_retention_duration":
			next.MessageRetentionDuration = patch.MessageRetentionDuration
		case "kms_key_name":
			next.KMSKeyName = patch.KMSKeyName
		case "schema_settings":
			if err := e.checkTopicSchema(patch.SchemaSettings); err != nil {
				return nil, err
			}
			next.SchemaSettings = cloneSettings(patch.SchemaSettings)
		}
	}
	if err := e.com.do(func(tx service.Tx) error { return putJSON(tx, topicKey(next.Name), next) }); err != nil {
		return nil, err
	}
	prev := t.cfg
	t.cfg = next
	e.emitConfig("topic_update", next.Name, prev, next)
	return cloneTopic(next), nil
}

// namesIn lists the keys of m (topic, subscription or snapshot names)
// in project, for page.
func namesIn[V any](m map[string]V, project string) []string {
	var names []string
	for n := range m {
		if ProjectOf(n) == project {
			names = append(names, n)
		}
	}
	return names
}

// page returns the names after token, up to size (0 means all), and the
// next token.
func page(names []string, size int, token string) ([]string, string) {
	slices.Sort(names)
	if token != "" {
		i, _ := slices.BinarySearch(names, token)
		for i < len(names) && names[i] <= token {
			i++
		}
		names = names[i:]
	}
	if size <= 0 || size >= len(names) {
		return names, ""
	}
	return names[:size], names[size-1]
}

// ListTopics lists a project's topics, paged.
func (e *Engine) ListTopics(project string, size int, token string) ([]*Topic, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	names, next := page(namesIn(e.topics, project), size, token)
	out := make([]*Topic, len(names))
	for i, n := range names {
		out[i] = cloneTopic(e.topics[n].cfg)
	}
	return out, next
}

// ListTopicSubscriptions lists the names of a topic's subscriptions.
func (e *Engine) ListTopicSubscriptions(topic string, size int, token string) ([]string, string, error) {
	if _, _, err := ParseName(kindTopics, topic); err != nil {
		return nil, "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.topics[topic]
	if t == nil {
		return nil, "", errTopicNotFound
	}
	names, next := page(slices.Collect(maps.Keys(t.subs)), size, token)
	return names, next, nil
}

// ListTopicSnapshots lists the names of a topic's snapshots.
func (e *Engine) ListTopicSnapshots(topic string, size int, token string) ([]string, string, error) {
	if _, _, err := ParseName(kindTopics, topic); err != nil {
		return nil, "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.topics[topic]
	if t == nil {
		return nil, "", errTopicNotFound
	}
	names, next := page(slices.Collect(maps.Keys(t.snaps)), size, token)
	return names, next, nil
}

// DeleteTopic deletes a topic; its subscriptions stay, their topic
// reading _deleted-topic_, and keep delivering what they hold.
func (e *Engine) DeleteTopic(name string) error {
	if _, _, err := ParseName(kindTopics, name); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.topics[name]
	if t == nil {
		return errTopicNotFound
	}
	var recs []subRecord
	for _, s := range t.subs {
		c := cloneSub(s.cfg)
		c.Topic = DeletedTopic
		recs = append(recs, subRecord{Config: c, UID: s.uid})
	}
	err := e.com.do(func(tx service.Tx) error {
		for i := range recs {
			if err := putJSON(tx, subKey(recs[i].Config.Name), &recs[i]); err != nil {
				return err
			}
		}
		return tx.Delete(topicKey(name))
	})
	if err != nil {
		return err
	}
	for i, r := range recs {
		e.subs[r.Config.Name].cfg = recs[i].Config
	}
	delete(e.topics, name)
	e.emitConfig("topic_delete", name, t.cfg, nil)
	return nil
}

func cloneSub(s *Subscription) *Subscription {
	c := *s
	c.Labels = maps.Clone(s.Labels)
	if s.Push != nil {
		p := *s.Push
		p.Attributes = maps.Clone(s.Push.Attributes)
		c.Push = &p
	}
	if s.DeadLetter != nil {
		d := *s.DeadLetter
		c.DeadLetter = &d
	}
	if s.Retry != nil {
		r := *s.Retry
		c.Retry = &r
	}
	if s.Expiration != nil {
		x := *s.Expiration
		c.Expiration = &x
	}
	return &c
}

// checkSub validates and defaults a subscription's configuration.
func checkSub(s *Subscription) error {
	if _, _, err := ParseName(kindSubscriptions, s.Name); err != nil {
		return err
	}
	if s.AckDeadlineSeconds == 0 {
		s.AckDeadlineSeconds = DefaultAckDeadline
	}
	// Production refuses deadlines under 10 s; the emulator accepts them.
	if s.AckDeadlineSeconds < MinAckDeadlineSeconds || s.AckDeadlineSeconds > MaxAckDeadlineSeconds {
		return errAckDeadline
	}
	if s.MessageRetentionDuration == 0 {
		s.MessageRetentionDuration = DefaultRetention
	}
	if d := s.MessageRetentionDuration; d < MinRetention || d > MaxRetention {
		return invalid("Invalid message_retention_duration: must be between %s and %s.", MinRetention, MaxRetention)
	}
	if err := checkLabels(s.Labels); err != nil {
		return err
	}
	if _, err := ParseFilter(s.Filter); err != nil {
		return err
	}
	if p := s.Push; p != nil {
		if p.Endpoint == "" {
			s.Push = nil
		} else if !strings.HasPrefix(p.Endpoint, "http://") && !strings.HasPrefix(p.Endpoint, "https://") {
			return invalid("Invalid push endpoint given (endpoint=%s). Refer to https://cloud.google.com/pubsub/docs/push for more information.", p.Endpoint)
		}
	}
	if d := s.DeadLetter; d != nil {
		if d.Topic == "" {
			s.DeadLetter = nil
		} else {
			if _, _, err := ParseName(kindTopics, d.Topic); err != nil {
				return err
			}
			if d.MaxDeliveryAttempts == 0 {
				d.MaxDeliveryAttempts = DefaultDeliveryAttempts
			}
			if d.MaxDeliveryAttempts < MinDeliveryAttempts || d.MaxDeliveryAttempts > MaxDeliveryAttempts {
				return invalid("Invalid max_delivery_attempts: must be between %d and %d.", MinDeliveryAttempts, MaxDeliveryAttempts)
			}
		}
	}
	if r := s.Retry; r != nil {
		if r.MinimumBackoff == 0 {
			r.MinimumBackoff = DefaultMinBackoff
		}
		if r.MaximumBackoff == 0 {
			r.MaximumBackoff = MaxBackoff
		}
		if r.MinimumBackoff < 0 || r.MinimumBackoff > MaxBackoff || r.MaximumBackoff < 0 || r.MaximumBackoff > MaxBackoff || r.MinimumBackoff > r.MaximumBackoff {
			return invalid("Invalid retry_policy: backoffs must be between 0s and 600s, minimum_backoff not above maximum_backoff.")
		}
	}
	return nil
}

// CreateSubscription creates a subscription to an existing topic.
func (e *Engine) CreateSubscription(s *Subscription) (*Subscription, error) {
	s = cloneSub(s)
	if err := checkSub(s); err != nil {
		return nil, err
	}
	if _, _, err := ParseName(kindTopics, s.Topic); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.subs[s.Name] != nil {
		return nil, errSubExists
	}
	t := e.topics[s.Topic]
	if t == nil {
		return nil, errSubTopicNotFound
	}
	rec := subRecord{Config: s, UID: e.env.NewID()}
	if err := e.com.do(func(tx service.Tx) error { return putJSON(tx, subKey(s.Name), &rec) }); err != nil {
		return nil, err
	}
	st := e.newSubState(s, rec.UID)
	e.subs[s.Name] = st
	t.subs[s.Name] = st
	e.startPush(st)
	e.emitConfig("subscription_create", s.Name, nil, s)
	return cloneSub(s), nil
}

// GetSubscription returns a subscription.
func (e *Engine) GetSubscription(name string) (*Subscription, error) {
	if _, _, err := ParseName(kindSubscriptions, name); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return nil, errSubNotFound
	}
	return cloneSub(s.cfg), nil
}

// subFields are the update-mask paths UpdateSubscription takes.
var subFields = []string{"ack_deadline_seconds", "push_config", "labels", "retain_acked_messages", "message_retention_duration",
	"expiration_policy", "dead_letter_policy", "retry_policy", "enable_exactly_once_delivery", "detached", "filter", "enable_message_ordering"}

// UpdateSubscription changes the fields paths name. Production refuses
// changing filter and enable_message_ordering after creation.
func (e *Engine) UpdateSubscription(patch *Subscription, paths []string) (*Subscription, error) {
	if _, _, err := ParseName(kindSubscriptions, patch.Name); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, invalid("No update_mask provided in the UpdateSubscriptionRequest.")
	}
	for _, p := range paths {
		if !slices.Contains(subFields, p) {
			return nil, errUpdateMask("UpdateSubscriptionRequest", p, "Subscription", "push_config")
		}
		if p == "filter" || p == "enable_message_ordering" {
			return nil, invalid("Invalid update_mask provided in the UpdateSubscriptionRequest: %s cannot be updated.", p)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[patch.Name]
	if s == nil {
		return nil, errSubNotFound
	}
	next := cloneSub(s.cfg)
	src := cloneSub(patch)
	for _, p := range paths {
		switch p {
		case "ack_deadline_seconds":
			next.AckDeadlineSeconds = src.AckDeadlineSeconds
		case "push_config":
			next.Push = src.Push
		case "labels":
			next.Labels = src.Labels
		case "retain_acked_messages":
			next.RetainAckedMessages = src.RetainAckedMessages
		case "message_retention_duration":
			next.MessageRetentionDuration = src.MessageRetentionDuration
		case "expiration_policy":
			next.Expiration = src.Expiration
		case "dead_letter_policy":
			next.DeadLetter = src.DeadLetter
		case "retry_policy":
			next.Retry = src.Retry
		case "enable_exactly_once_delivery":
			next.EnableExactlyOnceDelivery = src.EnableExactlyOnceDelivery
		case "detached":
			next.Detached = next.Detached || src.Detached
		}
	}
	if err := checkSub(next); err != nil {
		return nil, err
	}
	rec := subRecord{Config: next, UID: s.uid}
	if err := e.com.do(func(tx service.Tx) error { return putJSON(tx, subKey(next.Name), &rec) }); err != nil {
		return nil, err
	}
	prev := s.cfg
	s.cfg = next
	if (prev.Push == nil) != (next.Push == nil) {
		e.stopPush(s)
		e.startPush(s)
	}
	s.signal()
	e.emitConfig("subscription_update", next.Name, prev, next)
	return cloneSub(next), nil
}

// ListSubscriptions lists a project's subscriptions, paged.
func (e *Engine) ListSubscriptions(project string, size int, token string) ([]*Subscription, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	names, next := page(namesIn(e.subs, project), size, token)
	out := make([]*Subscription, len(names))
	for i, n := range names {
		out[i] = cloneSub(e.subs[n].cfg)
	}
	return out, next
}

// DeleteSubscription deletes a subscription and its messages.
func (e *Engine) DeleteSubscription(name string) error {
	if _, _, err := ParseName(kindSubscriptions, name); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return errSubNotFound
	}
	uid := s.uid
	if err := e.com.do(func(tx service.Tx) error {
		if err := tx.Delete(subKey(name)); err != nil {
			return err
		}
		return deleteQueue(tx, uid)
	}); err != nil {
		return err
	}
	e.dropSub(s)
	delete(e.subs, name)
	if t := e.topics[s.cfg.Topic]; t != nil {
		delete(t.subs, name)
	}
	e.emitConfig("subscription_delete", name, s.cfg, nil)
	return nil
}

// dropSub ends a subscription's delivery in memory (deleted or reset).
func (e *Engine) dropSub(s *subState) {
	s.deleted = true
	e.stopPush(s)
	s.signal()
}

// DetachSubscription detaches a subscription from its topic: its
// messages are dropped and pulls fail with FAILED_PRECONDITION, as in
// production (the official emulator does not implement it).
func (e *Engine) DetachSubscription(name string) error {
	if _, _, err := ParseName(kindSubscriptions, name); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return errSubNotFound
	}
	next := cloneSub(s.cfg)
	next.Detached = true
	oldUID := s.uid
	rec := subRecord{Config: next, UID: e.env.NewID()}
	if err := e.com.do(func(tx service.Tx) error {
		if err := deleteQueue(tx, oldUID); err != nil {
			return err
		}
		return putJSON(tx, subKey(name), &rec)
	}); err != nil {
		return err
	}
	e.replaceQueue(s, rec.UID, false)
	s.cfg = next
	e.stopPush(s)
	if t := e.topics[s.cfg.Topic]; t != nil {
		delete(t.subs, name)
	}
	e.emitConfig("subscription_detach", name, s.cfg, next)
	return nil
}

// replaceQueue empties a subscription's memory for a new queue uid;
// spilled says the new queue's messages are in the bucket.
func (e *Engine) replaceQueue(s *subState, uid string, spilled bool) {
	fresh := e.newSubState(s.cfg, uid)
	s.uid = uid
	s.entries, s.ready, s.leases, s.keys, s.pending = fresh.entries, fresh.ready, fresh.leases, fresh.keys, fresh.pending
	s.spilled, s.spillFrom, s.backlog = spilled, 0, 0
	s.signal()
}

// CreateSnapshot snapshots a subscription's unacknowledged messages; the
// snapshot also keeps every message published to the topic from now on.
func (e *Engine) CreateSnapshot(name, sub string, labels map[string]string) (*Snapshot, error) {
	if _, _, err := ParseName(kindSnapshots, name); err != nil {
		return nil, err
	}
	if _, _, err := ParseName(kindSubscriptions, sub); err != nil {
		return nil, err
	}
	if err := checkLabels(labels); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.snaps[name] != nil {
		return nil, errSnapshotExists
	}
	s := e.subs[sub]
	if s == nil {
		return nil, errSubNotFound
	}
	t := e.topics[s.cfg.Topic]
	if t == nil {
		return nil, &Error{Kind: ErrFailedPrecondition, Msg: "The subscription's topic has been deleted."}
	}
	now := e.now()
	cfg := &Snapshot{Name: name, Topic: s.cfg.Topic, Labels: maps.Clone(labels)}
	rec := snapRecord{Config: cfg, UID: e.env.NewID()}
	oldest := now
	err := e.com.do(func(tx service.Tx) error {
		var copyErr error
		err := forEachQueued(tx, s.uid, 0, func(q *queued) error {
			r := &q.rec
			if r.Acked {
				return nil
			}
			if r.Msg.PublishTime.Before(oldest) {
				oldest = r.Msg.PublishTime
			}
			r.Attempts = 0
			copyErr = putRecord(tx, queueKey(rec.UID, q.seq), r)
			return copyErr
		})
		if err != nil {
			return err
		}
		cfg.Expire = oldest.Add(DefaultRetention)
		return putJSON(tx, snapKey(name), &rec)
	})
	if err != nil {
		return nil, err
	}
	ss := &snapState{cfg: cfg, uid: rec.UID}
	e.snaps[name] = ss
	t.snaps[name] = ss
	e.emitConfig("snapshot_create", name, nil, cfg)
	c := *cfg
	return &c, nil
}

// GetSnapshot returns a snapshot.
func (e *Engine) GetSnapshot(name string) (*Snapshot, error) {
	if _, _, err := ParseName(kindSnapshots, name); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ss := e.snaps[name]
	if ss == nil {
		return nil, errSnapshotNotFound
	}
	c := *ss.cfg
	return &c, nil
}

// ListSnapshots lists a project's snapshots, paged.
func (e *Engine) ListSnapshots(project string, size int, token string) ([]*Snapshot, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	names, next := page(namesIn(e.snaps, project), size, token)
	out := make([]*Snapshot, len(names))
	for i, n := range names {
		c := *e.snaps[n].cfg
		out[i] = &c
	}
	return out, next
}

// UpdateSnapshot changes a snapshot's labels.
func (e *Engine) UpdateSnapshot(name string, labels map[string]string, paths []string) (*Snapshot, error) {
	if _, _, err := ParseName(kindSnapshots, name); err != nil {
		return nil, err
	}
	for _, p := range paths {
		if p != "labels" && p != "expire_time" {
			return nil, errUpdateMask("UpdateSnapshotRequest", p, "Snapshot", "expire_time")
		}
	}
	if err := checkLabels(labels); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ss := e.snaps[name]
	if ss == nil {
		return nil, errSnapshotNotFound
	}
	next := *ss.cfg
	if slices.Contains(paths, "labels") {
		next.Labels = maps.Clone(labels)
	}
	rec := snapRecord{Config: &next, UID: ss.uid}
	if err := e.com.do(func(tx service.Tx) error { return putJSON(tx, snapKey(name), &rec) }); err != nil {
		return nil, err
	}
	ss.cfg = &next
	c := next
	return &c, nil
}

// DeleteSnapshot deletes a snapshot and the messages it kept.
func (e *Engine) DeleteSnapshot(name string) error {
	if _, _, err := ParseName(kindSnapshots, name); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ss := e.snaps[name]
	if ss == nil {
		return errSnapshotNotFound
	}
	if err := e.com.do(func(tx service.Tx) error {
		if err := tx.Delete(snapKey(name)); err != nil {
			return err
		}
		return deleteQueue(tx, ss.uid)
	}); err != nil {
		return err
	}
	delete(e.snaps, name)
	if t := e.topics[ss.cfg.Topic]; t != nil {
		delete(t.snaps, name)
	}
	e.emitConfig("snapshot_delete", name, ss.cfg, nil)
	return nil
}

// SeekToSnapshot makes a subscription's backlog the snapshot's messages.
func (e *Engine) SeekToSnapshot(sub, snap string) error {
	if _, _, err := ParseName(kindSubscriptions, sub); err != nil {
		return err
	}
	if _, _, err := ParseName(kindSnapshots, snap); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[sub]
	if s == nil {
		return errSubNotFound
	}
	ss := e.snaps[snap]
	if ss == nil {
		return errSnapshotNotFound
	}
	if ss.cfg.Topic != s.cfg.Topic {
		return errSnapshotTopic
	}
	return e.reseed(s, func(tx service.Tx, put func(seq uint64, r *record) error) error {
		return forEachQueued(tx, ss.uid, 0, func(q *queued) error {
			if !s.filter.Matches(q.rec.Msg.Attributes) {
				return nil
			}
			return put(q.seq, &q.rec)
		})
	})
}

// SeekToTime marks the subscription's retained messages published before
// t acknowledged and those published at or after it unacknowledged
// (acknowledged ones come back only when retain_acked_messages kept them).
func (e *Engine) SeekToTime(sub string, t time.Time) error {
	if _, _, err := ParseName(kindSubscriptions, sub); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[sub]
	if s == nil {
		return errSubNotFound
	}
	retain := s.cfg.RetainAckedMessages
	old := s.uid
	return e.reseed(s, func(tx service.Tx, put func(seq uint64, r *record) error) error {
		return forEachQueued(tx, old, 0, func(q *queued) error {
			r := &q.rec
			before := r.Msg.PublishTime.Before(t)
			switch {
			case before && !retain:
				return nil
			case before:
				r.Acked = true
			default:
				r.Acked = false
			}
			return put(q.seq, r)
		})
	})
}

// reseed replaces a subscription's queue with the records fill writes
// under a new uid; called with the lock held.
func (e *Engine) reseed(s *subState, fill func(tx service.Tx, put func(seq uint64, r *record) error) error) error {
	old, uid := s.uid, e.env.NewID()
	backlog := 0
	rec := subRecord{Config: s.cfg, UID: uid}
	err := e.com.do(func(tx service.Tx) error {
		err := fill(tx, func(seq uint64, r *record) error {
			r.Attempts = 0
			if !r.Acked {
				backlog++
			}
			return putRecord(tx, queueKey(uid, seq), r)
		})
		if err != nil {
			return err
		}
		if err := deleteQueue(tx, old); err != nil {
			return err
		}
		return putJSON(tx, subKey(s.cfg.Name), &rec)
	})
	if err != nil {
		return err
	}
	e.replaceQueue(s, uid, true)
	s.backlog = backlog
	e.emitConfig("subscription_seek", s.cfg.Name, nil, map[string]any{"backlog": backlog})
	return nil
}
