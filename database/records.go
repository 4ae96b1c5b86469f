package database

import (
	"encoding/json"
	"strings"

	"github.com/pyric/pyric/event"
)

// The Realtime Database's state is record by record for session capture
// (service.Records): a commit's record is the value now at the location
// it wrote, at key ["namespaces", ns, "data", k1, k2, ...] of the
// Snapshot state (["namespaces", ns, "data"] for the root), and a
// namespace's own rules are the record ["namespaces", ns, "rules"]. So a
// capture appends what a write changed instead of encoding every tree
// again. Records are taken when capture flushes, all from the tree as it
// is then, so the records of one flush agree whatever their order: a
// location's value is inside each record of an ancestor, and a record of
// nothing below a leaf removes nothing (capture's fixture reading
// replaces a leaf that a record goes below with an object, as a write
// below a leaf does here).

// RecordChange names the location a commit event wrote, or the namespace
// whose rules a rules event set, as a token for Records: "d" or "r", the
// namespace, a NUL and the location. A reset is no record (capture
// rewrites everything).
func (d *Database) RecordChange(e event.Event) (string, bool) {
	switch {
	case e.Kind == event.KindCommit && e.Commit != nil && e.Commit.Database != "":
		_, path, err := SplitEventPath(e.Path)
		if err != nil {
			return "", false
		}
		return "d" + e.Commit.Database + "\x00" + path, true
	case e.Kind == event.KindMutation && e.Mutation != nil && e.Mutation.Op == "rules_set" && e.Path != "":
		return "r" + e.Path + "\x00", true
	}
	return "", false
}

// Records calls fn with the record token names, as it is now (nil:
// absent).
func (d *Database) Records(token string, fn func(key []string, value json.RawMessage) error) error {
	if token == "" {
		return nil
	}
	name, path, ok := strings.Cut(token[1:], "\x00")
	if !ok {
		return nil
	}
	ns := d.ns(name)
	if token[0] == 'r' {
		return fn([]string{"namespaces", name, "rules"}, d.ownRules(ns))
	}
	// The record's key and the location's keys in one slice: the
	// location's keys are its tail.
	p := strings.Trim(path, "/")
	key := make([]string, 3, 3+strings.Count(p, "/")+1)
	key[0], key[1], key[2] = "namespaces", name, "data"
	for p != "" {
		k, rest, _ := strings.Cut(p, "/")
		key, p = append(key, k), rest
	}
	ns.mu.RLock()
	v, err := encodeAt(ns.root, key[3:])
	ns.mu.RUnlock()
	if err != nil {
		return err
	}
	return fn(key, v)
}

// EachRecord calls fn with every namespace's tree and own rules.
func (d *Database) EachRecord(fn func(key []string, value json.RawMessage) error) error {
	for _, name := range d.Namespaces() {
		ns := d.ns(name)
		ns.mu.RLock()
		v, err := encodeAt(ns.root, nil)
		ns.mu.RUnlock()
		if err != nil {
			return err
		}
		if v != nil {
			if err := fn([]string{"namespaces", name, "data"}, v); err != nil {
				return err
			}
		}
		if r := d.ownRules(ns); r != nil {
			if err := fn([]string{"namespaces", name, "rules"}, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeAt encodes the value at keys of root as the Snapshot state holds
// it (nil: absent); callers hold the namespace's lock, since the live
// tree changes in place.
func encodeAt(root any, keys []string) (json.RawMessage, error) {
	v := getAt(root, keys)
	if v == nil {
		return nil, nil
	}
	return MarshalValue(v)
}

// ownRules is the namespace's own rules source as a JSON string, or nil.
func (d *Database) ownRules(ns *namespace) json.RawMessage {
	own := d.live.Own(ns.name)
	if own == nil {
		return nil
	}
	b, _ := json.Marshal(own.Text)
	return b
}

// CheckCapturedState implements service.SessionChecker: a captured state
// is read by the replay, which reports what it cannot use.
func (d *Database) CheckCapturedState(json.RawMessage, string) error { return nil }

// CheckCommit implements service.SessionChecker: a commit writes a
// location, whose value before and after may be any JSON (a scalar, an
// array, an object or null), so every recorded commit is well formed.
func (d *Database) CheckCommit(*event.Commit, string) error { return nil }
