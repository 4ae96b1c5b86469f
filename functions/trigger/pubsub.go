package trigger

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/pubsub"
)

// Pub/Sub event types, as firebase-functions 7.4.0 declares them: v2
// onMessagePublished (eventFilters.topic, the topic's short name) and v1
// pubsub.topic(t).onPublish (eventFilters.resource, the topic's full
// name).
const (
	pubsubV2Type = "google.cloud.pubsub.topic.v1.messagePublished"
	pubsubV1Type = "google.pubsub.topic.publish"
	// pubsubMessageType is the @type production's v1 events give the
	// message (and their resource's type).
	pubsubMessageType = "type.googleapis.com/google.pubsub.v1.PubsubMessage"
)

// PubSubSubscription is the subscription a v2 event names for a topic's
// trigger: the one the Emulator Suite's Pub/Sub emulator creates for it
// (emulator-sub-<topic>). Pyric delivers from the publish itself, so the
// subscription is only a name (creating it would keep every message);
// the publish holds its event in the sandbox's outbox for the trigger
// instead, until the dispatcher took it.
func PubSubSubscription(project, topic string) string {
	return "projects/" + project + "/subscriptions/emulator-sub-" + topic
}

// PubSubTopic is the topic a Pub/Sub-triggered function listens on, as
// its full name (projects/P/topics/T), or "" when f is not one.
func PubSubTopic(f Function, project string) string {
	switch kindOf(f.EventType) {
	case kindPubSubV2:
		if t := f.EventFilters["topic"]; t != "" {
			if strings.HasPrefix(t, "projects/") {
				return t
			}
			return "projects/" + project + "/topics/" + t
		}
	case kindPubSubV1:
		return f.EventFilters["resource"]
	}
	return ""
}

// publishTime is how firebase-tools writes a message's publish time in
// the events: an ISO time with milliseconds (the Node client's Date).
func publishTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// pubsubDeliveries are the invocations of f for the messages of a
// publish to its topic: one per message, in publish order.
func pubsubDeliveries(f Function, ev event.Event, env Env) ([]Delivery, error) {
	if ev.Service != pubsub.ServiceName || ev.Kind != event.KindMutation || ev.Mutation == nil || ev.Mutation.Op != pubsub.OpPublish {
		return nil, nil
	}
	pe, ok := pubsub.PublishEventOf(ev.Mutation.Current)
	if !ok || pe.Topic == "" || pe.Topic != PubSubTopic(f, env.Project) {
		return nil, nil
	}
	_, short, _ := strings.Cut(strings.TrimPrefix(pe.Topic, "projects/"), "/topics/")
	project := pubsub.ProjectOf(pe.Topic)
	out := make([]Delivery, 0, len(pe.Messages))
	for _, m := range pe.Messages {
		var body map[string]any
		data := base64.StdEncoding.EncodeToString(m.Data)
		attrs := m.Attributes
		if attrs == nil {
			attrs = map[string]string{}
		}
		at := publishTime(m.PublishTime)
		if kindOf(f.EventType) == kindPubSubV2 {
			// Production's CloudEvent names the message id as its id;
			// the message carries both spellings of id and time, as
			// production and firebase-tools send them.
			body = map[string]any{"specversion": "1.0", "id": m.ID, "type": pubsubV2Type,
				"source": "//pubsub.googleapis.com/" + pe.Topic, "time": at, "datacontenttype": "application/json",
				"data": map[string]any{
					"message": map[string]any{"data": data, "attributes": attrs, "messageId": m.ID, "message_id": m.ID,
						"publishTime": at, "publish_time": at, "orderingKey": m.OrderingKey},
					"subscription": PubSubSubscription(project, short),
				}}
		} else {
			msg := map[string]any{"@type": pubsubMessageType, "data": data, "attributes": attrs,
				"messageId": m.ID, "publishTime": at}
			if m.OrderingKey != "" {
				msg["orderingKey"] = m.OrderingKey
			}
			// A v1 Pub/Sub event's id is the message's id in production.
			ctx := map[string]any{"eventId": m.ID, "timestamp": at, "eventType": pubsubV1Type,
				"resource": map[string]any{"service": "pubsub.googleapis.com", "name": pe.Topic, "type": pubsubMessageType},
				"params":   map[string]string{}}
			body = map[string]any{"data": msg, "context": ctx}
		}
		p, err := marshal(body)
		if err != nil {
			return nil, err
		}
		out = append(out, Delivery{Function: f.ID, Params: map[string]string{}, Payload: p})
	}
	return out, nil
}
