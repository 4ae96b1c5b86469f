package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/sandbox"
)

type functionsRunIn struct {
	Name  string `json:"name" jsonschema:"the scheduled function's name (its export name, group-name for a grouped export)"`
	Ticks int    `json:"ticks,omitempty" jsonschema:"0 (the default) runs it once now; N > 0 runs its next N scheduled ticks at once, each with its own schedule time (at most 100)"`
}

func (s *Server) addFunctionsRunTools() {
	addTool(s, "functions_run_scheduled", "Run a scheduled Cloud Function (onSchedule, pubsub.schedule()) now, or its next N ticks without waiting, as Cloud Scheduler would call it; returns the schedule times run once the runs ended.",
		func(ctx context.Context, in *functionsRunIn, _ []byte) *result { return s.functionsRun(ctx, in) })
}

func (s *Server) functionsRun(ctx context.Context, in *functionsRunIn) *result {
	e, ok := sandbox.Lookup[*functions.Engine](s.sb)
	if !ok {
		return failure("SERVICE_UNAVAILABLE", "no Cloud Functions run in this sandbox", false, "list codebases under \"functions\" in firebase.json")
	}
	if in.Name == "" {
		return invalid("name is required")
	}
	if in.Ticks < 0 || in.Ticks > 100 {
		return invalid("ticks is %d; it must be 0 (run now) to 100", in.Ticks)
	}
	var ran []time.Time
	var err error
	if in.Ticks == 0 {
		var at time.Time
		at, err = e.RunScheduled(ctx, in.Name)
		if !at.IsZero() {
			ran = []time.Time{at}
		}
	} else {
		ran, err = e.RunTicks(ctx, in.Name, in.Ticks)
	}
	times := make([]string, len(ran))
	for i, t := range ran {
		times[i] = t.UTC().Format(time.RFC3339Nano)
	}
	switch {
	case errors.Is(err, functions.ErrNotFound), errors.Is(err, functions.ErrNotScheduled):
		return failure("NOT_FOUND", err.Error(), true, "list the functions; only scheduled ones run here")
	case err != nil:
		return failure("FAILED_PRECONDITION", fmt.Sprintf("the run failed: %v", err), false, "see the function's logs in the invocation events")
	}
	return okResult(fmt.Sprintf("ran %s %d time(s)", in.Name, len(ran)), map[string]any{"function": in.Name, "scheduleTimes": times})
}
