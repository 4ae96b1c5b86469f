package messaging

import (
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// Every event the engine emits is built here, so the event schema can
// change in one place.

// maxEventTokens bounds the token list an event carries.
const maxEventTokens = 100

func (e *Engine) emitSend(id identity.Identity, project string, req *SendRequest, name string, tokens []string, err error, took time.Duration) {
	ev := event.Event{
		Kind: event.KindOperation, Service: ServiceName, Method: "messages.send",
		Path: "projects/" + project, Auth: id, Origin: event.OriginAdmin,
		DurationMs: float64(took.Microseconds()) / 1000,
		Request:    &event.Request{Data: req},
		Result:     event.ResultAllow,
	}
	detail := map[string]any{"validateOnly": req.ValidateOnly}
	if req.Message != nil {
		if kind, value := req.Message.target(); kind != "" {
			detail["target"] = map[string]string{kind: value}
		}
	}
	if err != nil {
		ev.Result = event.ResultError
		me, _ := err.(*Error)
		ee := &event.Error{Message: err.Error()}
		if me != nil {
			ee.Code = me.Status()
			if me.FcmCode != "" {
				ee.Reasons = []string{me.FcmCode}
			}
			for _, v := range me.Violations {
				ee.Reasons = append(ee.Reasons, v.Field+": "+v.Description)
			}
		}
		ev.Error = ee
	} else {
		ev.Path = name
		if !req.ValidateOnly {
			detail["deliveredCount"] = len(tokens)
			shown := tokens
			if len(shown) > maxEventTokens {
				shown = shown[:maxEventTokens]
			}
			detail["deliveredTo"] = shown
		}
	}
	ev.Detail = detail
	e.env.Events.Emit(ev)
}

func (e *Engine) emitToken(id identity.Identity, op string, t *TokenInfo) {
	e.env.Events.Emit(event.Event{
		Kind: event.KindServiceMutation, Service: ServiceName, Op: op,
		Path: "projects/" + t.Project + "/tokens/" + t.Token, Auth: id,
		After: map[string]any{"platform": t.Platform, "deleted": t.Deleted},
	})
}

func (e *Engine) emitTopic(id identity.Identity, op, topic string, tokens []string, results []TopicResult) {
	ok, failed := 0, 0
	for _, r := range results {
		if r.Error == "" {
			ok++
		} else {
			failed++
		}
	}
	shown := tokens
	if len(shown) > maxEventTokens {
		shown = shown[:maxEventTokens]
	}
	e.env.Events.Emit(event.Event{
		Kind: event.KindServiceMutation, Service: ServiceName, Op: "topic_" + op,
		Path: "topics/" + topic, Auth: id,
		After: map[string]any{"successCount": ok, "failureCount": failed, "tokens": shown},
	})
}

func (e *Engine) emitClear(id identity.Identity, project string, n int) {
	e.env.Events.Emit(event.Event{
		Kind: event.KindServiceMutation, Service: ServiceName, Op: "messages_clear",
		Path: "projects/" + project, Auth: id,
		Before: map[string]any{"messageCount": n},
	})
}
