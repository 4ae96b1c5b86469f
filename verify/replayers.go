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

// linkWindow bounds how far after a request its commits are looked for:
// the engine emits them right after the request, and other services'
// events interleave only by a few.
const linkWindow = 256

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
