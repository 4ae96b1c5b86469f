package messaging

// The FCM HTTP v1 request schema (google.firebase.fcm.v1, as the v1
// discovery document describes it), as data: the decoder walks it to
// accept exactly the fields production accepts, under either their proto
// (snake_case) or JSON (lowerCamel) names, and to word its errors the way
// Google's API front end does (proto field paths, TYPE_* and type URLs).

type fieldKind int

const (
	kString fieldKind = iota
	kBool
	kInt32
	kFloat
	kEnum
	kDuration
	kTimestamp
	kStringMap // map<string, string>
	kStruct    // google.protobuf.Struct: any JSON object
	kStrings   // repeated string
	kDurations // repeated google.protobuf.Duration
	kMessage
)

type field struct {
	proto string
	json  string
	kind  fieldKind
	enum  *enumType
	msg   *msgType
	oneof string
	// entry is the map-entry type name for kStringMap fields
	// ("Message.DataEntry").
	entry string
}

type enumType struct {
	name   string
	values []string
}

type msgType struct {
	name   string
	fields []field
	byName map[string]*field
}

const typePrefix = "type.googleapis.com/"

func newMsg(name string, fields ...field) *msgType {
	m := &msgType{name: name, fields: fields, byName: map[string]*field{}}
	for i := range m.fields {
		f := &m.fields[i]
		m.byName[f.proto] = f
		m.byName[f.json] = f
	}
	return m
}

func str(proto, json string) field { return field{proto: proto, json: json, kind: kString} }
func boolean(proto, json string) field {
	return field{proto: proto, json: json, kind: kBool}
}

var (
	enumAndroidPriority = &enumType{"google.firebase.fcm.v1.AndroidMessagePriority", []string{"NORMAL", "HIGH"}}
	enumNotifPriority   = &enumType{"google.firebase.fcm.v1.AndroidNotification.NotificationPriority",
		[]string{"PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"}}
	enumVisibility = &enumType{"google.firebase.fcm.v1.AndroidNotification.Visibility",
		[]string{"VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"}}
	enumProxy = &enumType{"google.firebase.fcm.v1.AndroidNotification.Proxy",
		[]string{"PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"}}
)

