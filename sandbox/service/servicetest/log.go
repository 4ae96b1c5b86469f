package servicetest

import (
	"bytes"
	"sort"
	"sync"

	"github.com/pyric/pyric/sandbox/service"
)

// Log is a service.Log in memory: Append copies what it is given, Load
// hands copies in key order and overwrites them once fn returns (as the
// store's values are valid only during fn), so that a service keeping a
// value it did not copy fails its tests. It is safe for concurrent use.
type Log struct {
	mu     sync.Mutex
	spaces map[string]map[string][]byte
}

// NewLog returns an empty Log.
func NewLog() *Log { return &Log{spaces: map[string]map[string][]byte{}} }

// Append implements service.Log.
func (l *Log) Append(space string, changes []service.LogChange) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.spaces[space]
	if m == nil {
		m = map[string][]byte{}
		l.spaces[space] = m
	}
	for _, c := range changes {
		if c.Value == nil {
			delete(m, c.Key)
			continue
		}
		m[c.Key] = bytes.Clone(c.Value)
		if m[c.Key] == nil {
			m[c.Key] = []byte{}
		}
	}
	if len(m) == 0 {
		delete(l.spaces, space)
	}
	return nil
}

// Load implements service.Log.
func (l *Log) Load(fn func(space string, entries []service.LogChange) error) error {
	l.mu.Lock()
	names := make([]string, 0, len(l.spaces))
	for s := range l.spaces {
		names = append(names, s)
	}
	sort.Strings(names)
	all := make([][]service.LogChange, len(names))
	for i, s := range names {
		m := l.spaces[s]
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			all[i] = append(all[i], service.LogChange{Key: k, Value: bytes.Clone(m[k])})
		}
	}
	l.mu.Unlock()
	for i, s := range names {
		err := fn(s, all[i])
		for _, c := range all[i] {
			for j := range c.Value {
				c.Value[j] = 0xDD
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Clear deletes everything, as the sandbox's reset clears the store.
func (l *Log) Clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.spaces = map[string]map[string][]byte{}
}

var _ service.Log = (*Log)(nil)
