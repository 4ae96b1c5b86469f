package event

import "context"

type causeKey struct{}

// WithCause returns a context saying which event (its ID, "evt-N")
// caused the work run with it: a function invocation delivered for a
// commit carries the commit's id, so the invocation's event names its
// cause and the Studio shows write → trigger → writes as one chain.
func WithCause(ctx context.Context, eventID string) context.Context {
	if eventID == "" {
		return ctx
	}
	return context.WithValue(ctx, causeKey{}, eventID)
}

// CauseOf is the event id WithCause put in ctx, or "".
func CauseOf(ctx context.Context) string {
	s, _ := ctx.Value(causeKey{}).(string)
	return s
}
