package functions

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Platforms of an endpoint, as firebase-functions' manifest names them.
const (
	GCFv1 = "gcfv1"
	GCFv2 = "gcfv2"
)

// DefaultRegion is the region of a function that names none, as in
// production and the Emulator Suite.
const DefaultRegion = "us-central1"

// Defaults production applies when a function sets no option.
const (
	DefaultTimeout = 60 * time.Second
	// DefaultMemoryMB is the default memory of a function instance.
	DefaultMemoryMB = 256
	// DefaultConcurrency is a gcfv2 function's default concurrency per
	// instance (gcfv1 instances take one request at a time).
	DefaultConcurrency = 80
)

// Endpoint is one exported function, as its __endpoint declares it.
type Endpoint struct {
	// ID is the function's name: the export's name, "group-name" for a
	// member of an exported group (the URL's last segment).
	ID string `json:"id"`
	// EntryPoint is the export path with dots ("group.name").
	EntryPoint string `json:"entryPoint"`
	// Codebase is the codebase the function belongs to.
	Codebase string `json:"codebase"`
	// Platform is GCFv1 or GCFv2.
	Platform string `json:"platform"`
	// Regions are the regions the function is deployed to (at least one).
	Regions []string `json:"region"`
	// Timeout is the invocation deadline (timeoutSeconds).
	Timeout time.Duration `json:"timeout"`
	// MemoryMB is availableMemoryMb.
	MemoryMB int `json:"availableMemoryMb"`
	// Concurrency is how many invocations one instance runs at once.
	Concurrency int `json:"concurrency"`
	// SecretEnv names the secrets the function declares (defineSecret).
	SecretEnv []string `json:"secretEnvironmentVariables,omitempty"`

	// Exactly one trigger is set.
	HTTPS    *HTTPSTrigger    `json:"httpsTrigger,omitempty"`
	Callable *CallableTrigger `json:"callableTrigger,omitempty"`
	Event    *EventTrigger    `json:"eventTrigger,omitempty"`
	Blocking *BlockingTrigger `json:"blockingTrigger,omitempty"`
	Task     *TaskTrigger     `json:"taskQueueTrigger,omitempty"`
	Schedule *ScheduleTrigger `json:"scheduleTrigger,omitempty"`

	// Raw is the __endpoint object as the worker reported it.
	Raw json.RawMessage `json:"-"`
}

// HTTPSTrigger is an onRequest function.
type HTTPSTrigger struct {
	Invoker []string `json:"invoker,omitempty"`
}

// CallableTrigger is an onCall function.
type CallableTrigger struct {
	GenkitAction string `json:"genkitAction,omitempty"`
}

// EventTrigger is a function triggered by a service's events.
type EventTrigger struct {
	EventType               string            `json:"eventType"`
	EventFilters            map[string]string `json:"eventFilters,omitempty"`
	EventFilterPathPatterns map[string]string `json:"eventFilterPathPatterns,omitempty"`
	Channel                 string            `json:"channel,omitempty"`
	Region                  string            `json:"region,omitempty"`
	Retry                   bool              `json:"retry"`
}

// BlockingTrigger is an Auth blocking function.
type BlockingTrigger struct {
	EventType string         `json:"eventType"`
	Options   map[string]any `json:"options,omitempty"`
}

// TaskTrigger is an onTaskDispatched function.
type TaskTrigger struct {
	RetryConfig map[string]any `json:"retryConfig,omitempty"`
	RateLimits  map[string]any `json:"rateLimits,omitempty"`
}

// ScheduleTrigger is an onSchedule function.
type ScheduleTrigger struct {
	Schedule    string         `json:"schedule"`
	TimeZone    string         `json:"timeZone,omitempty"`
	RetryConfig map[string]any `json:"retryConfig,omitempty"`
}

// Kind names the endpoint's trigger: "https", "callable", "event",
// "blocking", "task" or "schedule".
func (e *Endpoint) Kind() string {
	switch {
	case e.HTTPS != nil:
		return "https"
	case e.Callable != nil:
		return "callable"
	case e.Event != nil:
		return "event"
	case e.Blocking != nil:
		return "blocking"
	case e.Task != nil:
		return "task"
	case e.Schedule != nil:
		return "schedule"
	}
	return ""
}

// IsHTTP reports whether the function is invoked with an HTTP request
// (onRequest, onCall, blocking and task functions are; event functions
// get a JSON body through DeliverEvent).
func (e *Endpoint) IsHTTP() bool {
	// A gcfv2 scheduled function is an HTTP function: Cloud Scheduler
	// POSTs to its URL (firebase-functions' onSchedule reads the
	// X-CloudScheduler-* headers); a gcfv1 one takes a Pub/Sub event.
	return e.Event == nil && (e.Schedule == nil || e.Platform == GCFv2)
}

