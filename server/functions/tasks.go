package functionsserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pyric/pyric/errcode"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/server/httpjson"
)

// TaskEngine is what the task queue port needs of the functions engine.
type TaskEngine interface {
	EnqueueTask(project, location, queue string, req functions.TaskRequest) (*functions.Task, error)
	DeleteTask(project, location, queue, id string) error
	Tasks() []functions.Task
}

// TasksHandler serves the Cloud Tasks queues of task functions on the
// port CLOUD_TASKS_EMULATOR_HOST names, at the paths firebase-admin's
// taskQueue().enqueue()/delete() use in emulator mode
// (/projects/P/locations/L/queues/Q/tasks[/ID]) and at production's
// (/v2/projects/…):
//
//	POST   …/tasks        {"task": Task}  → 200 the task
//	GET    …/tasks                        → 200 {"tasks": [...]}
//	GET    …/tasks/ID                     → 200 the task
//	DELETE …/tasks/ID                     → 200 {}
//
// Errors are Google's JSON envelope with Cloud Tasks' codes.
type TasksHandler struct{ eng TaskEngine }

// NewTasksHandler returns the task queue adapter over eng.
func NewTasksHandler(eng TaskEngine) *TasksHandler { return &TasksHandler{eng: eng} }

// maxTaskRequest bounds a create request: a task's 1 MB, base64, and
// its envelope.
const maxTaskRequest = functions.MaxTaskBody*4/3 + 64<<10

func (h *TasksHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v2")
	if r.Method == http.MethodGet && path == "/" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Ok\n")
		return
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	// projects P locations L queues Q tasks [ID]
	if len(parts) < 7 || len(parts) > 8 || parts[0] != "projects" || parts[2] != "locations" || parts[4] != "queues" || parts[6] != "tasks" {
		api.Fail(w, errcode.NotFound, fmt.Sprintf("%s is not a task queue's URL: want /projects/PROJECT/locations/LOCATION/queues/QUEUE/tasks[/ID]", r.URL.Path))
		return
	}
	project, location, queue := parts[1], parts[3], parts[5]
	if len(parts) == 7 {
		switch r.Method {
		case http.MethodPost:
			h.create(w, r, project, location, queue)
		case http.MethodGet:
			h.list(w, project, location, queue, "")
		default:
			api.Error(w, httpjson.Status{Code: http.StatusMethodNotAllowed, Status: "METHOD_NOT_ALLOWED", Message: "use POST to create a task, GET to list them"})
		}
		return
	}
	id := parts[7]
	switch r.Method {
	case http.MethodDelete:
		if err := h.eng.DeleteTask(project, location, queue, id); err != nil {
			taskError(w, err)
			return
		}
		api.JSON(w, http.StatusOK, map[string]any{})
	case http.MethodGet:
		h.list(w, project, location, queue, id)
	default:
		api.Error(w, httpjson.Status{Code: http.StatusMethodNotAllowed, Status: "METHOD_NOT_ALLOWED", Message: "use GET or DELETE on a task"})
	}
}

func (h *TasksHandler) create(w http.ResponseWriter, r *http.Request, project, location, queue string) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTaskRequest))
	if err != nil {
		api.Fail(w, errcode.InvalidArgument, fmt.Sprintf("Task size too large: the request is over %d bytes.", maxTaskRequest))
		return
	}
	var req struct {
		Task *functions.TaskRequest `json:"task"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		api.Fail(w, errcode.InvalidArgument, fmt.Sprintf("Invalid JSON payload received. %v", err))
		return
	}
	if req.Task == nil {
		api.Fail(w, errcode.InvalidArgument, "CreateTaskRequest.task is required.")
		return
	}
	t, err := h.eng.EnqueueTask(project, location, queue, *req.Task)
	if err != nil {
		taskError(w, err)
		return
	}
	api.JSON(w, http.StatusOK, t.Resource())
}

func (h *TasksHandler) list(w http.ResponseWriter, project, location, queue, id string) {
	prefix := fmt.Sprintf("projects/%s/locations/%s/queues/%s/tasks/", project, location, queue)
	var out []any
	for _, t := range h.eng.Tasks() {
		if !strings.HasPrefix(t.Name, prefix) {
			continue
		}
		if id == "" {
			out = append(out, t.Resource())
		} else if t.ID() == id {
			api.JSON(w, http.StatusOK, t.Resource())
			return
		}
	}
	if id != "" {
		taskError(w, functions.ErrTaskNotFound)
		return
	}
	if out == nil {
		api.JSON(w, http.StatusOK, map[string]any{})
		return
	}
	api.JSON(w, http.StatusOK, map[string]any{"tasks": out})
}

// taskError answers an engine error with Cloud Tasks' code.
func taskError(w http.ResponseWriter, err error) {
	var invalid *functions.InvalidTaskError
	switch {
	case errors.Is(err, functions.ErrQueueNotFound), errors.Is(err, functions.ErrTaskNotFound):
		api.Fail(w, errcode.NotFound, err.Error())
	case errors.Is(err, functions.ErrTaskExists):
		api.Fail(w, errcode.AlreadyExists, err.Error())
	case errors.As(err, &invalid):
		api.Fail(w, errcode.InvalidArgument, err.Error())
	default:
		api.Fail(w, errcode.Unavailable, fmt.Sprintf("the task could not be stored: %v", err))
	}
}
