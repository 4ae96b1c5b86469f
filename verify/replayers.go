package verify

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// replayerOf creates reg's service in memory, with no events and no
// store, and returns it when it is a service.Replayer (nil otherwise),
// with done releasing it. A Replayer replays on a fresh state of its
// own, so the service only has to exist.
func replayerOf(reg service.Registration) (r service.Replayer, done func(), err error) {
	svc, err := reg.New(service.Env{Project: service.DefaultProject, Now: time.Now, Events: event.Discard, Rand: rand.Reader})
	if err != nil {
		return nil, nil, fmt.Errorf("verify: %s: %w", reg.Name, err)
	}
	done = func() {
		if c, ok := svc.(service.Closer); ok {
			_ = c.Close()
		}
	}
	if r, ok := svc.(service.Replayer); ok {
		return r, done, nil
	}
	done()
	return nil, nil, nil
}

// fixtureError is a Replayer's error as verify reports it: a session it
// cannot read is an invalid fixture (a *capture.Error).
func fixtureError(err error) error {
	var se *service.SessionError
	if errors.As(err, &se) {
		return &capture.Error{Path: se.Path, Msg: se.Msg}
	}
	return err
}

// replayerSet creates the Replayers of registrations on first use, by
// name, after the ones given as they are; close releases what it made.
type replayerSet struct {
	regs   []service.Registration
	byName map[string]service.Replayer
	dones  []func()
}

func newReplayerSet(regs []service.Registration, given []service.Replayer) *replayerSet {
	rs := &replayerSet{regs: regs, byName: map[string]service.Replayer{}}
	for _, r := range given {
		rs.byName[r.Name()] = r
	}
	return rs
}

// named returns the Replayer of the service name (nil: none).
func (rs *replayerSet) named(name string) (service.Replayer, error) {
	if r, ok := rs.byName[name]; ok {
		return r, nil
	}
	for _, reg := range rs.regs {
		if reg.Name != name {
			continue
		}
		r, done, err := replayerOf(reg)
		if err != nil {
			return nil, err
		}
		if r != nil {
			rs.dones = append(rs.dones, done)
		}
		rs.byName[name] = r
		return r, nil
	}
	return nil, nil
}

// viewer is a service.Session's Viewer: the StateViewer among the set.
func (rs *replayerSet) viewer(name string) service.StateViewer {
	r, err := rs.named(name)
	if err != nil {
		return nil
	}
	v, _ := r.(service.StateViewer)
	return v
}

func (rs *replayerSet) close() {
	for _, done := range rs.dones {
		done()
	}
}
