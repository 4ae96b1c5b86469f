package discover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// Source is the Firestore a walk reads. Paths are relative to the
// database's documents root; "" is the root.
type Source interface {
	// ListCollectionIDs lists the ids of the collections directly under a
	// document ("" for the root collections).
	ListCollectionIDs(ctx context.Context, docPath string) ([]string, error)
	// ListDocumentIDs lists the ids of a collection's documents, including
	// missing documents that only have subcollections.
	ListDocumentIDs(ctx context.Context, collPath string) ([]string, error)
	// GetDocument reads a document's fields; exists is false when missing.
	GetDocument(ctx context.Context, docPath string) (fields map[string]*pb.Value, exists bool, err error)
}

// GroupSource is a Source that also runs collection-group queries: the
// paths of up to limit documents in collections with the id.
type GroupSource interface {
	Source
	CollectionGroupDocs(ctx context.Context, collectionID string, limit int) ([]string, error)
}

// Defaults of Options.
const (
	DefaultMaxDepth                = 10
	DefaultMaxConcurrency          = 32
	DefaultMaxSamples              = 50
	DefaultStopOnStable            = 8
	DefaultMaxBatchBytes           = 1 << 20
	MinMaxBatchBytes               = 1024
	DefaultDryRunSubtreeMultiplier = 3
)

// Options configure a walk; zero values take the defaults.
type Options struct {
	// MaxDepth caps the BFS layers (root collections are layer 1).
	MaxDepth int `json:"maxDepth,omitempty"`
	// MaxConcurrency caps the requests in flight.
	MaxConcurrency int `json:"maxConcurrency,omitempty"`
	// MaxSamples caps the documents read per template path.
	MaxSamples int `json:"maxSamples,omitempty"`
	// StopOnStable ends a template's sampling after this many consecutive
	// documents changed nothing; it is also the read chunk size.
	StopOnStable int `json:"stopOnStable,omitempty"`
	// MaxBatchBytes pauses the walk (with a continuation) at a layer or
	// template boundary once its state exceeds this many bytes.
	MaxBatchBytes int `json:"maxBatchBytes,omitempty"`
	// RootPrefix keeps only root collections whose id starts with it.
	RootPrefix string `json:"rootPrefix,omitempty"`
	// DryRun lists the root collections only and estimates the cost.
	DryRun                  bool `json:"dryRun,omitempty"`
	DryRunSubtreeMultiplier int  `json:"dryRunSubtreeMultiplier,omitempty"`
	// Continuation resumes a paused walk (its options are kept).
	Continuation string `json:"continuation,omitempty"`
}

