package functions

import (
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// Task queues: the queue of an onTaskDispatched function, as Cloud Tasks
// runs it for a deployed function and firebase-admin's
// getFunctions().taskQueue(name).enqueue() reaches it through
// CLOUD_TASKS_EMULATOR_HOST. A queue is named after its function
// (projects/P/locations/REGION/queues/FUNCTION) and takes the function's
// retryConfig and rateLimits. A task is POSTed to the function with
// Cloud Tasks' X-CloudTasks-* headers once its schedule time comes,
// retried with exponential backoff until it answers 2xx or its attempts
// run out, and kept in the service's bucket until then, so an enqueued
// task survives kill -9.
//
// Where firebase-tools' tasks emulator departs from production, this
// follows production: a queue's default is 100 attempts in all (the
// emulator's 3 is a retry count that allows 4), the queue name header is
// the queue id, the ETA header is seconds since the epoch.

// Errors of the task API; the adapter maps them to Cloud Tasks' codes.
var (
	ErrQueueNotFound = errors.New("Queue does not exist. If you just created the queue, wait at least a minute for the queue to initialize.")
	ErrTaskExists    = errors.New("Requested entity already exists")
	ErrTaskNotFound  = errors.New("Requested entity was not found.")
)

// InvalidTaskError is a task request that Cloud Tasks refuses
// (INVALID_ARGUMENT), with the reason.
type InvalidTaskError struct{ Reason string }

func (e *InvalidTaskError) Error() string { return e.Reason }

// Defaults of a Cloud Tasks queue (and so of a deployed task function
// that sets none).
const (
	DefaultTaskMaxAttempts      = 100
	DefaultTaskMinBackoff       = 100 * time.Millisecond
	DefaultTaskMaxBackoff       = time.Hour
	DefaultTaskMaxDoublings     = 16
	DefaultTaskMaxConcurrent    = 1000
	DefaultTaskPerSecond        = 500
	DefaultTaskDispatchDeadline = 10 * time.Minute
	// MaxTaskBody is Cloud Tasks' limit on a task's size (1 MB).
	MaxTaskBody = 1 << 20
	// maxQueuedTasks bounds the tasks one queue holds, so a runaway
	// producer cannot grow memory without end.
	maxQueuedTasks = 100_000
)

// validTaskID reports whether Cloud Tasks (and firebase-admin) accept id
// as a task id: 1 to 500 of [A-Za-z0-9_-]. (Not a regexp: {1,500}
// compiles to 500 copies of the class, ~30 ms and 280 KB at every start
// of pyric.)
func validTaskID(id string) bool {
	if len(id) == 0 || len(id) > 500 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// TaskRequest is a Cloud Tasks v2 Task as a client creates it.
type TaskRequest struct {
	Name             string `json:"name,omitempty"`
	ScheduleTime     string `json:"scheduleTime,omitempty"`
	DispatchDeadline string `json:"dispatchDeadline,omitempty"`
	HTTPRequest      *struct {
		URL        string            `json:"url,omitempty"`
		HTTPMethod string            `json:"httpMethod,omitempty"`
		Headers    map[string]string `json:"headers,omitempty"`
		// Body is base64 (JSON's []byte encoding).
		Body      []byte          `json:"body,omitempty"`
		OIDCToken json.RawMessage `json:"oidcToken,omitempty"`
	} `json:"httpRequest"`
}

// Task is one task of a queue.
type Task struct {
	// Name is projects/P/locations/L/queues/Q/tasks/ID.
	Name         string            `json:"name"`
	Function     string            `json:"function"`
	Headers      map[string]string `json:"headers,omitempty"`
	Body         []byte            `json:"body,omitempty"`
	CreateTime   time.Time         `json:"createTime"`
	ScheduleTime time.Time         `json:"scheduleTime"`
	Deadline     time.Duration     `json:"dispatchDeadline"`
	// DispatchCount is how many attempts were made; ResponseCount how
	// many got an answer other than 5xx; LastStatus the last answer.
	DispatchCount int       `json:"dispatchCount"`
	ResponseCount int       `json:"responseCount"`
	LastStatus    int       `json:"lastStatus,omitempty"`
	FirstAttempt  time.Time `json:"firstAttempt,omitzero"`
}

// ID is the task's id, the last segment of its name.
func (t *Task) ID() string { return t.Name[strings.LastIndexByte(t.Name, '/')+1:] }

func (t *Task) queue() string { return t.Name[:strings.LastIndex(t.Name, "/tasks/")] }

// Resource is the task in Cloud Tasks' JSON (its BASIC view).
func (t *Task) Resource() map[string]any {
	return map[string]any{
		"name":             t.Name,
		"scheduleTime":     t.ScheduleTime.UTC().Format(time.RFC3339Nano),
		"createTime":       t.CreateTime.UTC().Format(time.RFC3339Nano),
		"dispatchDeadline": strconv.FormatFloat(t.Deadline.Seconds(), 'f', -1, 64) + "s",
		"dispatchCount":    t.DispatchCount,
		"responseCount":    t.ResponseCount,
		"view":             "BASIC",
		"httpRequest":      map[string]any{"httpMethod": "POST", "headers": t.Headers},
	}
}

// queuePolicy is a queue's retry and rate configuration.
type queuePolicy struct {
	maxAttempts   int // -1: unlimited
	maxRetry      time.Duration
	minBackoff    time.Duration
	maxBackoff    time.Duration
	maxDoublings  int
	maxConcurrent int
	perSecond     float64
}

func policyOf(t *TaskTrigger) queuePolicy {
	p := queuePolicy{maxAttempts: DefaultTaskMaxAttempts, minBackoff: DefaultTaskMinBackoff, maxBackoff: DefaultTaskMaxBackoff,
		maxDoublings: DefaultTaskMaxDoublings, maxConcurrent: DefaultTaskMaxConcurrent, perSecond: DefaultTaskPerSecond}
	if t == nil {
		return p
	}
	num := func(m map[string]any, k string) (float64, bool) {
		f, ok := m[k].(float64)
		return f, ok
	}
	if v, ok := num(t.RetryConfig, "maxAttempts"); ok {
		p.maxAttempts = int(v)
	}
	if v, ok := num(t.RetryConfig, "maxRetrySeconds"); ok && v > 0 {
		p.maxRetry = seconds(v)
	}
	if v, ok := num(t.RetryConfig, "minBackoffSeconds"); ok && v >= 0 {
		p.minBackoff = seconds(v)
	}
	if v, ok := num(t.RetryConfig, "maxBackoffSeconds"); ok && v >= 0 {
		p.maxBackoff = seconds(v)
	}
	if v, ok := num(t.RetryConfig, "maxDoublings"); ok && v >= 0 {
		p.maxDoublings = int(v)
	}
	if v, ok := num(t.RateLimits, "maxConcurrentDispatches"); ok && v >= 1 {
		p.maxConcurrent = int(v)
	}
	if v, ok := num(t.RateLimits, "maxDispatchesPerSecond"); ok && v > 0 {
		p.perSecond = v
	}
	return p
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// backoff is the wait after the n-th failed attempt (n ≥ 1): doubling
// from minBackoff maxDoublings times, then growing linearly, capped at
// maxBackoff — Cloud Tasks' RetryConfig.
func (p queuePolicy) backoff(n int) time.Duration {
	d := float64(p.minBackoff)
	if n-1 <= p.maxDoublings {
		d *= math.Pow(2, float64(n-1))
	} else {
		d *= math.Pow(2, float64(p.maxDoublings)) * float64(n-p.maxDoublings)
	}
	if d > float64(p.maxBackoff) {
		return p.maxBackoff
	}
	return time.Duration(d)
}

// exhausted reports whether a task that failed its n-th attempt is
// dropped: past maxAttempts, unless maxRetryDuration is set and not yet
// over (both limits must be reached, as in Cloud Tasks).
func (p queuePolicy) exhausted(t *Task, now time.Time) bool {
	if p.maxAttempts < 0 || t.DispatchCount < p.maxAttempts {
		return false
	}
	return p.maxRetry == 0 || now.Sub(t.FirstAttempt) >= p.maxRetry
}

// taskHeap orders a queue's waiting tasks by schedule time.
type taskHeap []*Task

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(i, j int) bool { return h[i].ScheduleTime.Before(h[j].ScheduleTime) }
func (h taskHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *taskHeap) Push(x any)        { *h = append(*h, x.(*Task)) }
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// taskQueue is one queue: its waiting tasks and the ones running.
type taskQueue struct {
	name     string // projects/P/locations/L/queues/Q
	function string
	waiting  taskHeap
	tasks    map[string]*Task // by name: waiting and running
	running  int
	// policy is config's retry and rate configuration, computed when
	// the function's configuration changes (a reload gives it a new
	// TaskTrigger), with limiter at its rate.
	config   *TaskTrigger
	policy   queuePolicy
	limiter  *rate.Limiter
	wake     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
}

// taskQueues is the engine's task state.
type taskQueues struct {
	mu     sync.Mutex
	queues map[string]*taskQueue
	wg     sync.WaitGroup
	idle   *sync.Cond
	// ended holds the names of tasks that ran or were deleted, with
	// when: Cloud Tasks refuses a new task of the same name for about
	// an hour (deduplication), so a retried enqueue does not run twice.
	ended map[string]time.Time
}

// tombstoneTTL is how long an ended task's name stays taken.
const tombstoneTTL = time.Hour

// endedLocked records that a task ran or was deleted, dropping
// tombstones past their time (and the oldest beyond the bound).
func (e *Engine) endedLocked(name string) {
	now := e.now()
	if len(e.tasks.ended) >= maxQueuedTasks {
		for n, at := range e.tasks.ended {
			if now.Sub(at) >= tombstoneTTL || len(e.tasks.ended) >= maxQueuedTasks {
				delete(e.tasks.ended, n)
			}
		}
	}
	e.tasks.ended[name] = now
}

// taskKey is a task's key in the engine's bucket.
func taskKey(name string) []byte { return []byte("task/" + name) }

// loadTasks restores the tasks the bucket holds (at start).
func (e *Engine) loadTasks() error {
	e.tasks.queues = map[string]*taskQueue{}
	e.tasks.ended = map[string]time.Time{}
	e.tasks.idle = sync.NewCond(&e.tasks.mu)
	if e.bucket == nil {
		return nil
	}
	var loaded []*Task
	err := e.bucket.View(func(tx service.Tx) error {
		return tx.ForEach([]byte("task/"), func(k, v []byte) error {
			var t Task
			if err := json.Unmarshal(v, &t); err != nil || !strings.Contains(t.Name, "/tasks/") {
				return fmt.Errorf("functions: stored task %s is damaged: %v", k, err)
			}
			loaded = append(loaded, &t)
			return nil
		})
	})
	if err != nil {
		return err
	}
	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	for _, t := range loaded {
		e.queueLocked(t.queue(), t.Function).add(t)
	}
	return nil
}

// queueLocked returns the named queue, creating it (and its pump).
func (e *Engine) queueLocked(name, function string) *taskQueue {
	q := e.tasks.queues[name]
	if q != nil {
		return q
	}
	q = &taskQueue{name: name, function: function, tasks: map[string]*Task{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	e.tasks.queues[name] = q
	e.tasks.wg.Add(1)
	go e.pump(q)
	return q
}

func (q *taskQueue) add(t *Task) {
	q.tasks[t.Name] = t
	heap.Push(&q.waiting, t)
	q.poke()
}

func (q *taskQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// taskEndpoint is the task function a queue name designates.
func (e *Engine) taskEndpoint(project, location, queue string) (Endpoint, error) {
	ep, err := e.findTaskEndpoint(project, location, queue)
	if err != nil && e.awaitFirstLoad() {
		// The queue's function may be one the load is bringing.
		return e.findTaskEndpoint(project, location, queue)
	}
	return ep, err
}

func (e *Engine) findTaskEndpoint(project, location, queue string) (Endpoint, error) {
	if project != e.project {
		return Endpoint{}, ErrQueueNotFound
	}
	ep, ok := e.Endpoint(queue)
	if !ok || ep.Task == nil || !slices.Contains(ep.Regions, location) {
		return Endpoint{}, ErrQueueNotFound
	}
	return ep, nil
}

// EnqueueTask adds a task to the queue of the task function named queue,
// deployed in location, as Cloud Tasks' CreateTask: durable before it
// returns, dispatched at its schedule time.
func (e *Engine) EnqueueTask(project, location, queue string, req TaskRequest) (*Task, error) {
	ep, err := e.taskEndpoint(project, location, queue)
	if err != nil {
		return nil, err
	}
	qname := fmt.Sprintf("projects/%s/locations/%s/queues/%s", project, location, queue)
	now := e.now()
	t := &Task{Function: ep.ID, CreateTime: now, ScheduleTime: now, Deadline: DefaultTaskDispatchDeadline}
	if req.HTTPRequest == nil {
		return nil, &InvalidTaskError{"Task.httpRequest must be set: a task of a function's queue is an HTTP task."}
	}
	if m := req.HTTPRequest.HTTPMethod; m != "" && m != "POST" {
		return nil, &InvalidTaskError{fmt.Sprintf("Task.httpRequest.httpMethod %q: a task function takes POST.", m)}
	}
	if len(req.HTTPRequest.Body) > MaxTaskBody {
		return nil, &InvalidTaskError{fmt.Sprintf("Task size too large: the body is %d bytes, the limit is %d.", len(req.HTTPRequest.Body), MaxTaskBody)}
	}
	t.Body = req.HTTPRequest.Body
	t.Headers = map[string]string{}
	for k, v := range req.HTTPRequest.Headers {
		t.Headers[k] = v
	}
	if _, ok := headerValue(t.Headers, "Content-Type"); !ok {
		t.Headers["Content-Type"] = "application/json"
	}
	id := ""
	if req.Name != "" {
		prefix := qname + "/tasks/"
		if !strings.HasPrefix(strings.TrimPrefix(req.Name, "/"), prefix) {
			return nil, &InvalidTaskError{fmt.Sprintf("Task name %q is not a task of the queue %s.", req.Name, qname)}
		}
		id = strings.TrimPrefix(strings.TrimPrefix(req.Name, "/"), prefix)
		if !validTaskID(id) {
			return nil, &InvalidTaskError{"Task id can contain only letters ([A-Za-z]), numbers ([0-9]), hyphens (-), or underscores (_). The maximum length is 500 characters."}
		}
	} else {
		id = strconv.FormatUint(e.randUint63(), 10)
	}
	t.Name = qname + "/tasks/" + id
	if req.ScheduleTime != "" {
		at, err := time.Parse(time.RFC3339Nano, req.ScheduleTime)
		if err != nil {
			return nil, &InvalidTaskError{fmt.Sprintf("Invalid value for Task.scheduleTime %q: want an RFC 3339 time.", req.ScheduleTime)}
		}
		if at.After(now) {
			t.ScheduleTime = at
		}
	}
	if req.DispatchDeadline != "" {
		d, err := time.ParseDuration(req.DispatchDeadline)
		if err != nil || !strings.HasSuffix(req.DispatchDeadline, "s") {
			return nil, &InvalidTaskError{fmt.Sprintf("Invalid value for Task.dispatchDeadline %q: want a duration like \"300s\".", req.DispatchDeadline)}
		}
		if d < 15*time.Second || d > 30*time.Minute {
			return nil, &InvalidTaskError{"Task.dispatchDeadline must be between 15 seconds and 30 minutes."}
		}
		t.Deadline = d
	}

	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	q := e.tasks.queues[qname]
	if q != nil && q.tasks[t.Name] != nil {
		return nil, ErrTaskExists
	}
	if at, ok := e.tasks.ended[t.Name]; ok && now.Sub(at) < tombstoneTTL {
		return nil, ErrTaskExists
	}
	if q != nil && len(q.tasks) >= maxQueuedTasks {
		return nil, &InvalidTaskError{fmt.Sprintf("The queue %s holds %d tasks, the most pyric keeps; let some run first.", qname, maxQueuedTasks)}
	}
	if err := e.saveTask(t); err != nil {
		return nil, err
	}
	q = e.queueLocked(qname, ep.ID)
	q.add(t)
	e.events.Emit(event.Event{Kind: event.KindMutation, Service: Name, Method: "tasks.create", Path: t.Name,
		Origin: event.OriginAdmin, Identity: event.Identity{Lens: event.LensAdmin, Admin: true},
		Mutation: &event.Mutation{Op: "task_create", Project: project, Current: t.Resource()}})
	cp := *t
	return &cp, nil
}

// headerValue finds a header in a task's header map, whatever its case.
func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// randUint63 is a task id when the client names none (Cloud Tasks
// picks a decimal one too): 63 bits of the engine's random source.
func (e *Engine) randUint63() uint64 {
	var b [8]byte
	_, _ = io.ReadFull(e.rand, b[:])
	return binary.BigEndian.Uint64(b[:]) & math.MaxInt64
}

// DeleteTask removes a task that has not yet succeeded, as Cloud Tasks'
// DeleteTask. A running attempt finishes but is not retried.
func (e *Engine) DeleteTask(project, location, queue, id string) error {
	if _, err := e.taskEndpoint(project, location, queue); err != nil {
		return err
	}
	name := fmt.Sprintf("projects/%s/locations/%s/queues/%s/tasks/%s", project, location, queue, id)
	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	q := e.tasks.queues[name[:strings.LastIndex(name, "/tasks/")]]
	if q == nil || q.tasks[name] == nil {
		return ErrTaskNotFound
	}
	if err := e.dropTask(name); err != nil {
		return err
	}
	t := q.tasks[name]
	delete(q.tasks, name)
	e.endedLocked(name)
	for i, w := range q.waiting {
		if w == t {
			heap.Remove(&q.waiting, i)
			break
		}
	}
	e.tasks.idle.Broadcast()
	e.events.Emit(event.Event{Kind: event.KindMutation, Service: Name, Method: "tasks.delete", Path: name,
		Origin: event.OriginAdmin, Identity: event.Identity{Lens: event.LensAdmin, Admin: true},
		Mutation: &event.Mutation{Op: "task_delete", Project: project, Previous: t.Resource()}})
	return nil
}

// Tasks lists the tasks waiting or running in every queue, by name.
func (e *Engine) Tasks() []Task {
	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	var out []Task
	for _, q := range e.tasks.queues {
		for _, t := range q.tasks {
			out = append(out, *t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TasksIdle waits until no task is waiting or running (for tests and
// tools), or ctx ends.
func (e *Engine) TasksIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		e.tasks.mu.Lock()
		e.tasks.idle.Broadcast()
		e.tasks.mu.Unlock()
	})
	defer stop()
	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	for {
		busy := false
		for _, q := range e.tasks.queues {
			if len(q.tasks) > 0 {
				busy = true
			}
		}
		if !busy {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		e.tasks.idle.Wait()
	}
}

func (e *Engine) saveTask(t *Task) error {
	if e.bucket == nil {
		return nil
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return e.bucket.Update(func(tx service.Tx) error { return tx.Put(taskKey(t.Name), b) })
}

func (e *Engine) dropTask(name string) error {
	if e.bucket == nil {
		return nil
	}
	return e.bucket.Update(func(tx service.Tx) error { return tx.Delete(taskKey(name)) })
}

// resetTasks drops every task (the sandbox cleared the bucket).
func (e *Engine) resetTasks() {
	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	for _, q := range e.tasks.queues {
		q.tasks = map[string]*Task{}
		q.waiting = nil
	}
	e.tasks.ended = map[string]time.Time{}
	e.tasks.idle.Broadcast()
}

// closeTasks stops the pumps and waits for running attempts.
func (e *Engine) closeTasks() {
	e.tasks.mu.Lock()
	for _, q := range e.tasks.queues {
		q.stopOnce.Do(func() { close(q.stop) })
	}
	e.tasks.mu.Unlock()
	e.tasks.wg.Wait()
}

// pump dispatches a queue's due tasks within its rate limits.
func (e *Engine) pump(q *taskQueue) {
	defer e.tasks.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := e.dispatchDue(q)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-q.stop:
			return
		case <-e.done:
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}

// dispatchDue starts every due task the queue's limits allow and
// returns how long to wait before looking again.
func (e *Engine) dispatchDue(q *taskQueue) time.Duration {
	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	ep, loaded := e.Endpoint(q.function)
	if !loaded || ep.Task == nil {
		// Not loaded yet (a task restored before its codebase), or
		// the function went away in a reload: look again later.
		return time.Second
	}
	if q.limiter == nil || q.config != ep.Task {
		p := policyOf(ep.Task)
		if q.limiter == nil || p.perSecond != q.policy.perSecond {
			q.limiter = rate.NewLimiter(rate.Limit(p.perSecond), max(1, int(math.Ceil(p.perSecond))))
		}
		q.config, q.policy = ep.Task, p
	}
	p := q.policy
	now := e.now()
	for q.waiting.Len() > 0 && q.running < p.maxConcurrent {
		t := q.waiting[0]
		if d := t.ScheduleTime.Sub(now); d > 0 {
			return d
		}
		r := q.limiter.Reserve()
		if d := r.Delay(); d > 0 {
			r.Cancel()
			return d
		}
		heap.Pop(&q.waiting)
		q.running++
		e.tasks.wg.Add(1)
		go e.attempt(q, t, p)
	}
	return time.Hour
}

// attempt runs one dispatch of a task and settles it: done, retried
// later, or dropped once its attempts are spent.
func (e *Engine) attempt(q *taskQueue, t *Task, p queuePolicy) {
	defer e.tasks.wg.Done()
	e.tasks.mu.Lock()
	if t.DispatchCount == 0 {
		t.FirstAttempt = e.now()
	}
	t.DispatchCount++
	header := http.Header{}
	for k, v := range t.Headers {
		header.Set(k, v)
	}
	queueID := q.name[strings.LastIndexByte(q.name, '/')+1:]
	header.Set("X-CloudTasks-QueueName", queueID)
	header.Set("X-CloudTasks-TaskName", t.ID())
	header.Set("X-CloudTasks-TaskRetryCount", strconv.Itoa(t.DispatchCount-1))
	header.Set("X-CloudTasks-TaskExecutionCount", strconv.Itoa(t.ResponseCount))
	header.Set("X-CloudTasks-TaskETA", strconv.FormatFloat(float64(t.ScheduleTime.UnixMicro())/1e6, 'f', 6, 64))
	if t.LastStatus != 0 {
		header.Set("X-CloudTasks-TaskPreviousResponse", strconv.Itoa(t.LastStatus))
		header.Set("X-CloudTasks-TaskRetryReason", http.StatusText(t.LastStatus))
	}
	body, deadline, function := t.Body, t.Deadline, t.Function
	e.tasks.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	resp, err := e.CallHTTP(ctx, function, http.MethodPost, "/", header, body)
	cancel()
	status := 0
	if err == nil {
		status = resp.StatusCode
		resp.Body.Close()
	}

	e.tasks.mu.Lock()
	defer e.tasks.mu.Unlock()
	q.running--
	defer q.poke()
	defer e.tasks.idle.Broadcast()
	if q.tasks[t.Name] != t {
		return // deleted while it ran
	}
	select {
	case <-e.done:
		// Closing: the attempt was cut short; the task stays as stored
		// and runs again at the next start.
		return
	default:
	}
	if err != nil && errors.Is(err, ErrNotFound) {
		// The function is gone (a reload in progress): not an attempt.
		t.DispatchCount--
		t.ScheduleTime = e.now().Add(time.Second)
		heap.Push(&q.waiting, t)
		return
	}
	if status >= 200 && status < 300 {
		delete(q.tasks, t.Name)
		e.endedLocked(t.Name)
		if err := e.dropTask(t.Name); err != nil {
			e.printf("functions: task %s ran, but removing it from the data dir failed: %v\n", t.Name, err)
		}
		return
	}
	if status != 0 && status < 500 {
		t.ResponseCount++
	}
	if status != 0 {
		t.LastStatus = status
	} else {
		t.LastStatus = http.StatusGatewayTimeout
	}
	now := e.now()
	if p.exhausted(t, now) {
		e.printf("functions: task %s of %s dropped after %d attempts (last answer %d)\n", t.ID(), t.Function, t.DispatchCount, t.LastStatus)
		delete(q.tasks, t.Name)
		e.endedLocked(t.Name)
		if err := e.dropTask(t.Name); err != nil {
			e.printf("functions: removing the dropped task %s from the data dir failed: %v\n", t.Name, err)
		}
		return
	}
	t.ScheduleTime = now.Add(p.backoff(t.DispatchCount))
	if err := e.saveTask(t); err != nil {
		e.printf("functions: saving the attempt count of task %s failed: %v\n", t.Name, err)
	}
	heap.Push(&q.waiting, t)
}
