package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	gfs "cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/discover"
)

func init() {
	register(command{
		path:    "firestore discover",
		args:    "[--project P] [--emulator-host HOST:PORT] [--format text|json] [limits]",
		summary: "discover a Firestore database's collections, template paths and document schemas",
		run:     runFirestoreDiscover,
	})
}

// runFirestoreDiscover is `pyric firestore discover`: it walks a Firestore
// endpoint through the official Go client (an emulator or pyric at
// --emulator-host / FIRESTORE_EMULATOR_HOST, else production with
// application default credentials) and prints the schemas as a text tree
// or JSON. The walk runs to the end in one call (continuations are for the
// MCP tool, whose sessions outlive a call).
func runFirestoreDiscover(ctx context.Context, args []string, stdio Stdio) int {
	f := newFlagSet("firestore discover", stdio)
	format := formatFlag(f, stdio, "text or json")
	project := f.String("project", firstEnv("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"), "project id (default $GOOGLE_CLOUD_PROJECT, or demo-pyric against an emulator)")
	database := f.String("database", "(default)", "database id")
	host := f.String("emulator-host", os.Getenv("FIRESTORE_EMULATOR_HOST"), "emulator (or pyric) host:port; default $FIRESTORE_EMULATOR_HOST, empty means production")
	var o discover.Options
	f.IntVar(&o.MaxDepth, "max-depth", discover.DefaultMaxDepth, "most BFS layers")
	f.IntVar(&o.MaxConcurrency, "max-concurrency", discover.DefaultMaxConcurrency, "requests in flight")
	f.IntVar(&o.MaxSamples, "max-samples", discover.DefaultMaxSamples, "documents read per template path")
	f.IntVar(&o.StopOnStable, "stop-on-stable", discover.DefaultStopOnStable, "stop sampling after this many unchanged documents in a row")
	f.StringVar(&o.RootPrefix, "root-prefix", "", "only root collections whose id starts with this")
	f.BoolVar(&o.DryRun, "dry-run", false, "list root collections only and estimate the cost")
	pos, ok := parseFlags(f, args)
	if !ok {
		return exitError
	}
	if len(pos) != 0 {
		fmt.Fprintln(stdio.Err, "usage: pyric firestore discover [--project P] [--emulator-host HOST:PORT] [--format text|json] [--max-depth N] [--max-samples N] [--stop-on-stable N] [--max-concurrency N] [--root-prefix P] [--dry-run]")
		return exitError
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stdio.Err, "pyric: unknown --format %q (want text or json)\n", *format)
		return exitError
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintf(stdio.Err, "pyric firestore discover: %v\n", err)
		return exitError
	}
	if *project == "" {
		if *host == "" {
			fmt.Fprintln(stdio.Err, "pyric firestore discover: give --project (or set GOOGLE_CLOUD_PROJECT), or --emulator-host for a local endpoint")
			return exitError
		}
		*project = "demo-pyric"
	}
	var opts []option.ClientOption
	if *host != "" {
		conn, err := grpc.NewClient(*host, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(emulatorOwner{}))
		if err != nil {
			fmt.Fprintf(stdio.Err, "pyric firestore discover: %v\n", err)
			return exitError
		}
		opts = append(opts, option.WithGRPCConn(conn))
	}
	client, err := gfs.NewClientWithDatabase(ctx, *project, *database, opts...)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric firestore discover: %v\n", err)
		return exitError
	}
	defer client.Close()
	res, err := discover.Crawl(ctx, discover.ClientSource{Client: client}, o, nil)
	if err != nil {
		fmt.Fprintf(stdio.Err, "pyric firestore discover: %v\n", err)
		return exitFailure
	}
	if *format == "json" {
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return exitFailure
		}
		return exitOK
	}
	discover.WriteText(stdio.Out, res)
	return exitOK
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// emulatorOwner sends the emulators' admin credential, as the Go client
// does by itself when FIRESTORE_EMULATOR_HOST is set.
type emulatorOwner struct{}

func (emulatorOwner) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer owner"}, nil
}
func (emulatorOwner) RequireTransportSecurity() bool { return false }
