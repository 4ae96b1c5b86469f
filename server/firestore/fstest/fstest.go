// Package fstest starts Pyric in-process for Firestore tests through
// backend.Start (the sandbox, its engines and every adapter on 127.0.0.1,
// exactly as `pyric serve` wires them) and adds ready official Go clients.
//
//	srv := fstest.Start(t, fstest.Options{Rules: rules})
//	client := srv.Client(t) // cloud.google.com/go/firestore as "owner"
package fstest

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	gcfirestore "cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/server"
	fsserver "github.com/pyric/pyric/server/firestore"
)

// Options configure Start.
type Options struct {
	// Project is the default project (default sandbox.DefaultProject); the
	// server answers for any project a request names.
	Project string
	// Rules is firestore.rules source loaded before the server starts; empty
	// loads none, so every non-admin request is denied.
	Rules string
	// DataDir persists the sandbox there; empty keeps it in memory.
	DataDir string
	// Sync is the store's sync mode with DataDir (default sandbox.SyncBatch).
	Sync sandbox.SyncMode
	// Indexes turns on index enforcement with these declared indexes
	// (firestore.indexes.json); nil leaves every query allowed, as on the
	// emulator.
	Indexes *firestore.IndexConfig
	// Addr is the address to listen on (default 127.0.0.1:0); tests that
	// restart a server on the same port (client reconnects) set it.
	Addr string
	// Sandbox serves an existing sandbox instead of opening one (Project
	// and DataDir are then ignored); Start does not close it.
	Sandbox *sandbox.Sandbox
}

// Server is a running in-process Firestore (and the rest of the backend:
// Backend.Addr(backend.Auth) is the Auth endpoint).
type Server struct {
	// Addr is host:port, the form FIRESTORE_EMULATOR_HOST takes.
	Addr      string
	Project   string
	Backend   *backend.Backend
	Sandbox   *sandbox.Sandbox
	Engine    *firestore.Engine
	Firestore *fsserver.Server
	GRPC      *fsserver.GRPC
	Port      *server.Port

	closeOnce sync.Once
}

// Start starts the backend on 127.0.0.1 (Firestore on Options.Addr, or a
// free port) and stops it when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bo := backend.Options{
		Sandbox:   sandbox.Options{Project: opts.Project, DataDir: opts.DataDir, Sync: opts.Sync},
		Use:       opts.Sandbox,
		Firestore: backend.FirestoreOptions{Rules: opts.Rules, Indexes: opts.Indexes},
	}
	if opts.Addr != "" {
		l, err := net.Listen("tcp", opts.Addr)
		if err != nil {
			t.Fatalf("fstest: listen: %v", err)
		}
		bo.Listeners = map[string]net.Listener{backend.Firestore: l}
	}
	b, err := backend.Start(bo)
	if err != nil {
		t.Fatalf("fstest: %v", err)
	}
	fe := b.Firestore()
	eng, _ := sandbox.Lookup[*firestore.Engine](b.Sandbox)
	s := &Server{Addr: b.Addr(backend.Firestore), Project: b.Project, Backend: b, Sandbox: b.Sandbox,
		Engine: eng, Firestore: fe.Server, GRPC: fe.GRPC, Port: fe.Port}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server (ending open streams) and, when Start opened it,
// closes the sandbox. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Backend.Shutdown(ctx)
	})
}

// Owner is the bearer token the emulators treat as admin.
const Owner = "owner"

// Conn dials the server with "Authorization: Bearer <token>" on every call;
// an empty token sends no Authorization. It is closed when the test ends.
func (s *Server) Conn(t testing.TB, token string) *grpc.ClientConn {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(token)))
	}
	conn, err := grpc.NewClient("passthrough:///"+s.Addr, opts...)
	if err != nil {
		t.Fatalf("fstest: dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Client returns an official Go client acting as admin ("Bearer owner"),
// as FIRESTORE_EMULATOR_HOST would configure it, on the default project.
func (s *Server) Client(t testing.TB) *gcfirestore.Client {
	t.Helper()
	return s.ClientAs(t, s.Project, gcfirestore.DefaultDatabaseID, Owner)
}

// ClientAs returns an official Go client for a project and database that
// sends token as its bearer (empty: no Authorization, an unauthenticated
// caller; an unsigned JWT such as emulator.MockToken: that user).
func (s *Server) ClientAs(t testing.TB, project, database, token string) *gcfirestore.Client {
	t.Helper()
	c, err := gcfirestore.NewClientWithDatabase(context.Background(), project, database,
		option.WithGRPCConn(s.Conn(t, token)))
	if err != nil {
		t.Fatalf("fstest: client: %v", err)
	}
	c.UsesEmulator = true
	t.Cleanup(func() { c.Close() })
	return c
}

// bearer is per-RPC credentials sending a fixed bearer token in clear
// text, as the SDKs do in emulator mode.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }
