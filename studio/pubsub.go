package studio

import (
	"errors"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox"
	"google.golang.org/grpc/codes"
)

// The Pub/Sub page's endpoints, on the pubsub engine: every topic with
// its subscriptions and their backlog (unacknowledged messages, how many
// are leased, the oldest one's age), publishing a message, and a
// subscription's unacknowledged messages read without leasing or acking
// them (pubsub.Engine.Peek), so looking never changes what the app
// receives.

// peekDefault and peekMax bound the messages one peek returns.
const (
	peekDefault = 100
	peekMax     = 1000
)

func (s *Studio) psEngine(w http.ResponseWriter) (*pubsub.Engine, bool) {
	e, ok := sandbox.Lookup[*pubsub.Engine](s.sb)
	if !ok {
		fail(w, http.StatusNotFound, "Pub/Sub is not running in this sandbox")
		return nil, false
	}
	return e, true
}

// psSubscription is a subscription with its backlog figures and the age
// of its oldest unacknowledged message at the sandbox's clock.
type psSubscription struct {
	pubsub.SubscriptionView
	OldestUnackedAgeSeconds float64 `json:"oldestUnackedAgeSeconds,omitempty"`
}

type psTopic struct {
	Topic         *pubsub.Topic    `json:"topic"`
	Subscriptions []psSubscription `json:"subscriptions"`
}

// psOverview answers GET /api/pubsub: the topics (by name, subscriptions
// whose topic was deleted under the topic "") with their subscriptions.
func (s *Studio) psOverview(w http.ResponseWriter, r *http.Request) {
	e, ok := s.psEngine(w)
	if !ok {
		return
	}
	now := s.sb.Now()
	topics := []psTopic{}
	for _, t := range e.Overview() {
		pt := psTopic{Topic: t.Topic, Subscriptions: []psSubscription{}}
		for _, sv := range t.Subscriptions {
			ps := psSubscription{SubscriptionView: sv}
			if at := sv.Stats.OldestAt; !at.IsZero() {
				ps.OldestUnackedAgeSeconds = max(0, now.Sub(at).Seconds())
			}
			pt.Subscriptions = append(pt.Subscriptions, ps)
		}
		topics = append(topics, pt)
	}
	writeJSON(w, http.StatusOK, map[string]any{"project": s.sb.Project(), "now": now, "topics": topics})
}

// psPublishReq is the body of POST /api/pubsub/publish: the message's
// data as text (or base64 in dataBase64), its attributes and ordering key.
type psPublishReq struct {
	Topic       string            `json:"topic"`
	Data        string            `json:"data"`
	DataBase64  []byte            `json:"dataBase64"`
	Attributes  map[string]string `json:"attributes"`
	OrderingKey string            `json:"orderingKey"`
}

// psPublish answers POST /api/pubsub/publish with the message's id.
func (s *Studio) psPublish(w http.ResponseWriter, r *http.Request) {
	e, ok := s.psEngine(w)
	if !ok {
		return
	}
	var req psPublishReq
	if !readJSON(w, r, &req) {
		return
	}
	if req.Topic == "" {
		fail(w, http.StatusBadRequest, "topic is required (projects/P/topics/T)")
		return
	}
	data := []byte(req.Data)
	if req.DataBase64 != nil {
		if req.Data != "" {
			fail(w, http.StatusBadRequest, "give data or dataBase64, not both")
			return
		}
		data = req.DataBase64
	}
	ids, err := e.Publish(req.Topic, []*pubsub.Message{{Data: data, Attributes: req.Attributes, OrderingKey: req.OrderingKey}})
	if err != nil {
		psFail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"messageIds": ids})
}

// psMessage is a message as the page shows it: its data as text when it
// is UTF-8, and always as base64.
type psMessage struct {
	ID          string            `json:"id"`
	Text        *string           `json:"text,omitempty"`
	Data        []byte            `json:"dataBase64"`
	Size        int               `json:"size"`
	Attributes  map[string]string `json:"attributes,omitempty"`
	OrderingKey string            `json:"orderingKey,omitempty"`
	PublishTime time.Time         `json:"publishTime"`
}

// psMessages answers GET /api/pubsub/messages?subscription=S&max=N: the
// subscription's first N unacknowledged messages, oldest first, peeked:
// none is leased or acknowledged, and the backlog is unchanged.
func (s *Studio) psMessages(w http.ResponseWriter, r *http.Request) {
	e, ok := s.psEngine(w)
	if !ok {
		return
	}
	sub := r.URL.Query().Get("subscription")
	if sub == "" {
		fail(w, http.StatusBadRequest, "subscription is required (projects/P/subscriptions/S)")
		return
	}
	n := peekDefault
	if v := r.URL.Query().Get("max"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 1 || m > peekMax {
			fail(w, http.StatusBadRequest, "max must be an integer from 1 to "+strconv.Itoa(peekMax)+", not "+quote(v))
			return
		}
		n = m
	}
	msgs, err := e.Peek(sub, n)
	if err != nil {
		psFail(w, err)
		return
	}
	stats, err := e.Stats(sub)
	if err != nil {
		psFail(w, err)
		return
	}
	out := make([]psMessage, len(msgs))
	for i, m := range msgs {
		out[i] = psMessage{ID: m.ID, Data: m.Data, Size: len(m.Data), Attributes: m.Attributes, OrderingKey: m.OrderingKey, PublishTime: m.PublishTime}
		if utf8.Valid(m.Data) {
			t := string(m.Data)
			out[i].Text = &t
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscription": sub, "stats": stats, "messages": out})
}

// psFail answers with the engine's error: its message (the official
// emulator's words) and the HTTP status of its gRPC code.
func psFail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch pubsub.Code(err) {
	case codes.InvalidArgument:
		status = http.StatusBadRequest
	case codes.NotFound:
		status = http.StatusNotFound
	case codes.AlreadyExists:
		status = http.StatusConflict
	case codes.FailedPrecondition:
		status = http.StatusPreconditionFailed
	case codes.ResourceExhausted:
		status = http.StatusTooManyRequests
	case codes.Unavailable:
		status = http.StatusServiceUnavailable
	}
	var pe *pubsub.Error
	if errors.As(err, &pe) {
		writeJSON(w, status, apiError{Error: pe.Msg, Code: pubsub.Code(err).String()})
		return
	}
	fail(w, status, err.Error())
}
