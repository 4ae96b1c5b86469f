package pubsub

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"
)

// pusher delivers a push subscription's messages to its endpoint: a
// stream with PushConcurrency outstanding messages, one request each; a
// 2xx (or 102) acknowledges, anything else nacks with the push backoff.
// Each push subscription has its own, so a slow endpoint stalls nobody
// else.
type pusher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startPush starts s's pusher when it is a push subscription; called
// with the lock held.
func (e *Engine) startPush(s *subState) {
	if s.cfg.Push == nil || s.push != nil || s.deleted || s.cfg.Detached || e.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &pusher{cancel: cancel, done: make(chan struct{})}
	s.push = p
	st := &Stream{e: e, sub: s.cfg.Name, lease: time.Duration(s.cfg.AckDeadlineSeconds) * time.Second, maxMsgs: e.opts.PushConcurrency}
	slots := make(chan struct{}, e.opts.PushConcurrency)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(p.done)
		defer st.Close()
		for {
			got, err := st.Receive(ctx)
			if err != nil {
				return
			}
			for _, r := range got {
				// In-flight requests are bounded too: a lease that
				// expires under a slow request frees a stream slot, not
				// a request slot.
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
				e.wg.Add(1)
				go func() {
					defer e.wg.Done()
					defer func() { <-slots }()
					e.pushOne(ctx, s.cfg.Name, r)
				}()
			}
		}
	}()
}

// stopPush stops s's pusher; called with the lock held (it does not
// wait: in-flight pushes end with their context).
func (e *Engine) stopPush(s *subState) {
	if s.push != nil {
		s.push.cancel()
		s.push = nil
	}
}

// pushEnvelope is production's wrapped push body; the message carries
// both spellings of the id and publish time, as production does.
type pushEnvelope struct {
	Message         pushMessage `json:"message"`
	Subscription    string      `json:"subscription"`
	DeliveryAttempt int         `json:"deliveryAttempt,omitempty"`
}

type pushMessage struct {
	Attributes   map[string]string `json:"attributes,omitempty"`
	Data         string            `json:"data,omitempty"`
	MessageID    string            `json:"messageId"`
	MessageID2   string            `json:"message_id"`
	PublishTime  string            `json:"publishTime"`
	PublishTime2 string            `json:"publish_time"`
	OrderingKey  string            `json:"orderingKey,omitempty"`
}

func (e *Engine) pushOne(ctx context.Context, sub string, r Received) {
	e.mu.Lock()
	s := e.subs[sub]
	if s == nil || s.cfg.Push == nil {
		e.mu.Unlock()
		return
	}
	cfg := *s.cfg.Push
	e.mu.Unlock()
	m := r.Message
	pt := m.PublishTime.UTC().Format(time.RFC3339Nano)
	var body []byte
	hdr := http.Header{}
	if cfg.NoWrapper {
		body = m.Data
		for k, v := range m.Attributes {
			hdr.Set(k, v)
		}
		if cfg.WriteMetadata {
			hdr.Set("x-goog-pubsub-message-id", m.ID)
			hdr.Set("x-goog-pubsub-publish-time", pt)
			hdr.Set("x-goog-pubsub-subscription-name", sub)
			if m.OrderingKey != "" {
				hdr.Set("x-goog-pubsub-ordering-key", m.OrderingKey)
			}
		}
	} else {
		env := pushEnvelope{Subscription: sub, DeliveryAttempt: r.DeliveryAttempt, Message: pushMessage{
			Attributes: m.Attributes, MessageID: m.ID, MessageID2: m.ID, PublishTime: pt, PublishTime2: pt, OrderingKey: m.OrderingKey}}
		if len(m.Data) > 0 {
			env.Message.Data = base64.StdEncoding.EncodeToString(m.Data)
		}
		body, _ = json.Marshal(env)
		hdr.Set("Content-Type", "application/json")
	}
	ok := false
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.Endpoint, bytes.NewReader(body))
	if err == nil {
		req.Header = hdr
		resp, err := e.opts.PushClient.Do(req)
		if err == nil {
			resp.Body.Close()
			ok = resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusProcessing
		}
	}
	if ctx.Err() != nil {
		return
	}
	if ok {
		_ = e.Acknowledge(sub, []string{r.AckID})
	} else {
		_ = e.ModifyAckDeadline(sub, []string{r.AckID}, 0)
	}
}
