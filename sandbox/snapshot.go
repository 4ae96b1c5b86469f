package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// SnapshotVersion is the version written in snapshots. Version 3 keeps
// every service's state under "services"; versions 1 and 2 (Firestore's
// documents at the top level, "services.auth") are still read.
const SnapshotVersion = 3

// snapshotJSON is the committable fixture format:
// {"version", "savedAt", "services": {name: state}}, one entry per
// registered service with state, each service's own JSON. Firestore's is
// {"documents": {path: fields}, "databases": {...}} with typed values as
// markers.
type snapshotJSON struct {
	Version  int                        `json:"version"`
	SavedAt  string                     `json:"savedAt,omitempty"`
	Services map[string]json.RawMessage `json:"services"`
}

// Snapshot exports the whole state as indented JSON (keys sorted, so equal
// states give equal bytes).
func (sb *Sandbox) Snapshot() ([]byte, error) {
	s := snapshotJSON{Version: SnapshotVersion, SavedAt: sb.now().UTC().Format(time.RFC3339Nano),
		Services: map[string]json.RawMessage{}}
	for _, svc := range sb.services {
		state, err := svc.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("sandbox: snapshot %s: %w", svc.Name(), err)
		}
		s.Services[svc.Name()] = state
	}
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("sandbox: snapshot: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("sandbox: snapshot: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeSnapshot reads any supported version into services' states.
func decodeSnapshot(data []byte) (map[string]json.RawMessage, error) {
	var raw struct {
		Version   json.Number                `json:"version"`
		Firestore json.RawMessage            `json:"firestore"`
		Databases json.RawMessage            `json:"databases"`
		Services  map[string]json.RawMessage `json:"services"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the snapshot object", ErrSnapshot)
	}
	out := map[string]json.RawMessage{}
	for k, v := range raw.Services {
		if string(v) != "null" {
			out[k] = v
		}
	}
	switch v := raw.Version.String(); v {
	case "", "1", "2":
		if raw.Firestore != nil || raw.Databases != nil {
			doc := []byte(`{"documents":` + orNull(raw.Firestore) + `,"databases":` + orNull(raw.Databases) + `}`)
			out["firestore"] = doc
		}
	case "3":
		if raw.Firestore != nil {
			return nil, fmt.Errorf(`%w: version 3 keeps Firestore under "services"`, ErrSnapshot)
		}
	default:
		return nil, fmt.Errorf("%w: unsupported version %s", ErrSnapshot, v)
	}
	return out, nil
}

func orNull(b json.RawMessage) string {
	if b == nil {
		return "null"
	}
	return string(b)
}

// LoadSnapshot replaces the whole state with a snapshot (clobber restore:
// every service is reset, then each service named in the snapshot
// restores its state; persisted too when enabled). A snapshot naming a
// service this sandbox lacks, or a state a service rejects, is an error,
// and the state from before the call is put back.
func (sb *Sandbox) LoadSnapshot(data []byte) error {
	states, err := decodeSnapshot(data)
	if err != nil {
		return err
	}
	for name := range states {
		if sb.Service(name) == nil {
			return fmt.Errorf("%w: no service %q in this sandbox", ErrSnapshot, name)
		}
	}
	for _, svc := range sb.services {
		c, ok := svc.(service.StateChecker)
		if st, has := states[svc.Name()]; ok && has {
			if err := c.CheckState(st); err != nil {
				return fmt.Errorf("%w: services.%s: %v", ErrSnapshot, svc.Name(), err)
			}
		}
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	previous := map[string]json.RawMessage{}
	for _, svc := range sb.services {
		st, err := svc.Snapshot()
		if err != nil {
			return fmt.Errorf("sandbox: snapshot %s: %w", svc.Name(), err)
		}
		previous[svc.Name()] = st
	}
	if err := sb.restoreAll(states); err != nil {
		if rerr := sb.restoreAll(previous); rerr != nil {
			return errors.Join(err, fmt.Errorf("sandbox: putting the previous state back: %w", rerr))
		}
		return err
	}
	sb.bus.Emit(event.Event{Kind: event.KindBoundary, Service: "sandbox", Actor: event.Actor{Kind: event.ActorSystem},
		Boundary: &event.Boundary{Boundary: event.Restore, PriorEvents: sb.bus.Len()}})
	return nil
}

// restoreAll resets every service, then restores those with a state.
func (sb *Sandbox) restoreAll(states map[string]json.RawMessage) error {
	if err := sb.resetServices(); err != nil {
		return err
	}
	for _, svc := range sb.services {
		st, ok := states[svc.Name()]
		if !ok {
			continue
		}
		if err := svc.Restore(st); err != nil {
			if errors.Is(err, ErrSnapshot) {
				return fmt.Errorf("services.%s: %w", svc.Name(), err)
			}
			return fmt.Errorf("%w: services.%s: %v", ErrSnapshot, svc.Name(), err)
		}
	}
	return nil
}