// Validate fills defaults and rejects impossible options.
func (o *Options) Validate() error {
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxConcurrency == 0 {
		o.MaxConcurrency = DefaultMaxConcurrency
	}
	if o.MaxSamples == 0 {
		o.MaxSamples = DefaultMaxSamples
	}
	if o.StopOnStable == 0 {
		o.StopOnStable = DefaultStopOnStable
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if o.DryRunSubtreeMultiplier == 0 {
		o.DryRunSubtreeMultiplier = DefaultDryRunSubtreeMultiplier
	}
	switch {
	case o.MaxDepth < 1 || o.MaxDepth > 100:
		return fmt.Errorf("maxDepth must be between 1 and 100, got %d", o.MaxDepth)
	case o.MaxConcurrency < 1 || o.MaxConcurrency > 256:
		return fmt.Errorf("maxConcurrency must be between 1 and 256, got %d", o.MaxConcurrency)
	case o.MaxSamples < 1 || o.MaxSamples > 10000:
		return fmt.Errorf("maxSamples must be between 1 and 10000, got %d", o.MaxSamples)
	case o.StopOnStable < 1:
		return fmt.Errorf("stopOnStable must be at least 1, got %d", o.StopOnStable)
	case o.MaxBatchBytes < MinMaxBatchBytes:
		return fmt.Errorf("maxBatchBytes must be at least %d, got %d", MinMaxBatchBytes, o.MaxBatchBytes)
	case o.DryRunSubtreeMultiplier < 1:
		return fmt.Errorf("dryRunSubtreeMultiplier must be at least 1, got %d", o.DryRunSubtreeMultiplier)
	case o.DryRun && o.Continuation != "":
		return errors.New("dryRun cannot be combined with continuation: a dry run never pauses")
	}
	return nil
}

// Event is one entry of a walk's event stream; Kind is
// collection_discovered, schema_updated, sampling_complete or error.
type Event struct {
	Kind             string   `json:"kind"`
	TemplatePath     string   `json:"templatePath"`
	Depth            int      `json:"depth,omitempty"`
	ParentPath       string   `json:"parentPath,omitempty"`
	Changes          []Change `json:"changes,omitempty"`
	SamplingComplete string   `json:"samplingComplete,omitempty"`
	SamplesSeen      *int     `json:"samplesSeen,omitempty"`
	DeclaredAt       *int     `json:"declaredAt,omitempty"`
	Code             string   `json:"code,omitempty"`
	Message          string   `json:"message,omitempty"`
	RecoveryHint     string   `json:"recoveryHint,omitempty"`
}

// Sampling outcomes of a template path.
const (
	ConvergedStable    = "converged_via_stable"
	ConvergedExhausted = "converged_via_exhausted"
	ConvergedMax       = "converged_via_max"
	SamplingOpen       = "sampling_open"
)

// CollectionSchema is what the walk learned about one template path.
type CollectionSchema struct {
	TemplatePath string `json:"templatePath"`
	Depth        int    `json:"depth"`
	ParentPath   string `json:"parentPath,omitempty"`
	// Collections is the number of concrete collections folded into it;
	// Documents the number of document ids listed in them.
	Collections      int                         `json:"collections"`
	Documents        int                         `json:"documents"`
	SamplesSeen      int                         `json:"samplesSeen"`
	SamplingComplete string                      `json:"samplingComplete"`
	Fields           map[string]*FieldDescriptor `json:"fields"`
}

// DryRunCostEstimate is an upper-bound projection of a full walk.
type DryRunCostEstimate struct {
	RootCollections       int    `json:"rootCollections"`
	EstimatedCollections  int    `json:"estimatedCollections"`
	EstimatedListOps      int    `json:"estimatedListOps"`
	EstimatedReadOps      int    `json:"estimatedReadOps"`
	SubtreeMultiplier     int    `json:"subtreeMultiplier"`
	Formula               string `json:"formula"`
	ListOpsSpentOnDryRun  int    `json:"listOpsSpentOnDryRun"`
	ReadOpsSpentOnDryRun  int    `json:"readOpsSpentOnDryRun"`
	MaxSamplesPerTemplate int    `json:"maxSamplesPerTemplate"`
}

// Result is a walk's output. ListOps and ReadOps add up across the batches
// of a resumed walk; Events are this batch's only.
type Result struct {
	Schemas            map[string]*CollectionSchema `json:"schemas"`
	Events             []Event                      `json:"events"`
	ListOps            int                          `json:"listOps"`
	ReadOps            int                          `json:"readOps"`
	Continuation       string                       `json:"continuation,omitempty"`
	Complete           bool                         `json:"complete"`
	DryRunCostEstimate *DryRunCostEstimate          `json:"dryRunCostEstimate,omitempty"`
}

// state is a walk between batches; it is what a session stores.
type state struct {
	Opts      Options                      `json:"opts"`
	Phase     string                       `json:"phase"` // structure | sampling
	Depth     int                          `json:"depth"` // layer of Frontier
	Frontier  []string                     `json:"frontier"`
	Order     []string                     `json:"order"` // templates in discovery order
	Templates map[string]*collState        `json:"templates"`
	Queue     []string                     `json:"queue"`
	Schemas   map[string]*CollectionSchema `json:"schemas"`
	ListOps   int                          `json:"listOps"`
	ReadOps   int                          `json:"readOps"`
}

type collState struct {
	Depth       int      `json:"depth"`
	ParentPath  string   `json:"parentPath,omitempty"`
	Collections int      `json:"collections"`
	Documents   int      `json:"documents"`
	Samples     []string `json:"samples"`
}

// ErrInvalidOptions wraps option errors.
var ErrInvalidOptions = errors.New("invalid discover options")

// Crawl walks src. With sessions, a walk whose state outgrows
// MaxBatchBytes pauses at the next layer or template boundary and returns
// a continuation; without, it runs to the end. A continuation that can't
// be used yields a Result with one error event (code and recovery hint)
// and a *SessionError. Other source failures return an error.
func Crawl(ctx context.Context, src Source, opts Options, sessions *SessionStore) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	c := &crawler{src: src, res: &Result{Events: []Event{}}}
	var st *state
	if opts.Continuation != "" {
		if sessions == nil {
			return nil, fmt.Errorf("%w: continuation given but this caller keeps no sessions", ErrInvalidOptions)
		}
		raw, err := sessions.Get(opts.Continuation)
		if err == nil {
			st = &state{}
			if jerr := json.Unmarshal(raw, st); jerr != nil {
				err = &SessionError{Code: SessionMalformedToken, Message: "the session's state is unreadable", RecoveryHint: reissue}
			}
		}
		if err != nil {
			var se *SessionError
			errors.As(err, &se)
			c.res.Events = append(c.res.Events, Event{Kind: "error", Code: se.Code, Message: se.Message, RecoveryHint: se.RecoveryHint})
			c.res.Schemas = map[string]*CollectionSchema{}
			return c.res, err
		}
	} else {
		st = &state{Opts: opts, Phase: "structure", Templates: map[string]*collState{}, Schemas: map[string]*CollectionSchema{}}
	}
	c.st = st
	c.sem = make(chan struct{}, st.Opts.MaxConcurrency)
	if st.Opts.DryRun {
		return c.dryRun(ctx)
	}
	if err := c.run(ctx, opts.Continuation, sessions); err != nil {
		return nil, err
	}
	return c.res, nil
}

