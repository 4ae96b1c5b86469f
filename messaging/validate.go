package messaging

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Production's payload limits.
const (
	// MaxPayloadBytes caps the payload delivered to a device: "Maximum
	// payload for both message types is 4096 bytes".
	MaxPayloadBytes = 4096
	// MaxTopicNameLength is the topic-name length limit of the v1 API
	// ("[a-zA-Z0-9-_.~%]{1,900}").
	MaxTopicNameLength = 900
	// MaxTTL is the longest time to live FCM keeps a message: four weeks.
	MaxTTL = 28 * 24 * time.Hour
)

// Platform is the kind of app instance a token belongs to; it decides
// which payload limit a token send is checked against.
type Platform string

// Platforms.
const (
	PlatformWeb     Platform = "web"
	PlatformAndroid Platform = "android"
	PlatformIOS     Platform = "ios"
)

var colorRGB = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// ValidTopicName reports whether name is a topic name the v1 API accepts
// (without the "/topics/" prefix).
func ValidTopicName(name string) bool {
	return name != "" && len(name) <= MaxTopicNameLength && badTopicChar(name) < 0
}

// Validate checks a decoded message as production's send plane does,
// independently of the token registry: exactly one target and its
// syntax, reserved data keys, and the android, webpush and apns options.
// It returns the parsed condition for a condition message. platforms
// lists the payload limits to apply (nil means every platform's).
func Validate(m *Message, platforms []Platform) (*Condition, error) {
	kind, value := m.target()
	if kind == "" {
		return nil, invalidField("message", msgNoRecipient)
	}
	var cond *Condition
	switch kind {
	case "topic":
		if !ValidTopicName(value) {
			// The description is inferred (the seeds record only that
			// production rejects the name with INVALID_ARGUMENT).
			return nil, genericField("message.topic", "Invalid topic name %q: a topic name is 1 to %d characters of [a-zA-Z0-9-_.~%%] without the /topics/ prefix", value, MaxTopicNameLength)
		}
	case "condition":
		c, err := ParseCondition(value)
		if err != nil {
			// Production's text is fixed (see errors.go); the parser's
			// reason travels as DebugInfo.
			e := genericField("message.condition", msgInvalidCondition)
			e.Debug = fmt.Sprintf("Invalid condition %q: %v", value, err)
			return nil, e
		}
		cond = c
	}
	if err := checkDataKeys("message.data", m.Data); err != nil {
		return nil, err
	}
	if n := m.Notification; n != nil && n.Image != "" {
		if err := checkURL("message.notification.image", n.Image, false); err != nil {
			return nil, err
		}
	}
	if err := validateAndroid(m.Android); err != nil {
		return nil, err
	}
	if err := validateWebpush(m.Webpush); err != nil {
		return nil, err
	}
	if err := validateAPNS(m.APNS); err != nil {
		return nil, err
	}
	if platforms == nil {
		platforms = []Platform{PlatformAndroid, PlatformWeb, PlatformIOS}
	}
	for _, p := range platforms {
		if err := checkSize(m, p); err != nil {
			return nil, err
		}
	}
	return cond, nil
}

// genericField is a 400 whose top-level message is production's generic
// one and whose field violation says precisely what is wrong. Unless a
// comment at the call says otherwise (or errors.go lists it as verified),
// the description is pyric's: production's own texts for these fields
// were not found in any capture.
func genericField(field, format string, args ...any) *Error {
	return &Error{Kind: ErrInvalidArgument, Msg: msgInvalidArgument, FcmCode: FcmInvalidArgument,
		BadRequest: true, Violations: []FieldViolation{{Field: field, Description: fmt.Sprintf(format, args...)}}}
}

// checkDataKeys rejects the reserved data keys: "from", "message_type"
// and anything starting "google." or "gcm." (the v1 reference: "The key
// should not be a reserved word").
func checkDataKeys(field string, data map[string]string) *Error {
	for k := range data {
		lk := strings.ToLower(k)
		if lk == "from" || lk == "message_type" || strings.HasPrefix(lk, "google.") || strings.HasPrefix(lk, "gcm.") {
			return invalidField(field, "%s%s", msgInvalidDataKeyPfx, k)
		}
	}
	return nil
}

func checkURL(field, raw string, httpsOnly bool) *Error {
	u, err := url.ParseRequestURI(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return genericField(field, "Invalid URL %q", raw)
	}
	if httpsOnly && u.Scheme != "https" {
		return genericField(field, "Invalid URL %q: HTTPS is required", raw)
	}
	return nil
}