var (
	schemaNotification = newMsg("google.firebase.fcm.v1.Notification",
		str("title", "title"), str("body", "body"), str("image", "image"))

	schemaFcmOptions = newMsg("google.firebase.fcm.v1.FcmOptions", str("analytics_label", "analyticsLabel"))

	schemaColor = newMsg("google.type.Color",
		field{proto: "red", json: "red", kind: kFloat},
		field{proto: "green", json: "green", kind: kFloat},
		field{proto: "blue", json: "blue", kind: kFloat},
		field{proto: "alpha", json: "alpha", kind: kFloat})

	schemaLightSettings = newMsg("google.firebase.fcm.v1.LightSettings",
		field{proto: "color", json: "color", kind: kMessage, msg: schemaColor},
		field{proto: "light_on_duration", json: "lightOnDuration", kind: kDuration},
		field{proto: "light_off_duration", json: "lightOffDuration", kind: kDuration})

	schemaAndroidNotification = newMsg("google.firebase.fcm.v1.AndroidNotification",
		str("title", "title"), str("body", "body"), str("icon", "icon"), str("color", "color"),
		str("sound", "sound"), str("tag", "tag"), str("click_action", "clickAction"),
		str("body_loc_key", "bodyLocKey"), field{proto: "body_loc_args", json: "bodyLocArgs", kind: kStrings},
		str("title_loc_key", "titleLocKey"), field{proto: "title_loc_args", json: "titleLocArgs", kind: kStrings},
		str("channel_id", "channelId"), str("ticker", "ticker"), boolean("sticky", "sticky"),
		field{proto: "event_time", json: "eventTime", kind: kTimestamp},
		boolean("local_only", "localOnly"),
		field{proto: "notification_priority", json: "notificationPriority", kind: kEnum, enum: enumNotifPriority},
		boolean("default_sound", "defaultSound"), boolean("default_vibrate_timings", "defaultVibrateTimings"),
		boolean("default_light_settings", "defaultLightSettings"),
		field{proto: "vibrate_timings", json: "vibrateTimings", kind: kDurations},
		field{proto: "visibility", json: "visibility", kind: kEnum, enum: enumVisibility},
		field{proto: "notification_count", json: "notificationCount", kind: kInt32},
		field{proto: "light_settings", json: "lightSettings", kind: kMessage, msg: schemaLightSettings},
		str("image", "image"), boolean("bypass_proxy_notification", "bypassProxyNotification"),
		field{proto: "proxy", json: "proxy", kind: kEnum, enum: enumProxy})

	schemaAndroidFcmOptions = newMsg("google.firebase.fcm.v1.AndroidFcmOptions", str("analytics_label", "analyticsLabel"))

	schemaAndroidConfig = newMsg("google.firebase.fcm.v1.AndroidConfig",
		str("collapse_key", "collapseKey"),
		field{proto: "priority", json: "priority", kind: kEnum, enum: enumAndroidPriority},
		field{proto: "ttl", json: "ttl", kind: kDuration},
		str("restricted_package_name", "restrictedPackageName"),
		field{proto: "data", json: "data", kind: kStringMap, entry: "AndroidConfig.DataEntry"},
		field{proto: "notification", json: "notification", kind: kMessage, msg: schemaAndroidNotification},
		field{proto: "fcm_options", json: "fcmOptions", kind: kMessage, msg: schemaAndroidFcmOptions},
		boolean("direct_boot_ok", "directBootOk"),
		boolean("bandwidth_constrained_ok", "bandwidthConstrainedOk"),
		boolean("restricted_satellite_ok", "restrictedSatelliteOk"))

	schemaWebpushFcmOptions = newMsg("google.firebase.fcm.v1.WebpushFcmOptions",
		str("link", "link"), str("analytics_label", "analyticsLabel"))

	schemaWebpushConfig = newMsg("google.firebase.fcm.v1.WebpushConfig",
		field{proto: "headers", json: "headers", kind: kStringMap, entry: "WebpushConfig.HeadersEntry"},
		field{proto: "data", json: "data", kind: kStringMap, entry: "WebpushConfig.DataEntry"},
		field{proto: "notification", json: "notification", kind: kStruct},
		field{proto: "fcm_options", json: "fcmOptions", kind: kMessage, msg: schemaWebpushFcmOptions})

	schemaApnsFcmOptions = newMsg("google.firebase.fcm.v1.ApnsFcmOptions",
		str("analytics_label", "analyticsLabel"), str("image", "image"))

	schemaApnsConfig = newMsg("google.firebase.fcm.v1.ApnsConfig",
		field{proto: "headers", json: "headers", kind: kStringMap, entry: "ApnsConfig.HeadersEntry"},
		field{proto: "payload", json: "payload", kind: kStruct},
		field{proto: "fcm_options", json: "fcmOptions", kind: kMessage, msg: schemaApnsFcmOptions},
		str("live_activity_token", "liveActivityToken"))

	schemaMessage = newMsg("google.firebase.fcm.v1.Message",
		str("name", "name"),
		field{proto: "data", json: "data", kind: kStringMap, entry: "Message.DataEntry"},
		field{proto: "notification", json: "notification", kind: kMessage, msg: schemaNotification},
		field{proto: "android", json: "android", kind: kMessage, msg: schemaAndroidConfig},
		field{proto: "webpush", json: "webpush", kind: kMessage, msg: schemaWebpushConfig},
		field{proto: "apns", json: "apns", kind: kMessage, msg: schemaApnsConfig},
		field{proto: "fcm_options", json: "fcmOptions", kind: kMessage, msg: schemaFcmOptions},
		field{proto: "token", json: "token", kind: kString, oneof: "target"},
		field{proto: "topic", json: "topic", kind: kString, oneof: "target"},
		field{proto: "condition", json: "condition", kind: kString, oneof: "target"},
		field{proto: "fid", json: "fid", kind: kString, oneof: "target"})

	schemaSendRequest = newMsg("google.firebase.fcm.v1.SendMessageRequest",
		boolean("validate_only", "validateOnly"),
		field{proto: "message", json: "message", kind: kMessage, msg: schemaMessage})
)
