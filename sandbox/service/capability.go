package service

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pyric/pyric/event"
)

// Optional capabilities. A service implements Service and, beyond it, any
// of the interfaces below; the tools above the sandbox (capture, snapshot
// and export, the MCP server) find them with a type assertion and loop
// over the services that have them, as database/sql finds a driver's
// optional interfaces. A new service that implements one appears in the
// tool that uses it with no edit there.

// TypedState is a service whose snapshot state has one Go declaration:
// the schema of what Snapshot returns and Restore takes. Its own
// Snapshot, Restore, export and capture code, and any tool that reads the
// state, decode through that one type.
type TypedState interface {
	Service
	// NewState returns a pointer to a new, zero value of the state type.
	// Snapshot's output decodes into it with no unknown field, and its
	// encoding is a state Restore accepts.
	NewState() any
}

// StateChecker is a service that can tell a state Restore would refuse
// without changing anything: loading a snapshot checks every service's
// state before it resets any.
type StateChecker interface {
	Service
	CheckState(state json.RawMessage) error
}

// Capturer is a service whose state in a captured session differs from
// its snapshot. A capture rewrites the state on every flush, so it must
// be cheap to take: Storage keeps what the rules see of each object, not
// its bytes. Services that do not implement it are captured with
// Snapshot.
type Capturer interface {
	Service
	// CaptureState returns the state a session capture keeps.
	CaptureState() (json.RawMessage, error)
}

// Records is a service whose state is a set of records (Firestore: one
// per document; the Realtime Database: the value at each written
// location; Storage: one per object's metadata; Auth: one per record of
// its log, an account say) that a session capture
// appends one by one as they change, instead of encoding the service's
// whole state again.
type Records interface {
	Service
	// RecordChange names the record an event changed, as a token for
	// Records; ok is false when the event changed none.
	RecordChange(e event.Event) (token string, ok bool)
	// Records calls fn with each record token names: its key inside the
	// service's Snapshot state (e.g. ["documents", "c/d"]) and its value
	// now (nil: absent).
	Records(token string, fn func(key []string, value json.RawMessage) error) error
	// EachRecord calls fn with every record of the service. fn must not
	// keep key or value after it returns: a service may reuse them for
	// the next record (Firestore does).
	EachRecord(fn func(key []string, value json.RawMessage) error) error
}

// EventRecords is a Records service whose change events carry the record
// they leave whole, as their commit payload's After (a Firestore commit
// event's after is the document's fields; nil: absent): session capture
// takes the record's value from the event's line, where it is encoded
// already, instead of reading the record back and encoding it again when
// it flushes.
type EventRecords interface {
	Records
	// RecordKey is the key of the record e leaves in its Commit's After,
	// the record RecordChange names; ok is false when e does not say it
	// (Records then reads it).
	RecordKey(e event.Event) (key []string, ok bool)
}

// Exporter is a service with a part in an export directory, in the
// layout the Firebase Emulator Suite and firebase-tools write
// (firebase-export-metadata.json names each part under the service's
// Name).
type Exporter interface {
	Service
	// Export writes the service's part of an export into its own
	// directory under root and returns the part's entry in the export's
	// metadata.
	Export(root string) (ExportEntry, error)
}

// ExportEntry is one service's entry in firebase-export-metadata.json.
type ExportEntry struct {
	// Path is the part's directory, relative to the export's root.
	Path string
	// MetadataFile, when the part has one, is relative to the root too.
	MetadataFile string
}

// Importer is a service that reads its part of an export back.
type Importer interface {
	Service
	// ImportState reads the part in dir (the export's root joined with
	// its entry's Path) into a state Restore accepts (nil: nothing to
	// restore). The states of every service in an export are restored
	// together, all or nothing; finish (nil: nothing) then runs what
	// cannot be a state, such as Auth adding the export's accounts.
	ImportState(dir string) (state json.RawMessage, finish func() error, err error)
}

// ErrExport wraps every error reading an export directory that is not
// what its format says (an Importer's errors).
var ErrExport = errors.New("invalid Emulator Suite export")

// Seeder is a service that takes a seed file in its simple form: a JSON
// object mapping the keys of its records to their values (Firestore:
// document paths to fields), as `pyric serve --seed` reads it on a new
// data directory. A seed in the sandbox's snapshot format is loaded, not
// seeded.
type Seeder interface {
	Service
	// Seed checks every record, then writes them as the admin, in key
	// order. A record it refuses is an error wrapping ErrSeed that names
	// the key.
	Seed(ctx context.Context, records map[string]json.RawMessage) error
}

// ErrSeed wraps every error about a seed file that is neither a snapshot
// nor a map of records a Seeder takes.
var ErrSeed = errors.New("invalid seed")

// Describer is a service that says what it holds in one sentence: the
// MCP server's description of the service's state resource.
type Describer interface {
	Service
	Describe() string
}

// Wrapper is a service value that puts an engine of another type on the
// contract, holding it with what its environment gave it (the default
// project, say). The sandbox's Lookup finds the engine through it.
type Wrapper interface {
	Service
	// Unwrap returns the wrapped engine.
	Unwrap() any
}

// SessionChecker is a service that checks what a captured session
// recorded of it, so that a fixture a replay would misread is refused
// when it is read (capture.Decode), at the place it is wrong. A service
// without it gets only the checks every service shares
// (CheckRecordCommit for its commit events).
type SessionChecker interface {
	Service
	// CheckCapturedState checks the service's state in a captured
	// session; at is its place in the fixture
	// ("fixture.services.NAME.state"). A *SessionError names the place.
	CheckCapturedState(state json.RawMessage, at string) error
	// CheckCommit checks a commit event the service recorded; at is the
	// event's place in the fixture ("fixture.events[3]").
	CheckCommit(c *event.Commit, at string) error
}

// CheckRecordCommit is the check of a commit event of a service whose
// commits change a record (a Firestore document, a Storage object's
// metadata): its before and after are each an object (the record's
// fields) or null (absent). at is the event's place in the fixture.
func CheckRecordCommit(c *event.Commit, at string) error {
	if c.Before != nil {
		if _, ok := c.Before.(map[string]any); !ok {
			return &SessionError{Path: at + ".before", Msg: "must be an object or null"}
		}
	}
	if c.After != nil {
		if _, ok := c.After.(map[string]any); !ok {
			return &SessionError{Path: at + ".after", Msg: "must be an object or null"}
		}
	}
	return nil
}
