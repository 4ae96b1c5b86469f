package studio

import (
	"errors"
	"io"
	"net/http"
	"sort"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox"
)

// The Messaging page's endpoints, on the engine the send plane uses: the
// token registry with each token's topics, the topics they add up to,
// the accepted messages, one token's inbox, minting and deleting tokens,
// topic (un)subscription, and a send (validated exactly as
// messages:send). The Studio acts as admin: FCM has no rules.

// maxListed bounds the messages (and AI calls) one answer carries: the
// newest are kept.
const maxListed = 500

func (s *Studio) fcm(w http.ResponseWriter) (*messaging.Engine, bool) {
	e, ok := sandbox.Lookup[*messaging.Engine](s.sb)
	if !ok {
		fail(w, http.StatusNotFound, "Cloud Messaging is not running in this sandbox")
		return nil, false
	}
	return e, true
}

func studioAdmin() identity.Identity { return identity.AdminIdentity().Via(studioActor) }

// fcmError writes an engine error with production's status, its FCM
// error code and its field violations.
func fcmError(w http.ResponseWriter, err error) {
	var me *messaging.Error
	if errors.As(err, &me) {
		code := me.Status()
		if me.FcmCode != "" {
			code = me.FcmCode
		}
		var details any
		if len(me.Violations) > 0 {
			details = map[string]any{"fieldViolations": me.Violations}
		}
		writeJSON(w, me.HTTP(), apiError{Error: me.Msg, Code: code, Details: details})
		return
	}
	fail(w, http.StatusInternalServerError, err.Error())
}

// fcmState answers GET /api/messaging: the newest tokens, topics with
// their subscribers, and the newest accepted messages (at most maxListed
// tokens and messages; the counts say how many there are).
func (s *Studio) fcmState(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fcm(w)
	if !ok {
		return
	}
	p := e.DefaultProject()
	tokens := e.Tokens(p)
	topics := map[string][]string{}
	for _, t := range tokens {
		if t.Deleted {
			continue
		}
		for _, tp := range t.Topics {
			topics[tp] = append(topics[tp], t.Token)
		}
	}
	type topic struct {
		Topic  string   `json:"topic"`
		Count  int      `json:"count"`
		Tokens []string `json:"tokens"` // the first few subscribers
	}
	tl := []topic{}
	for name, ts := range topics {
		tl = append(tl, topic{name, len(ts), ts[:min(len(ts), 20)]})
	}
	sort.Slice(tl, func(i, j int) bool { return tl[i].Topic < tl[j].Topic })
	sort.SliceStable(tokens, func(i, j int) bool { return tokens[i].CreatedAt.After(tokens[j].CreatedAt) })
	msgs := e.Messages(p)
	total := len(msgs)
	if len(msgs) > maxListed {
		msgs = msgs[len(msgs)-maxListed:]
	}
	tokenCount := len(tokens)
	if len(tokens) > maxListed {
		tokens = tokens[:maxListed] // the newest
	}
	if tokens == nil {
		tokens = []*messaging.TokenInfo{}
	}
	if msgs == nil {
		msgs = []*messaging.Sent{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"project": p, "tokens": tokens, "tokenCount": tokenCount, "topics": tl, "messages": msgs, "messageCount": total})
}

// fcmMint mints a token: POST /api/messaging/tokens {"platform",
// "instance", "token"}.
func (s *Studio) fcmMint(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fcm(w)
	if !ok {
		return
	}
	var body struct {
		Platform string `json:"platform"`
		Instance string `json:"instance"`
		Token    string `json:"token"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if body.Platform == "" {
		body.Platform = string(messaging.PlatformWeb)
	}
	t, err := e.MintToken(studioAdmin(), e.DefaultProject(), messaging.MintRequest{Platform: messaging.Platform(body.Platform), Instance: body.Instance, Token: body.Token})
	if err != nil {
		fcmError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// fcmDeleteToken deletes a token (later sends to it are UNREGISTERED).
func (s *Studio) fcmDeleteToken(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fcm(w)
	if !ok {
		return
	}
	if err := e.DeleteToken(studioAdmin(), e.DefaultProject(), r.PathValue("token")); err != nil {
		fcmError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"token": r.PathValue("token"), "deleted": true})
}

// fcmInbox answers what one token's app received.
func (s *Studio) fcmInbox(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fcm(w)
	if !ok {
		return
	}
	in, err := e.Inbox(e.DefaultProject(), r.PathValue("token"))
	if err != nil {
		fcmError(w, err)
		return
	}
	total := len(in)
	if len(in) > maxListed {
		in = in[len(in)-maxListed:]
	}
	writeJSON(w, http.StatusOK, map[string]any{"token": r.PathValue("token"), "deliveries": in, "count": total})
}

// fcmTopic subscribes or unsubscribes tokens: POST /api/messaging/topics
// {"topic", "tokens": [...], "unsubscribe": bool}; each token's outcome
// comes back in order.
func (s *Studio) fcmTopic(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fcm(w)
	if !ok {
		return
	}
	var body struct {
		Topic       string   `json:"topic"`
		Tokens      []string `json:"tokens"`
		Unsubscribe bool     `json:"unsubscribe"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	op := e.Subscribe
	if body.Unsubscribe {
		op = e.Unsubscribe
	}
	res, err := op(studioAdmin(), body.Topic, body.Tokens)
	if err != nil {
		fcmError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": res})
}

// fcmSend sends a message: POST /api/messaging/send with a messages:send
// body ({"message": {...}, "validateOnly": bool}); it is validated and
// delivered exactly as through the FCM endpoint.
func (s *Studio) fcmSend(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fcm(w)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		fail(w, http.StatusRequestEntityTooLarge, "request body larger than 1 MiB")
		return
	}
	req, err := messaging.DecodeSendRequest(body)
	if err != nil {
		fcmError(w, err)
		return
	}
	name, err := e.Send(studioAdmin(), e.DefaultProject(), req)
	if err != nil {
		fcmError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name})
}

// fcmClear clears the accepted messages and every inbox.
func (s *Studio) fcmClear(w http.ResponseWriter, r *http.Request) {
	e, ok := s.fcm(w)
	if !ok {
		return
	}
	if err := e.ClearMessages(studioAdmin(), e.DefaultProject()); err != nil {
		fcmError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"cleared": true})
}
