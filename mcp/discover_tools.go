package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/pyric/pyric/discover"
)

type discoverIn struct {
	MaxDepth                int    `json:"maxDepth,omitempty" jsonschema:"most BFS layers (default 10, at least 1)"`
	MaxConcurrency          int    `json:"maxConcurrency,omitempty" jsonschema:"requests in flight (default 32)"`
	MaxSamples              int    `json:"maxSamples,omitempty" jsonschema:"documents read per template path (default 50)"`
	StopOnStable            int    `json:"stopOnStable,omitempty" jsonschema:"stop sampling a template after this many documents in a row changed nothing (default 8)"`
	MaxBatchBytes           int    `json:"maxBatchBytes,omitempty" jsonschema:"pause with a continuation once the walk's state exceeds this many bytes (default 1048576, at least 1024)"`
	RootPrefix              string `json:"rootPrefix,omitempty" jsonschema:"only root collections whose id starts with this"`
	DryRun                  bool   `json:"dryRun,omitempty" jsonschema:"list the root collections only and estimate the cost of a full walk"`
	DryRunSubtreeMultiplier int    `json:"dryRunSubtreeMultiplier,omitempty" jsonschema:"collections assumed per root collection in the estimate (default 3)"`
	Continuation            string `json:"continuation,omitempty" jsonschema:"resume a paused walk with the token a previous call returned"`
}

type findGroupIn struct {
	CollectionID string `json:"collectionId" jsonschema:"collection id to find everywhere, e.g. posts"`
	Limit        int    `json:"limit,omitempty" jsonschema:"documents to read (default 100)"`
}

func (s *Server) addDiscoverTools() {
	addTool(s, "firestore_discover_paths", "Discover the database's shape: a breadth-first walk that folds concrete paths into template paths (users/{userId}/posts) and samples documents of each until their merged schema is stable. Large walks pause with a continuation token.",
		func(ctx context.Context, in *discoverIn, _ []byte) *result {
			opts := discover.Options{MaxDepth: in.MaxDepth, MaxConcurrency: in.MaxConcurrency, MaxSamples: in.MaxSamples, StopOnStable: in.StopOnStable,
				MaxBatchBytes: in.MaxBatchBytes, RootPrefix: in.RootPrefix, DryRun: in.DryRun, DryRunSubtreeMultiplier: in.DryRunSubtreeMultiplier, Continuation: in.Continuation}
			eng, err := s.engine()
			if err != nil {
				return engineFailure(err, "discover")
			}
			res, err := discover.Crawl(ctx, discover.NewEngineSource(eng, s.dbName()), opts, s.sessions)
			var se *discover.SessionError
			switch {
			case errors.As(err, &se):
				r := failure(se.Code, se.Message, true, se.RecoveryHint)
				r.data = map[string]any{"events": res.Events, "recoveryHint": se.RecoveryHint}
				return r
			case errors.Is(err, discover.ErrInvalidOptions):
				return invalid("%v", err)
			case err != nil:
				return failure("DISCOVER_FAILED", err.Error(), false, "")
			}
			summary := fmt.Sprintf("%d template path(s), %d list op(s), %d read(s)", len(res.Schemas), res.ListOps, res.ReadOps)
			if res.Continuation != "" {
				summary += "; paused: call again with continuation to resume"
			}
			if res.DryRunCostEstimate != nil {
				summary = fmt.Sprintf("dry run: %d root collection(s), estimated ≤ %d collections", res.DryRunCostEstimate.RootCollections, res.DryRunCostEstimate.EstimatedCollections)
			}
			return okResult(summary, res)
		})

	addTool(s, "firestore_find_collection_group", "Find every template path where collections with an id live, with one names-only collection-group query.",
		func(ctx context.Context, in *findGroupIn, _ []byte) *result {
			eng, err := s.engine()
			if err != nil {
				return engineFailure(err, "find collection group")
			}
			res, err := discover.FindCollectionGroup(ctx, discover.NewEngineSource(eng, s.dbName()), in.CollectionID, in.Limit)
			if errors.Is(err, discover.ErrInvalidOptions) {
				return invalid("%v", err)
			}
			if err != nil {
				return failure("FIND_COLLECTION_GROUP_FAILED", err.Error(), false, "")
			}
			return okResult(fmt.Sprintf("%s lives at %d template path(s) (%d read(s))", in.CollectionID, len(res.Hosts), res.Reads), res)
		})
}