type crawler struct {
	src Source
	st  *state
	res *Result
	sem chan struct{}
}

func (c *crawler) dryRun(ctx context.Context) (*Result, error) {
	roots, err := c.roots(ctx)
	if err != nil {
		return nil, err
	}
	m := c.st.Opts.DryRunSubtreeMultiplier
	est := len(roots) * m
	c.res.ListOps = c.st.ListOps
	c.res.Schemas = map[string]*CollectionSchema{}
	c.res.Complete = true
	c.res.DryRunCostEstimate = &DryRunCostEstimate{
		RootCollections: len(roots), EstimatedCollections: est,
		EstimatedListOps: est * 2, EstimatedReadOps: est * c.st.Opts.MaxSamples, SubtreeMultiplier: m,
		Formula:              "collections = roots × multiplier; listOps = 2 × collections (listDocuments + listCollections per layer); readOps = collections × maxSamples",
		ListOpsSpentOnDryRun: c.st.ListOps, MaxSamplesPerTemplate: c.st.Opts.MaxSamples,
	}
	return c.res, nil
}

func (c *crawler) roots(ctx context.Context) ([]string, error) {
	ids, err := c.src.ListCollectionIDs(ctx, "")
	c.st.ListOps++
	if err != nil {
		return nil, fmt.Errorf("list root collections: %w", err)
	}
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id, c.st.Opts.RootPrefix) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (c *crawler) run(ctx context.Context, token string, sessions *SessionStore) error {
	st := c.st
	if st.Phase == "structure" && st.Depth == 0 {
		roots, err := c.roots(ctx)
		if err != nil {
			return err
		}
		st.Frontier, st.Depth = roots, 1
	}
	pause := func() (bool, error) {
		if sessions == nil {
			return false, nil
		}
		raw, err := json.Marshal(st)
		if err != nil {
			return false, err
		}
		if len(raw) <= st.Opts.MaxBatchBytes {
			return false, nil
		}
		if token == "" {
			token, err = sessions.Create(raw)
		} else {
			err = sessions.Update(token, raw)
		}
		if err != nil {
			return false, err
		}
		c.finish(token)
		return true, nil
	}
	for st.Phase == "structure" {
		if len(st.Frontier) == 0 {
			st.Phase = "sampling"
			st.Queue = append([]string(nil), st.Order...)
			break
		}
		if err := c.layer(ctx); err != nil {
			return err
		}
		if p, err := pause(); p || err != nil {
			return err
		}
	}
	for len(st.Queue) > 0 {
		tp := st.Queue[0]
		if err := c.sample(ctx, tp); err != nil {
			return err
		}
		st.Queue = st.Queue[1:]
		if len(st.Queue) == 0 {
			break
		}
		if p, err := pause(); p || err != nil {
			return err
		}
	}
	if token != "" && sessions != nil {
		sessions.Delete(token)
	}
	c.finish("")
	return nil
}

// finish fills the result from the state; a non-empty token means paused.
func (c *crawler) finish(token string) {
	st := c.st
	c.res.ListOps, c.res.ReadOps = st.ListOps, st.ReadOps
	c.res.Continuation = token
	c.res.Complete = token == ""
	c.res.Schemas = map[string]*CollectionSchema{}
	for _, tp := range st.Order {
		if s, ok := st.Schemas[tp]; ok {
			c.res.Schemas[tp] = s
			continue
		}
		t := st.Templates[tp]
		c.res.Schemas[tp] = &CollectionSchema{TemplatePath: tp, Depth: t.Depth, ParentPath: t.ParentPath, Collections: t.Collections,
			Documents: t.Documents, SamplingComplete: SamplingOpen, Fields: map[string]*FieldDescriptor{}}
	}
}

