package messaging

import (
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
)

// Every event the engine emits is built here, so the event schema can
// change in one place. A send is a request event (verdict bypassed for
// admin callers, allow for others: FCM has no rules; error with the FCM
// code when it was rejected) and, when it was delivered, a
// "message_send" mutation listing where it went. Token and topic changes
// and clearing the inbox are mutations.

// maxEventTokens bounds the token list an event carries.
const maxEventTokens = 100

func (e *Engine) emit(id identity.Identity, ev event.Event) {
	ev.Service = ServiceName
	ev.Who(id)
	e.env.Events.Emit(ev)
}

func firstTokens(tokens []string) []string {
	if len(tokens) > maxEventTokens {
		return tokens[:maxEventTokens]
	}
	return tokens
}

func (e *Engine) emitSend(id identity.Identity, project string, req *SendRequest, name string, tokens []string, err error, took time.Duration) {
	verdict := event.Allow
	if id.IsAdmin() {
		verdict = event.Bypassed
	}
	ev := event.Event{
		Kind: event.KindRequest, Method: "messages.send", Path: "projects/" + project, Origin: event.OriginAdmin,
		Request: &event.Request{Verdict: verdict, DurationMs: float64(took.Microseconds()) / 1000, Seen: &event.Seen{Data: req}},
	}
	if err != nil {
		ev.Request.Verdict = event.Error
		f := &event.Failure{Code: "INTERNAL", Message: err.Error()}
		if me, ok := err.(*Error); ok {
			// The FCM error code is the most specific name production
			// gives (UNREGISTERED, SENDER_ID_MISMATCH, ...).
			f.Code = me.Status()
			if me.FcmCode != "" {
				f.Code = me.FcmCode
			}
			for _, v := range me.Violations {
				f.Message += "; " + v.Field + ": " + v.Description
			}
		}
		ev.Err = f
		e.emit(id, ev)
		return
	}
	ev.Path = name
	e.emit(id, ev)
	if req.ValidateOnly {
		return
	}
	target := map[string]string{}
	if kind, value := req.Message.target(); kind != "" {
		target[kind] = value
	}
	e.emit(id, event.Event{
		Kind: event.KindMutation, Method: "message_send", Path: name,
		Mutation: &event.Mutation{Op: "message_send", Project: project, Current: map[string]any{
			"name": name, "target": target, "deliveredCount": len(tokens), "deliveredTo": firstTokens(tokens),
		}},
	})
}

func (e *Engine) emitToken(id identity.Identity, op string, t *TokenInfo) {
	rec := map[string]any{"token": t.Token, "platform": t.Platform, "deleted": t.Deleted}
	m := &event.Mutation{Op: op, Project: t.Project, Current: rec}
	if op == "token_delete" {
		m.Previous, m.Current = map[string]any{"token": t.Token, "platform": t.Platform}, rec
	}
	e.emit(id, event.Event{Kind: event.KindMutation, Method: op, Path: "projects/" + t.Project + "/tokens/" + t.Token, Mutation: m})
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
	e.emit(id, event.Event{
		Kind: event.KindMutation, Method: "topic_" + op, Path: "topics/" + topic,
		Mutation: &event.Mutation{Op: "topic_" + op, Current: map[string]any{
			"topic": topic, "successCount": ok, "failureCount": failed, "tokens": firstTokens(tokens),
		}},
	})
}

func (e *Engine) emitClear(id identity.Identity, project string, n int) {
	e.emit(id, event.Event{
		Kind: event.KindMutation, Method: "messages_clear", Path: "projects/" + project,
		Mutation: &event.Mutation{Op: "messages_clear", Project: project, Previous: map[string]any{"messageCount": n}},
	})
}
