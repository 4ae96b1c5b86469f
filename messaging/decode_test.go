package messaging

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeNamesAndCanonicalForm(t *testing.T) {
	t.Parallel()
	// The same message under proto and JSON names decodes identically.
	snake := `{"validate_only": true, "message": {"topic": "a", "fcm_options": {"analytics_label": "l"},
		"android": {"collapse_key": "c", "restricted_package_name": "p", "direct_boot_ok": true, "notification": {"click_action": "x", "channel_id": "ch", "default_sound": true}},
		"webpush": {"fcm_options": {"link": "https://a.test"}}, "apns": {"live_activity_token": "t", "fcm_options": {"analytics_label": "a"}}}}`
	camel := `{"validateOnly": true, "message": {"topic": "a", "fcmOptions": {"analyticsLabel": "l"},
		"android": {"collapseKey": "c", "restrictedPackageName": "p", "directBootOk": true, "notification": {"clickAction": "x", "channelId": "ch", "defaultSound": true}},
		"webpush": {"fcmOptions": {"link": "https://a.test"}}, "apns": {"liveActivityToken": "t", "fcmOptions": {"analyticsLabel": "a"}}}}`
	a, err := DecodeSendRequest([]byte(snake))
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeSendRequest([]byte(camel))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("snake and camel differ:\n%+v\n%+v", a.Message, b.Message)
	}
	if !a.ValidateOnly || a.Message.Android.Notification.ChannelID != "ch" || a.Message.APNS.LiveActivityToken != "t" {
		t.Fatalf("decoded: %+v", a.Message)
	}
	m, err := DecodeMessage([]byte(`{"token": "x", "android": {"priority": 1}}`))
	if err != nil || m.Token != "x" || m.Android.Priority != "HIGH" {
		t.Fatalf("DecodeMessage: %+v %v", m, err)
	}
	// Numbers in string form are accepted where proto JSON allows them.
	m, err = DecodeMessage([]byte(`{"topic": "a", "android": {"notification": {"notification_count": "4", "light_settings": {"color": {"red": "0.5"}, "light_on_duration": "1s", "light_off_duration": "2s"}}}}`))
	if err != nil || *m.Android.Notification.NotificationCount != 4 || m.Android.Notification.LightSettings.Color.Red != 0.5 {
		t.Fatalf("numbers as strings: %+v %v", m, err)
	}
	for _, bad := range []string{
		`{"message": {"android": {"notification": {"notification_count": 3000000000}}}}`,
		`{"message": {"android": {"notification": {"light_settings": {"color": {"red": "x"}}}}}}`,
		`{"message": {"android": {"priority": 7}}}`,
		`{"message": {"android": {"direct_boot_ok": "true"}}}`,
	} {
		if _, err := DecodeSendRequest([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func FuzzDecodeSendRequest(f *testing.F) {
	for _, s := range []string{
		`{"message": {"token": "x", "notification": {"title": "t"}}}`,
		`{"validate_only": true, "message": {"topic": "a", "data": {"k": "v"}}}`,
		`{"message": {"condition": "'a' in topics && 'b' in topics", "android": {"ttl": "3.5s", "priority": "high", "notification": {"vibrate_timings": ["1s"], "light_settings": {"color": {"red": 1}, "light_on_duration": "1s", "light_off_duration": "1s"}}}}}`,
		`{"message": {"topic": "a", "webpush": {"headers": {"TTL": "5"}, "notification": {"title": "x", "actions": [{"action": "a"}]}}, "apns": {"payload": {"aps": {"alert": "x", "sound": {"name": "s", "volume": 0.5}}}}}}`,
		`{"message": {"token": "x", "topic": "y"}}`, `[]`, `{`, `{"message": null}`, `{"message": {"android": {"ttl": 5}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeSendRequest(body)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		Validate(req.Message, nil)
		// The canonical form decodes to the same request.
		canon, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeSendRequest(canon)
		if err != nil {
			t.Fatalf("canonical form %s does not decode: %v", canon, err)
		}
		c2, _ := json.Marshal(again)
		if string(c2) != string(canon) {
			t.Fatalf("canonical form not stable:\n%s\n%s", canon, c2)
		}
	})
}
