package authtest

import (
	"testing"

	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// StoreLog is the "auth" service.Log of a sandbox store in a directory of
// the test's: the log the sandbox gives Auth, write-ahead log and
// checkpoints included.
type StoreLog struct {
	Store *sandbox.Store
	service.Log
}

// OpenLog opens (creating it) the store in dir and returns its "auth"
// log. Close it with Close.
func OpenLog(dir string) (*StoreLog, error) {
	st, err := sandbox.OpenStore(dir)
	if err != nil {
		return nil, err
	}
	return &StoreLog{Store: st, Log: st.Log("auth")}, nil
}

// TempLog opens a log in a new store under t.TempDir, closed when the test
// ends.
func TempLog(t testing.TB) *StoreLog {
	t.Helper()
	l, err := OpenLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// Close closes the store.
func (l *StoreLog) Close() error { return l.Store.Close() }

var _ service.QueuedLog = (*StoreLog)(nil)

// Queue is service.QueuedLog's: the sandbox's log lets an engine queue
// its records under its lock and wait outside it, and so does this one.
func (l *StoreLog) Queue(space string, changes []service.LogChange) (service.LogWait, error) {
	return l.Log.(service.QueuedLog).Queue(space, changes)
}
