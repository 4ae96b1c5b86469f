// Package firestoreserver is the Firestore wire adapter: it serves the engine
// over gRPC (google.firestore.v1.Firestore), REST (/v1/...), WebChannel
// (the browser SDK's Listen and Write) and the official emulator's extra
// endpoints (/emulator/v1/...). It decodes a request, derives the caller's
// identity from the Authorization header exactly as the official emulator
// does, calls the engine, and encodes the result; no Firestore semantics
// live here.
package firestoreserver

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// Options configure a Server.
type Options struct {
	// Engine serves every project and database routed to it.
	Engine *firestore.Engine
	// Rules loads and hot-swaps firestore.rules for the engine, per
	// project; the emulator's securityRules endpoints use it. Nil uses
	// the engine's own (Engine.LiveRules), whose rules file applies to
	// every project.
	Rules *firestore.LiveRules
	// DefaultProject is used when a request names none.
	DefaultProject string
}

// Server adapts the engine to the wire protocols.
type Server struct {
	opts Options
}

// New returns a server for the engine.
func New(opts Options) *Server {
	if opts.Rules == nil {
		opts.Rules = opts.Engine.LiveRules()
		opts.Rules.SetHomeProject(opts.DefaultProject)
	}
	return &Server{opts: opts}
}

// Engine returns the engine the server adapts.
func (s *Server) Engine() *firestore.Engine { return s.opts.Engine }

// Rules returns the live rules.
func (s *Server) Rules() *firestore.LiveRules { return s.opts.Rules }

// IdentityFromHeader derives the caller from an Authorization header value
// as the official emulator does: none is unauthenticated, "Bearer owner" is
// admin, an unsigned JWT is a user (uid = sub, token = payload); anything
// else is INVALID_ARGUMENT "invalid jwt".
func IdentityFromHeader(h string) (identity.Identity, error) {
	id, err := identity.FromAuthorization(h)
	if err != nil {
		return identity.Identity{}, status.Error(codes.InvalidArgument, "invalid jwt")
	}
	return id, nil
}

// IdentityFromContext reads the Authorization metadata of a gRPC call,
// and the function invocation it comes from (identity.InvocationHeader).
func IdentityFromContext(ctx context.Context) (identity.Identity, error) {
	// Only the keys read: FromIncomingContext copies every header of the
	// call, for each call.
	id := identity.Anonymous()
	if vals := metadata.ValueFromIncomingContext(ctx, "authorization"); len(vals) > 0 {
		var err error
		if id, err = IdentityFromHeader(vals[0]); err != nil {
			return id, err
		}
	}
	if inv := metadata.ValueFromIncomingContext(ctx, identity.InvocationHeader); len(inv) > 0 {
		id = id.ByInvocation(inv[0])
	}
	return id, nil
}

// Status converts an engine error to the gRPC status clients receive. A
// rules denial says which rules decided, in the official emulator's words
// ("\nfalse for 'update' @ L6"), so the message names the rule and line,
// then one line per failing sub-expression with its values
// ("request.resource.data.title.size() < 20 → 27 < 20 is false").
func Status(err error) *status.Status {
	if err == nil {
		return status.New(codes.OK, "")
	}
	if st, ok := status.FromError(err); ok && !isEngineError(err) {
		return st
	}
	if d, ok := firestore.DenialOf(err); ok {
		msg := d.Decision.Reason
		if msg == "" {
			msg = firestore.PermissionDeniedMessage
		}
		if !strings.HasPrefix(msg, "\n") {
			msg = "\n" + msg
		}
		// Then why: the failing sub-expressions with their values, after
		// the emulator's wording so tools matching it still work.
		for _, l := range d.Decision.Lines() {
			msg += "\n" + l
		}
		return status.New(codes.PermissionDenied, msg)
	}
	return firestore.Status(err)
}

func isEngineError(err error) bool {
	var e *firestore.Error
	return errors.As(err, &e)
}

// Err is Status(err).Err().
func Err(err error) error {
	if err == nil {
		return nil
	}
	return Status(err).Err()
}
