package auth

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// Auth's state in a session capture is record by record
// (service.Records): each record of the log (store.go) — a project's
// config, a tenant, and a space's accounts, OOB codes, verification
// codes, proofs, TOTP secrets and provider configs — is one record, at
// key ["records", "configs", project], ["records", "tenants", project,
// tenant] or ["records", "spaces", project, tenant, kind, id] of the
// state (Snapshot.Records; tenant "" is the project's own space). A
// mutation's events name the records it wrote (journal.name), so a
// capture appends the account a sign-up created instead of encoding
// every account again at each flush.

// recordsToken begins every Records token: the records a mutation wrote,
// each key length-prefixed, follow it (none: the mutation wrote none).
const recordsToken = "k"

// RecordState is a state's records in the log's layout, as a session
// capture keeps them. Its values are the log's record values.
type RecordState struct {
	// Configs are the projects' configs, by project.
	Configs map[string]json.RawMessage `json:"configs,omitempty"`
	// Tenants are the tenants' configs, by project and tenant.
	Tenants map[string]map[string]json.RawMessage `json:"tenants,omitempty"`
	// Spaces are the records of the accounts' spaces, by project, tenant
	// ("": the project's own), kind (recordKinds) and id (an OOB or
	// verification code's sequence number as 16 hex digits).
	Spaces map[string]map[string]map[string]map[string]json.RawMessage `json:"spaces,omitempty"`
}

// recordKinds names the kinds of a space's records in a RecordState.
var recordKinds = map[string]string{
	kindUser:    "users",
	kindOOB:     "oobCodes",
	kindCode:    "verificationCodes",
	kindProof:   "temporaryProofs",
	kindPending: "totp",
	kindIdp:     "idpConfigs",
}

// seqKind says whether a kind's ids are sequence numbers (8 bytes, big
// endian, in the log).
func seqKind(kind string) bool { return kind == kindOOB || kind == kindCode }

// recordPath is a log key's place in the state.
func recordPath(key []byte) ([]string, error) {
	kind, parts, err := splitKey(key)
	if err != nil {
		return nil, err
	}
	switch {
	case kind == 'c' && len(parts) == 1:
		return []string{"records", "configs", parts[0]}, nil
	case kind == 't' && len(parts) == 2:
		return []string{"records", "tenants", parts[0], parts[1]}, nil
	case kind == 's' && len(parts) == 4:
		name, ok := recordKinds[parts[2]]
		if !ok {
			break
		}
		id := parts[3]
		if seqKind(parts[2]) {
			id = hex.EncodeToString([]byte(id))
		}
		return []string{"records", "spaces", parts[0], parts[1], name, id}, nil
	}
	return nil, fmt.Errorf("auth: no record at key %q", key)
}

