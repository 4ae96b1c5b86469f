package messaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// SendRequest is a decoded messages:send body.
type SendRequest struct {
	ValidateOnly bool     `json:"validateOnly,omitempty"`
	Message      *Message `json:"message,omitempty"`
}

// Message is an FCM v1 message in canonical proto-JSON form.
type Message struct {
	Name         string            `json:"name,omitempty"`
	Data         map[string]string `json:"data,omitempty"`
	Notification *Notification     `json:"notification,omitempty"`
	Android      *AndroidConfig    `json:"android,omitempty"`
	Webpush      *WebpushConfig    `json:"webpush,omitempty"`
	APNS         *APNSConfig       `json:"apns,omitempty"`
	FcmOptions   *FcmOptions       `json:"fcmOptions,omitempty"`
	Token        string            `json:"token,omitempty"`
	Topic        string            `json:"topic,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Fid          string            `json:"fid,omitempty"`
}

// Notification is the cross-platform notification template.
type Notification struct {
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
	Image string `json:"image,omitempty"`
}

// FcmOptions carries the analytics label.
type FcmOptions struct {
	AnalyticsLabel string `json:"analyticsLabel,omitempty"`
}

// AndroidConfig is the Android-specific part of a message.
type AndroidConfig struct {
	CollapseKey            string               `json:"collapseKey,omitempty"`
	Priority               string               `json:"priority,omitempty"`
	TTL                    string               `json:"ttl,omitempty"`
	RestrictedPackageName  string               `json:"restrictedPackageName,omitempty"`
	Data                   map[string]string    `json:"data,omitempty"`
	Notification           *AndroidNotification `json:"notification,omitempty"`
	FcmOptions             *FcmOptions          `json:"fcmOptions,omitempty"`
	DirectBootOk           bool                 `json:"directBootOk,omitempty"`
	BandwidthConstrainedOk bool                 `json:"bandwidthConstrainedOk,omitempty"`
	RestrictedSatelliteOk  bool                 `json:"restrictedSatelliteOk,omitempty"`
}

// AndroidNotification is the Android notification.
type AndroidNotification struct {
	Title                   string         `json:"title,omitempty"`
	Body                    string         `json:"body,omitempty"`
	Icon                    string         `json:"icon,omitempty"`
	Color                   string         `json:"color,omitempty"`
	Sound                   string         `json:"sound,omitempty"`
	Tag                     string         `json:"tag,omitempty"`
	ClickAction             string         `json:"clickAction,omitempty"`
	BodyLocKey              string         `json:"bodyLocKey,omitempty"`
	BodyLocArgs             []string       `json:"bodyLocArgs,omitempty"`
	TitleLocKey             string         `json:"titleLocKey,omitempty"`
	TitleLocArgs            []string       `json:"titleLocArgs,omitempty"`
	ChannelID               string         `json:"channelId,omitempty"`
	Ticker                  string         `json:"ticker,omitempty"`
	Sticky                  bool           `json:"sticky,omitempty"`
	EventTime               string         `json:"eventTime,omitempty"`
	LocalOnly               bool           `json:"localOnly,omitempty"`
	NotificationPriority    string         `json:"notificationPriority,omitempty"`
	DefaultSound            bool           `json:"defaultSound,omitempty"`
	DefaultVibrateTimings   bool           `json:"defaultVibrateTimings,omitempty"`
	DefaultLightSettings    bool           `json:"defaultLightSettings,omitempty"`
	VibrateTimings          []string       `json:"vibrateTimings,omitempty"`
	Visibility              string         `json:"visibility,omitempty"`
	NotificationCount       *int32         `json:"notificationCount,omitempty"`
	LightSettings           *LightSettings `json:"lightSettings,omitempty"`
	Image                   string         `json:"image,omitempty"`
	BypassProxyNotification bool           `json:"bypassProxyNotification,omitempty"`
	Proxy                   string         `json:"proxy,omitempty"`
}

// LightSettings controls the notification LED.
type LightSettings struct {
	Color            *Color `json:"color,omitempty"`
	LightOnDuration  string `json:"lightOnDuration,omitempty"`
	LightOffDuration string `json:"lightOffDuration,omitempty"`
}

// Color is a google.type.Color.
type Color struct {
	Red   float64  `json:"red"`
	Green float64  `json:"green"`
	Blue  float64  `json:"blue"`
	Alpha *float64 `json:"alpha,omitempty"`
}

// WebpushConfig is the Web Push part of a message.
type WebpushConfig struct {
	Headers      map[string]string  `json:"headers,omitempty"`
	Data         map[string]string  `json:"data,omitempty"`
	Notification map[string]any     `json:"notification,omitempty"`
	FcmOptions   *WebpushFcmOptions `json:"fcmOptions,omitempty"`
}

// WebpushFcmOptions are the web SDK's options.
type WebpushFcmOptions struct {
	Link           string `json:"link,omitempty"`
	AnalyticsLabel string `json:"analyticsLabel,omitempty"`
}

// APNSConfig is the Apple part of a message.
type APNSConfig struct {
	Headers           map[string]string `json:"headers,omitempty"`
	Payload           map[string]any    `json:"payload,omitempty"`
	FcmOptions        *APNSFcmOptions   `json:"fcmOptions,omitempty"`
	LiveActivityToken string            `json:"liveActivityToken,omitempty"`
}

// APNSFcmOptions are the iOS SDK's options.
type APNSFcmOptions struct {
	AnalyticsLabel string `json:"analyticsLabel,omitempty"`
	Image          string `json:"image,omitempty"`
}

// DecodeSendRequest decodes a messages:send body as production's API front
// end does: proto or JSON field names, unknown names and type mismatches
// rejected with a BadRequest naming the field, one target at most.
// Semantic checks are Validate's.
func DecodeSendRequest(body []byte) (*SendRequest, error) {
	v, err := parseJSON(body)
	if err != nil {
		return nil, invalidJSON("", "Invalid JSON payload received. "+jsonProblem(err))
	}
	m, derr := decoder{}.message("", schemaSendRequest, v)
	if derr != nil {
		return nil, derr
	}
	canon, err := json.Marshal(m)
	if err != nil {
		return nil, invalidJSON("", "Invalid JSON payload received. "+err.Error())
	}
	var req SendRequest
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.UseNumber() // free-form payloads keep their numbers exact
	if err := dec.Decode(&req); err != nil {
		// The canonical form always fits the typed struct; this is a
		// schema/struct mismatch, reported rather than hidden.
		return nil, invalidJSON("", "Invalid JSON payload received. "+err.Error())
	}
	if req.Message == nil {
		req.Message = &Message{}
	}
	return &req, nil
}

// DecodeMessage decodes a bare Message object (the "message" member of a
// send request).
func DecodeMessage(body []byte) (*Message, error) {
	var wrapped strings.Builder
	wrapped.WriteString(`{"message":`)
	wrapped.Write(body)
	wrapped.WriteString(`}`)
	req, err := DecodeSendRequest([]byte(wrapped.String()))
	if err != nil {
		return nil, err
	}
	return req.Message, nil
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if ok := asSyntax(err, &se); ok {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

func asSyntax(err error, target **json.SyntaxError) bool {
	se, ok := err.(*json.SyntaxError)
	if ok {
		*target = se
	}
	return ok
}

// target describes which target a message names.
func (m *Message) target() (kind, value string) {
	switch {
	case m.Token != "":
		return "token", m.Token
	case m.Topic != "":
		return "topic", m.Topic
	case m.Condition != "":
		return "condition", m.Condition
	case m.Fid != "":
		return "fid", m.Fid
	}
	return "", ""
}