// rawEndpoint is the wire form of __endpoint; options are numbers once
// the worker resolved params, and null where a ResetValue stood.
type rawEndpoint struct {
	EntryPoint                 string                 `json:"entryPoint"`
	Platform                   string                 `json:"platform"`
	Region                     []string               `json:"region"`
	AvailableMemoryMb          *float64               `json:"availableMemoryMb"`
	TimeoutSeconds             *float64               `json:"timeoutSeconds"`
	Concurrency                *float64               `json:"concurrency"`
	SecretEnvironmentVariables []struct{ Key string } `json:"secretEnvironmentVariables"`
	HTTPSTrigger               *HTTPSTrigger          `json:"httpsTrigger"`
	CallableTrigger            *CallableTrigger       `json:"callableTrigger"`
	EventTrigger               *struct {
		EventType               string          `json:"eventType"`
		EventFilters            map[string]any  `json:"eventFilters"`
		EventFilterPathPatterns map[string]any  `json:"eventFilterPathPatterns"`
		Channel                 string          `json:"channel"`
		Region                  string          `json:"region"`
		Retry                   json.RawMessage `json:"retry"`
	} `json:"eventTrigger"`
	BlockingTrigger  *BlockingTrigger `json:"blockingTrigger"`
	TaskQueueTrigger *TaskTrigger     `json:"taskQueueTrigger"`
	ScheduleTrigger  *struct {
		Schedule    any            `json:"schedule"`
		TimeZone    any            `json:"timeZone"`
		RetryConfig map[string]any `json:"retryConfig"`
	} `json:"scheduleTrigger"`
}

// ParseEndpoint reads one export's __endpoint (as the worker reports it,
// params resolved) into an Endpoint of the codebase.
func ParseEndpoint(codebase, id string, raw json.RawMessage) (Endpoint, error) {
	var r rawEndpoint
	if err := json.Unmarshal(raw, &r); err != nil {
		return Endpoint{}, fmt.Errorf("function %s: __endpoint: %w", id, err)
	}
	e := Endpoint{ID: id, EntryPoint: r.EntryPoint, Codebase: codebase, Platform: r.Platform, Raw: raw,
		Timeout: DefaultTimeout, MemoryMB: DefaultMemoryMB}
	if e.EntryPoint == "" {
		e.EntryPoint = id
	}
	switch e.Platform {
	case GCFv1, GCFv2:
	case "":
		e.Platform = GCFv1
	default:
		return Endpoint{}, fmt.Errorf("function %s: unknown platform %q", id, r.Platform)
	}
	for _, reg := range r.Region {
		if reg != "" {
			e.Regions = append(e.Regions, reg)
		}
	}
	if len(e.Regions) == 0 {
		e.Regions = []string{DefaultRegion}
	}
	if r.TimeoutSeconds != nil && *r.TimeoutSeconds > 0 {
		e.Timeout = time.Duration(*r.TimeoutSeconds * float64(time.Second))
	}
	if r.AvailableMemoryMb != nil && *r.AvailableMemoryMb > 0 {
		e.MemoryMB = int(*r.AvailableMemoryMb)
	}
	e.Concurrency = 1
	if e.Platform == GCFv2 {
		e.Concurrency = DefaultConcurrency
		if r.Concurrency != nil && *r.Concurrency >= 1 {
			e.Concurrency = int(*r.Concurrency)
		}
	}
	for _, s := range r.SecretEnvironmentVariables {
		e.SecretEnv = append(e.SecretEnv, s.Key)
	}
	n := 0
	if r.HTTPSTrigger != nil {
		e.HTTPS, n = r.HTTPSTrigger, n+1
	}
	if r.CallableTrigger != nil {
		e.Callable, n = r.CallableTrigger, n+1
	}
	if t := r.EventTrigger; t != nil {
		n++
		e.Event = &EventTrigger{EventType: t.EventType, Channel: t.Channel, Region: t.Region}
		var err error
		if e.Event.EventFilters, err = stringFilters(id, "eventFilters", t.EventFilters); err != nil {
			return Endpoint{}, err
		}
		if e.Event.EventFilterPathPatterns, err = stringFilters(id, "eventFilterPathPatterns", t.EventFilterPathPatterns); err != nil {
			return Endpoint{}, err
		}
		var retry bool
		if json.Unmarshal(t.Retry, &retry) == nil {
			e.Event.Retry = retry
		}
		if e.Event.EventType == "" {
			return Endpoint{}, fmt.Errorf("function %s: eventTrigger has no eventType", id)
		}
	}
	if r.BlockingTrigger != nil {
		e.Blocking, n = r.BlockingTrigger, n+1
	}
	if r.TaskQueueTrigger != nil {
		e.Task, n = r.TaskQueueTrigger, n+1
	}
	if t := r.ScheduleTrigger; t != nil {
		n++
		e.Schedule = &ScheduleTrigger{RetryConfig: t.RetryConfig}
		e.Schedule.Schedule, _ = t.Schedule.(string)
		e.Schedule.TimeZone, _ = t.TimeZone.(string)
	}
	if n != 1 {
		return Endpoint{}, fmt.Errorf("function %s: __endpoint declares %d triggers, want exactly one", id, n)
	}
	return e, nil
}

// stringFilters reads an event trigger's filters. The worker resolved
// params, so a value that is not a string (a parameter expression left
// unresolved) is refused: dropping it would fire the function on events
// its filter excludes.
func stringFilters(id, field string, m map[string]any) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("function %s: eventTrigger.%s.%s is %v, not a string (an unresolved parameter?)", id, field, k, v)
		}
		out[k] = s
	}
	return out, nil
}

// parseManifest reads a worker's endpoints object {id: __endpoint}, in
// id order.
func parseManifest(codebase string, endpoints map[string]json.RawMessage) ([]Endpoint, []error) {
	ids := make([]string, 0, len(endpoints))
	for id := range endpoints {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Endpoint
	var errs []error
	for _, id := range ids {
		e, err := ParseEndpoint(codebase, id, endpoints[id])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, e)
	}
	return out, errs
}
