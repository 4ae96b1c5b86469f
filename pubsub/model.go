package pubsub

import "time"

// Production's limits.
const (
	MaxMessageBytes       = 10 << 20 // data + attributes + ordering key
	MaxPublishBytes       = 10 << 20 // one publish request
	MaxPublishMessages    = 1000
	MaxAttributes         = 100
	MaxAttributeKeyBytes  = 256
	MaxAttributeValBytes  = 1024
	MaxOrderingKeyBytes   = 1024
	MinAckDeadlineSeconds = 10
	MaxAckDeadlineSeconds = 600
	DefaultAckDeadline    = 10
	// MaxPullMessages caps what one Pull returns whatever max_messages
	// asks.
	MaxPullMessages = 1000
	// DefaultRetention is a subscription's and a snapshot's message
	// retention (7 days).
	DefaultRetention = 7 * 24 * time.Hour
	MinRetention     = 10 * time.Minute
	MaxRetention     = 31 * 24 * time.Hour
	// MinDeliveryAttempts and MaxDeliveryAttempts bound a dead-letter
	// policy's max_delivery_attempts (0 means the default, 5).
	MinDeliveryAttempts     = 5
	MaxDeliveryAttempts     = 100
	DefaultDeliveryAttempts = 5
	MaxBackoff              = 600 * time.Second
	DefaultMinBackoff       = 10 * time.Second
	MaxFilterBytes          = 256
	MaxLabels               = 64
)

// Message is a published message.
type Message struct {
	ID          string            `json:"id"`
	Data        []byte            `json:"data,omitempty"`
	Attributes  map[string]string `json:"attributes,omitempty"`
	OrderingKey string            `json:"orderingKey,omitempty"`
	PublishTime time.Time         `json:"publishTime"`
}

func (m *Message) size() int {
	n := len(m.Data) + len(m.OrderingKey)
	for k, v := range m.Attributes {
		n += len(k) + len(v)
	}
	return n
}

// Topic is a topic's configuration.
type Topic struct {
	Name                     string            `json:"name"`
	Labels                   map[string]string `json:"labels,omitempty"`
	MessageRetentionDuration time.Duration     `json:"messageRetentionDuration,omitempty"`
	KMSKeyName               string            `json:"kmsKeyName,omitempty"`
	SchemaSettings           *SchemaSettings   `json:"schemaSettings,omitempty"`
}

// PushConfig makes a subscription a push subscription.
type PushConfig struct {
	Endpoint      string            `json:"endpoint"`
	Attributes    map[string]string `json:"attributes,omitempty"`
	NoWrapper     bool              `json:"noWrapper,omitempty"`
	WriteMetadata bool              `json:"writeMetadata,omitempty"`
	// OIDCServiceAccount and OIDCAudience are kept and echoed; no token
	// is sent (nothing local verifies one).
	OIDCServiceAccount string `json:"oidcServiceAccount,omitempty"`
	OIDCAudience       string `json:"oidcAudience,omitempty"`
}

// DeadLetterPolicy forwards a message to Topic after MaxDeliveryAttempts
// failed deliveries.
type DeadLetterPolicy struct {
	Topic               string `json:"topic"`
	MaxDeliveryAttempts int    `json:"maxDeliveryAttempts"`
}

// RetryPolicy delays redelivery of a nacked or expired message by an
// exponential backoff between the two bounds.
type RetryPolicy struct {
	MinimumBackoff time.Duration `json:"minimumBackoff"`
	MaximumBackoff time.Duration `json:"maximumBackoff"`
}

// Subscription is a subscription's configuration.
type Subscription struct {
	Name                     string            `json:"name"`
	Topic                    string            `json:"topic"`
	Push                     *PushConfig       `json:"push,omitempty"`
	AckDeadlineSeconds       int               `json:"ackDeadlineSeconds"`
	RetainAckedMessages      bool              `json:"retainAckedMessages,omitempty"`
	MessageRetentionDuration time.Duration     `json:"messageRetentionDuration"`
	Labels                   map[string]string `json:"labels,omitempty"`
	EnableMessageOrdering    bool              `json:"enableMessageOrdering,omitempty"`
	// Expiration is the expiration policy's TTL; nil means the default
	// policy, a pointer to 0 means never. Kept and echoed: subscriptions
	// are never deleted for inactivity locally.
	Expiration                *time.Duration    `json:"expiration,omitempty"`
	Filter                    string            `json:"filter,omitempty"`
	DeadLetter                *DeadLetterPolicy `json:"deadLetter,omitempty"`
	Retry                     *RetryPolicy      `json:"retry,omitempty"`
	Detached                  bool              `json:"detached,omitempty"`
	EnableExactlyOnceDelivery bool              `json:"enableExactlyOnceDelivery,omitempty"`
}

// Snapshot is a snapshot's configuration: the messages it holds are the
// subscription's unacknowledged ones when it was taken and every one
// published to Topic since.
type Snapshot struct {
	Name   string            `json:"name"`
	Topic  string            `json:"topic"`
	Expire time.Time         `json:"expire"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Received is one delivery: the message, the ack id that acknowledges
// this delivery, and the delivery attempt (1.. when the subscription has
// a dead-letter policy, else 0, as in production).
type Received struct {
	AckID           string
	Message         *Message
	DeliveryAttempt int
}

// SubStats is a subscription's backlog as Studio shows it.
type SubStats struct {
	Backlog     int       `json:"backlog"`     // unacknowledged messages
	Outstanding int       `json:"outstanding"` // delivered, lease running
	OldestAt    time.Time `json:"oldestUnacked,omitzero"`
}