// parallel runs f over n items with at most MaxConcurrency in flight and
// returns the first error.
func (c *crawler) parallel(ctx context.Context, n int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		select {
		case c.sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-c.sem }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// layer lists the documents of every collection of the frontier, then the
// subcollections of every document, and makes those the next frontier.
func (c *crawler) layer(ctx context.Context) error {
	st := c.st
	colls := st.Frontier
	docIDs := make([][]string, len(colls))
	err := c.parallel(ctx, len(colls), func(i int) error {
		ids, err := c.src.ListDocumentIDs(ctx, colls[i])
		if err != nil {
			return fmt.Errorf("list documents of %s: %w", colls[i], err)
		}
		sort.Strings(ids)
		docIDs[i] = ids
		return nil
	})
	st.ListOps += len(colls)
	if err != nil {
		return err
	}
	var docs []string
	for i, coll := range colls {
		tp := TemplatePath(coll)
		t := st.Templates[tp]
		if t == nil {
			t = &collState{Depth: st.Depth, Samples: []string{}}
			if strings.Contains(coll, "/") {
				t.ParentPath = TemplatePath(parentCollection(coll))
			}
			st.Templates[tp] = t
			st.Order = append(st.Order, tp)
			c.res.Events = append(c.res.Events, Event{Kind: "collection_discovered", TemplatePath: tp, Depth: st.Depth, ParentPath: t.ParentPath})
		}
		t.Collections++
		t.Documents += len(docIDs[i])
		for _, id := range docIDs[i] {
			p := coll + "/" + id
			if len(t.Samples) < st.Opts.MaxSamples {
				t.Samples = append(t.Samples, p)
			}
			docs = append(docs, p)
		}
	}
	var next []string
	if st.Depth < st.Opts.MaxDepth {
		subs := make([][]string, len(docs))
		err = c.parallel(ctx, len(docs), func(i int) error {
			ids, err := c.src.ListCollectionIDs(ctx, docs[i])
			if err != nil {
				return fmt.Errorf("list collections of %s: %w", docs[i], err)
			}
			sort.Strings(ids)
			subs[i] = ids
			return nil
		})
		st.ListOps += len(docs)
		if err != nil {
			return err
		}
		for i, d := range docs {
			for _, id := range subs[i] {
				next = append(next, d+"/"+id)
			}
		}
	}
	st.Frontier = next
	st.Depth++
	return nil
}

// parentCollection is the collection path holding a subcollection's
// parent document ("" for a root collection).
func parentCollection(coll string) string {
	segs := strings.Split(coll, "/")
	if len(segs) < 3 {
		return ""
	}
	return strings.Join(segs[:len(segs)-2], "/")
}

// sample reads a template's sample documents in chunks of StopOnStable and
// merges them until StopOnStable consecutive documents change nothing.
func (c *crawler) sample(ctx context.Context, tp string) error {
	st := c.st
	t := st.Templates[tp]
	schema := NewSchema()
	stable, outcome := 0, ""
	var declared *int
	chunk := st.Opts.StopOnStable
	for start := 0; start < len(t.Samples) && outcome == ""; start += chunk {
		end := min(start+chunk, len(t.Samples))
		type got struct {
			fields map[string]*pb.Value
			ok     bool
		}
		docs := make([]got, end-start)
		err := c.parallel(ctx, end-start, func(i int) error {
			f, ok, err := c.src.GetDocument(ctx, t.Samples[start+i])
			if err != nil {
				return fmt.Errorf("read %s: %w", t.Samples[start+i], err)
			}
			docs[i] = got{f, ok}
			return nil
		})
		st.ReadOps += end - start
		if err != nil {
			return err
		}
		for _, d := range docs {
			if !d.ok {
				continue // a missing document that only has subcollections
			}
			ch := schema.Merge(d.fields)
			if len(ch) > 0 {
				stable = 0
				c.res.Events = append(c.res.Events, Event{Kind: "schema_updated", TemplatePath: tp, Changes: ch})
				continue
			}
			stable++
			if stable >= st.Opts.StopOnStable {
				outcome = ConvergedStable
				n := schema.SamplesSeen
				declared = &n
				break
			}
		}
	}
	if outcome == "" {
		if t.Documents > len(t.Samples) {
			outcome = ConvergedMax
		} else {
			outcome = ConvergedExhausted
		}
	}
	seen := schema.SamplesSeen
	st.Schemas[tp] = &CollectionSchema{TemplatePath: tp, Depth: t.Depth, ParentPath: t.ParentPath, Collections: t.Collections,
		Documents: t.Documents, SamplesSeen: seen, SamplingComplete: outcome, Fields: schema.Fields}
	c.res.Events = append(c.res.Events, Event{Kind: "sampling_complete", TemplatePath: tp, SamplingComplete: outcome, SamplesSeen: &seen, DeclaredAt: declared})
	return nil
}
