package pubsub

import (
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// Every event the engine emits is built here. Pub/Sub has no rules and
// its callers are service accounts, so every event is the admin's. Data
// events are mutations whose Current is one of the typed records below;
// Op names the kind:
//
//	publish      PublishEvent      messages accepted on a topic
//	deliver      DeliverEvent      messages leased to a pull, stream or push
//	ack / nack   AckEvent          deliveries acknowledged or refused
//	expire       AckEvent          a lease ran out (the message goes back)
//	dead_letter  DeadLetterEvent   a message left for its dead-letter topic
//	retention_expire AckEvent      messages dropped past the retention
//
// and topic_/subscription_/snapshot_ create, update, delete (and detach,
// seek) carry the configuration before and after.
const (
	OpPublish    = "publish"
	OpDeliver    = "deliver"
	OpAck        = "ack"
	OpNack       = "nack"
	OpExpire     = "expire"
	OpDeadLetter = "dead_letter"
	OpRetention  = "retention_expire"
)

// maxEventIDs bounds the message ids an event lists.
const maxEventIDs = 100

// PublishEvent is the record of a publish.
type PublishEvent struct {
	Topic string   `json:"topic"`
	IDs   []string `json:"messageIds"`
	Count int      `json:"count"`
	Bytes int      `json:"bytes"`
	// Copies is how many subscription and snapshot queues received them.
	Copies int `json:"copies"`
	// DeadLetterOf names the subscription a dead-lettered message came
	// from.
	DeadLetterOf string `json:"deadLetterOf,omitempty"`
	// Messages are the messages as stored (ids and publish time
	// assigned), for the consumers that act on them (the Cloud
	// Functions triggers); they stay out of the event's JSON, which
	// lists their ids.
	Messages []*Message `json:"-"`
}

// heldPublish is a PublishEvent as a durable outbox keeps it
// (OutboxForm): its JSON with the messages.
type heldPublish struct {
	PublishEvent
	Messages []*Message `json:"messages"`
}

// OutboxForm keeps the messages, which the event's JSON leaves out, when
// the event is held for the Cloud Functions' triggers
// (event.OutboxForm); PublishEventOf reads it back.
func (p *PublishEvent) OutboxForm() any { return heldPublish{PublishEvent: *p, Messages: p.Messages} }

// PublishEventOf is the PublishEvent a publish event's Mutation.Current
// holds: the *PublishEvent itself, or, for an event read back from an
// outbox, its OutboxForm decoded as JSON. ok is false for anything else.
func PublishEventOf(v any) (_ *PublishEvent, ok bool) {
	switch v := v.(type) {
	case *PublishEvent:
		return v, v != nil
	case map[string]any:
		var h heldPublish
		if err := event.DecodeHeld(v, &h); err != nil {
			return nil, false
		}
		h.PublishEvent.Messages = h.Messages
		return &h.PublishEvent, true
	}
	return nil, false
}

// HeapSize is the memory the record holds, messages included, so the
// event history's byte bound counts them (event.HeapSize).
func (p *PublishEvent) HeapSize() int {
	n := 96 + 16*len(p.IDs) + 8*len(p.Messages)
	for _, id := range p.IDs {
		n += len(id)
	}
	for _, m := range p.Messages {
		n += 96 + m.size() + 48*len(m.Attributes)
	}
	return n
}

// DeliverEvent is the record of a delivery.
type DeliverEvent struct {
	Subscription string   `json:"subscription"`
	Via          string   `json:"via"` // pull, streamingPull, push
	IDs          []string `json:"messageIds"`
	Count        int      `json:"count"`
	// Attempts are the delivery attempts of the listed messages.
	Attempts []int `json:"attempts,omitempty"`
}

// AckEvent is the record of acks, nacks and expiries.
type AckEvent struct {
	Subscription string   `json:"subscription"`
	IDs          []string `json:"messageIds"`
	Count        int      `json:"count"`
}

// DeadLetterEvent is the record of a dead-lettering.
type DeadLetterEvent struct {
	Subscription    string `json:"subscription"`
	DeadLetterTopic string `json:"deadLetterTopic"`
	MessageID       string `json:"messageId"`
	DeliveryAttempt int    `json:"deliveryAttempts"`
}

func (e *Engine) emit(ev event.Event) {
	ev.Service = ServiceName
	ev.Who(identity.AdminIdentity())
	e.env.Events.Emit(ev)
}

func (e *Engine) emitData(op, path string, project string, rec any) {
	e.emit(event.Event{Kind: event.KindMutation, Method: op, Path: path, Origin: event.OriginAdmin,
		Mutation: &event.Mutation{Op: op, Project: project, Current: rec}})
}

func (e *Engine) emitConfig(op, name string, prev, cur any) {
	m := &event.Mutation{Op: op, Project: ProjectOf(name), Current: cur}
	if prev != nil {
		m.Previous = prev
	}
	e.emit(event.Event{Kind: event.KindMutation, Method: op, Path: name, Origin: event.OriginAdmin, Mutation: m})
}

// publishEvent is the event of a publish, built before the publish is
// durable so that the commit can hold it (holdPublish); emit sends it.
func publishEvent(topic string, msgs []*Message, copies int, deadFrom string) event.Event {
	pe := &PublishEvent{Topic: topic, Count: len(msgs), Copies: copies, DeadLetterOf: deadFrom, Messages: msgs}
	for i, m := range msgs {
		if i < maxEventIDs {
			pe.IDs = append(pe.IDs, m.ID)
		}
		pe.Bytes += m.size()
	}
	ev := event.Event{Kind: event.KindMutation, Service: ServiceName, Method: OpPublish, Path: topic, Origin: event.OriginAdmin,
		Mutation: &event.Mutation{Op: OpPublish, Project: ProjectOf(topic), Current: pe}}
	ev.Who(identity.AdminIdentity())
	return ev
}

// holdPublish holds a publish's event in the sandbox's outbox, in tx,
// the transaction that makes the publish durable, when a consumer must
// see it across a crash: the Cloud Functions' Pub/Sub triggers, which
// are delivered from the publish itself and not from a subscription's
// stored copy, so a kill between the commit and their match would lose
// the message for them.
func (e *Engine) holdPublish(tx service.Tx, evs []event.Event) error {
	if e.env.Outbox == nil || e.mem != nil {
		return nil
	}
	return e.env.Outbox.HoldIn(tx, evs)
}

func (e *Engine) emitDeliver(s *subState, got []Received, via string) {
	if len(got) == 0 {
		return
	}
	ev := &DeliverEvent{Subscription: s.cfg.Name, Via: via, Count: len(got)}
	for i, r := range got {
		if i >= maxEventIDs {
			break
		}
		ev.IDs = append(ev.IDs, r.Message.ID)
		if r.DeliveryAttempt > 0 {
			ev.Attempts = append(ev.Attempts, r.DeliveryAttempt)
		}
	}
	e.emitData(OpDeliver, s.cfg.Name, ProjectOf(s.cfg.Name), ev)
}

func (e *Engine) emitAck(s *subState, ens []*entry, op string) {
	ev := &AckEvent{Subscription: s.cfg.Name, Count: len(ens)}
	for i, en := range ens {
		if i >= maxEventIDs {
			break
		}
		ev.IDs = append(ev.IDs, en.msg.ID)
	}
	e.emitData(op, s.cfg.Name, ProjectOf(s.cfg.Name), ev)
}

func (e *Engine) emitExpire(s *subState, en *entry) {
	e.emitAck(s, []*entry{en}, OpExpire)
}

func (e *Engine) emitDeadLetter(s *subState, en *entry, topic string) {
	e.emitData(OpDeadLetter, s.cfg.Name, ProjectOf(s.cfg.Name), &DeadLetterEvent{
		Subscription: s.cfg.Name, DeadLetterTopic: topic, MessageID: en.msg.ID, DeliveryAttempt: en.attempts})
}