// changes is the records as log changes, in key order (the order the log
// loads them in, which keeps the OOB and verification codes in order).
func (r *RecordState) changes() ([]service.LogChange, error) {
	var out []service.LogChange
	add := func(k []byte, v json.RawMessage) {
		if len(v) > 0 && string(v) != "null" {
			out = append(out, service.LogChange{Key: string(k), Value: v})
		}
	}
	for p, v := range r.Configs {
		add(configKey(p), v)
	}
	for p, ts := range r.Tenants {
		for t, v := range ts {
			add(tenantKey(p, t), v)
		}
	}
	for p, ts := range r.Spaces {
		for t, kinds := range ts {
			for name, recs := range kinds {
				kind := ""
				for k, n := range recordKinds {
					if n == name {
						kind = k
					}
				}
				if kind == "" {
					return nil, fmt.Errorf("auth: records: project %s tenant %q: unknown kind %q", p, t, name)
				}
				for id, v := range recs {
					if seqKind(kind) {
						b, err := hex.DecodeString(id)
						if err != nil || len(b) != 8 {
							return nil, fmt.Errorf("auth: records: project %s tenant %q %s: id %q is not 16 hex digits", p, t, name, id)
						}
						id = string(b)
					}
					add(recordKey(p, t, kind, id), v)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b service.LogChange) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// RecordChange implements service.Records: the records an Auth event's
// mutation wrote, as its event names them. An event that names none (a
// restore, a reset, a prefix deletion) is no record change: the capture
// writes every record again.
func (e *Engine) RecordChange(ev event.Event) (string, bool) {
	if ev.Service != Service || !strings.HasPrefix(ev.Records, recordsToken) {
		return "", false
	}
	return ev.Records, true
}

// Records implements service.Records: it calls fn with each record token
// names as it is now (nil: absent), each read under the engine's lock.
func (e *Engine) Records(token string, fn func(key []string, value json.RawMessage) error) error {
	rest, ok := strings.CutPrefix(token, recordsToken)
	if !ok {
		return nil
	}
	for len(rest) > 0 {
		n, w := uvarintString(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return fmt.Errorf("auth: malformed records token")
		}
		key := []byte(rest[w : w+int(n)])
		rest = rest[w+int(n):]
		path, err := recordPath(key)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.seq.reconcile()
		v, err := e.currentRecord(key)
		e.mu.Unlock()
		if err != nil {
			return err
		}
		if err := fn(path, v); err != nil {
			return err
		}
	}
	return nil
}

// EachRecord implements service.Records: every record of the engine. The
// accounts are each encoded under the lock on their own, so a big store
// does not hold up traffic while a capture writes it.
func (e *Engine) EachRecord(fn func(key []string, value json.RawMessage) error) error {
	type rec struct {
		key []byte
		v   json.RawMessage // nil: an account, encoded when its turn comes
	}
	var recs []rec
	put := func(k []byte, v any) error {
		b, err := json.Marshal(v)
		if err == nil {
			recs = append(recs, rec{key: k, v: b})
		}
		return err
	}
	e.mu.Lock()
	e.seq.reconcile()
	err := func() error {
		each := func(s *space) error {
			for _, id := range s.sortedIDs() {
				recs = append(recs, rec{key: userKey(s.project, s.tenant, id)})
			}
			for _, o := range s.oobs {
				if err := put(oobKey(s.project, s.tenant, o.seq), o); err != nil {
					return err
				}
			}
			return s.writeExtraRecords(put)
		}
		for id, p := range e.projects {
			if err := put(configKey(id), p.config); err != nil {
				return err
			}
			if err := each(p.space); err != nil {
				return err
			}
			for tid, t := range p.tenants {
				if err := put(tenantKey(id, tid), t.config); err != nil {
					return err
				}
				if err := each(t.space); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	e.mu.Unlock()
	if err != nil {
		return err
	}
	for _, r := range recs {
		v := r.v
		if v == nil {
			e.mu.Lock()
			v, err = e.currentRecord(r.key)
			e.mu.Unlock()
			if err != nil {
				return err
			}
			if v == nil {
				continue // deleted since
			}
		}
		path, err := recordPath(r.key)
		if err != nil {
			return err
		}
		if err := fn(path, v); err != nil {
			return err
		}
	}
	return nil
}

// currentRecord is the value the log holds at key, from the engine's
// state now (nil: absent); callers hold the lock.
func (e *core) currentRecord(key []byte) ([]byte, error) {
	kind, parts, err := splitKey(key)
	if err != nil {
		return nil, err
	}
	if want := keyParts(kind); want == 0 || len(parts) != want {
		return nil, fmt.Errorf("auth: no record at key %q", key)
	}
	p := e.projects[parts[0]]
	if p == nil {
		return nil, nil
	}
	switch kind {
	case 'c':
		return json.Marshal(p.config)
	case 't':
		t := p.tenants[parts[1]]
		if t == nil {
			return nil, nil
		}
		return json.Marshal(t.config)
	}
	sp := p.space
	if parts[1] != "" {
		t := p.tenants[parts[1]]
		if t == nil {
			return nil, nil
		}
		sp = t.space
	}
	if parts[2] == kindUser {
		return encodeUser(sp.users[parts[3]])
	}
	// The other kinds are few per space: find the record among them.
	var found []byte
	if parts[2] == kindOOB {
		for _, o := range sp.oobs {
			if string(oobKey(sp.project, sp.tenant, o.seq)) == string(key) {
				return json.Marshal(o)
			}
		}
		return nil, nil
	}
	err = sp.writeExtraRecords(func(k []byte, v any) error {
		if found == nil && string(k) == string(key) {
			b, err := json.Marshal(v)
			found = b
			return err
		}
		return nil
	})
	return found, err
}

// keyParts is the number of parts a key of kind has (0: no such kind).
func keyParts(kind byte) int {
	switch kind {
	case 'c':
		return 1
	case 't':
		return 2
	case 's':
		return 4
	}
	return 0
}

// uvarintString is binary.Uvarint of s's bytes, without copying them.
func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

var _ service.Records = (*engineService)(nil)