func validateAndroid(a *AndroidConfig) *Error {
	if a == nil {
		return nil
	}
	if a.TTL != "" {
		d, _ := ParseDuration(a.TTL) // canonical already
		if d < 0 {
			return genericField("message.android.ttl", "TTL must not be negative: %s", a.TTL)
		}
		if d > MaxTTL {
			return genericField("message.android.ttl", "TTL %s exceeds the maximum of %ds (4 weeks)", a.TTL, int64(MaxTTL/time.Second))
		}
	}
	if err := checkDataKeys("message.android.data", a.Data); err != nil {
		return err
	}
	n := a.Notification
	if n == nil {
		return nil
	}
	const p = "message.android.notification"
	if n.Color != "" && !colorRGB.MatchString(n.Color) {
		return genericField(p+".color", "Invalid color %q: expected #rrggbb", n.Color)
	}
	if len(n.TitleLocArgs) > 0 && n.TitleLocKey == "" {
		return genericField(p+".title_loc_key", "title_loc_key is required when title_loc_args is set")
	}
	if len(n.BodyLocArgs) > 0 && n.BodyLocKey == "" {
		return genericField(p+".body_loc_key", "body_loc_key is required when body_loc_args is set")
	}
	if n.Image != "" {
		if err := checkURL(p+".image", n.Image, false); err != nil {
			return err
		}
	}
	for i, t := range n.VibrateTimings {
		if d, _ := ParseDuration(t); d < 0 {
			return genericField(fmt.Sprintf("%s.vibrate_timings[%d]", p, i), "Vibrate timing must not be negative: %s", t)
		}
	}
	if n.NotificationCount != nil && *n.NotificationCount < 0 {
		return genericField(p+".notification_count", "notification_count must not be negative")
	}
	if ls := n.LightSettings; ls != nil {
		const lp = p + ".light_settings"
		if ls.Color == nil {
			return genericField(lp+".color", "light_settings.color is required")
		}
		for name, c := range map[string]float64{"red": ls.Color.Red, "green": ls.Color.Green, "blue": ls.Color.Blue} {
			if c < 0 || c > 1 {
				return genericField(lp+".color."+name, "Color channel %s must be in [0, 1], got %v", name, c)
			}
		}
		if ls.Color.Alpha != nil && (*ls.Color.Alpha < 0 || *ls.Color.Alpha > 1) {
			return genericField(lp+".color.alpha", "Color channel alpha must be in [0, 1], got %v", *ls.Color.Alpha)
		}
		for name, v := range map[string]string{"light_on_duration": ls.LightOnDuration, "light_off_duration": ls.LightOffDuration} {
			if v == "" {
				return genericField(lp+"."+name, "light_settings.%s is required", name)
			}
			if d, _ := ParseDuration(v); d < 0 {
				return genericField(lp+"."+name, "light_settings.%s must not be negative", name)
			}
		}
	}
	return nil
}

var webpushUrgency = map[string]bool{"very-low": true, "low": true, "normal": true, "high": true}

func validateWebpush(w *WebpushConfig) *Error {
	if w == nil {
		return nil
	}
	for k, v := range w.Headers {
		switch strings.ToLower(k) {
		case "ttl":
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				return genericField("message.webpush.headers", "Invalid TTL header %q: expected a non-negative number of seconds", v)
			}
		case "urgency":
			if !webpushUrgency[v] {
				return genericField("message.webpush.headers", "Invalid Urgency header %q: expected very-low, low, normal or high", v)
			}
		}
	}
	if err := checkDataKeys("message.webpush.data", w.Data); err != nil {
		return err
	}
	if n := w.Notification; n != nil {
		if dir, ok := n["dir"]; ok {
			if s, _ := dir.(string); s != "auto" && s != "ltr" && s != "rtl" {
				return genericField("message.webpush.notification", "Invalid dir %s: expected auto, ltr or rtl", render(dir))
			}
		}
		for _, k := range []string{"title", "body", "icon", "badge", "image", "lang", "tag"} {
			if v, ok := n[k]; ok {
				if _, isStr := v.(string); !isStr {
					return genericField("message.webpush.notification", "Invalid %s %s: expected a string", k, render(v))
				}
			}
		}
		if ts, ok := n["timestamp"]; ok {
			if _, isNum := ts.(json.Number); !isNum {
				return genericField("message.webpush.notification", "Invalid timestamp %s: expected a number", render(ts))
			}
		}
	}
	if o := w.FcmOptions; o != nil && o.Link != "" {
		if err := checkURL("message.webpush.fcm_options.link", o.Link, true); err != nil {
			return err
		}
	}
	return nil
}

var apnsPushTypes = map[string]bool{"alert": true, "background": true, "location": true, "voip": true,
	"complication": true, "fileprovider": true, "mdm": true, "liveactivity": true, "pushtotalk": true, "widgets": true, "controls": true}

func validateAPNS(a *APNSConfig) *Error {
	if a == nil {
		return nil
	}
	for k, v := range a.Headers {
		switch strings.ToLower(k) {
		case "apns-priority":
			if v != "1" && v != "5" && v != "10" {
				return genericField("message.apns.headers", "Invalid apns-priority %q: expected 1, 5 or 10", v)
			}
		case "apns-expiration":
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return genericField("message.apns.headers", "Invalid apns-expiration %q: expected a UNIX epoch in seconds", v)
			}
		case "apns-push-type":
			if !apnsPushTypes[v] {
				return genericField("message.apns.headers", "Invalid apns-push-type %q", v)
			}
		}
	}
	if o := a.FcmOptions; o != nil && o.Image != "" {
		if err := checkURL("message.apns.fcm_options.image", o.Image, false); err != nil {
			return err
		}
	}
	if a.Payload == nil {
		return nil
	}
	const p = "message.apns.payload"
	apsV, ok := a.Payload["aps"]
	if !ok {
		return nil
	}
	aps, ok := apsV.(map[string]any)
	if !ok {
		return genericField(p, "aps must be a dictionary, got %s", render(apsV))
	}
	if alert, ok := aps["alert"]; ok {
		switch alert.(type) {
		case string, map[string]any:
		default:
			return genericField(p, "aps.alert must be a string or a dictionary, got %s", render(alert))
		}
	}
	if badge, ok := aps["badge"]; ok {
		if n, isNum := badge.(json.Number); !isNum || !isNonNegInt(n) {
			return genericField(p, "aps.badge must be a non-negative integer, got %s", render(badge))
		}
	}
	for _, k := range []string{"content-available", "mutable-content"} {
		if v, ok := aps[k]; ok {
			if n, isNum := v.(json.Number); !isNum || !isNonNegInt(n) {
				return genericField(p, "aps.%s must be 0 or 1, got %s", k, render(v))
			}
		}
	}
	if sound, ok := aps["sound"]; ok {
		switch s := sound.(type) {
		case string:
		case map[string]any:
			if name, _ := s["name"].(string); name == "" {
				return genericField(p, "aps.sound.name is required for a critical sound")
			}
			if vol, ok := s["volume"]; ok {
				n, isNum := vol.(json.Number)
				f, err := n.Float64()
				if !isNum || err != nil || f < 0 || f > 1 {
					return genericField(p, "aps.sound.volume must be in [0.0, 1.0], got %s", render(vol))
				}
			}
		default:
			return genericField(p, "aps.sound must be a string or a dictionary, got %s", render(sound))
		}
	}
	return nil
}

func isNonNegInt(n json.Number) bool {
	i, err := strconv.ParseInt(n.String(), 10, 64)
	return err == nil && i >= 0
}

// checkSize applies the payload cap to what the platform would be sent:
// the effective data (the platform's data overrides message.data) plus
// the notification fields. Production answers an oversized Android
// message with "Android message is too big" and an empty BadRequest.
func checkSize(m *Message, p Platform) *Error {
	size := 0
	data := m.Data
	notif := map[string]string{}
	if n := m.Notification; n != nil {
		notif["title"], notif["body"], notif["image"] = n.Title, n.Body, n.Image
	}
	var name string
	switch p {
	case PlatformAndroid:
		name = "Android message"
		if a := m.Android; a != nil {
			if a.Data != nil {
				data = a.Data
			}
			if an := a.Notification; an != nil {
				b, _ := json.Marshal(an)
				size += len(b)
			}
		}
	case PlatformWeb:
		name = "Web push message"
		if w := m.Webpush; w != nil {
			if w.Data != nil {
				data = w.Data
			}
			if w.Notification != nil {
				b, _ := json.Marshal(w.Notification)
				size += len(b)
			}
		}
	case PlatformIOS:
		name = "APNs message"
		if a := m.APNS; a != nil && a.Payload != nil {
			b, _ := json.Marshal(a.Payload)
			size += len(b)
		}
	}
	for k, v := range data {
		size += len(k) + len(v)
	}
	for _, v := range notif {
		size += len(v)
	}
	if size > MaxPayloadBytes {
		return &Error{Kind: ErrInvalidArgument, Msg: name + " is too big", FcmCode: FcmInvalidArgument, BadRequest: true}
	}
	return nil
}
