// Package fcmclient points firebase-admin-go's messaging client at pyric.
// The SDK's FCM (fcm.googleapis.com) and instance-id (iid.googleapis.com)
// endpoints are fixed, so instead of an emulator host variable it takes an
// HTTP client whose transport rewrites those hosts to pyric's messaging
// port:
//
//	opt, _ := fcmclient.Option("http://127.0.0.1:9599")
//	app, _ := firebase.NewApp(ctx, &firebase.Config{ProjectID: "demo-project"}, opt)
//	client, _ := app.Messaging(ctx)
//	client.Send(ctx, &messaging.Message{Token: token})
package fcmclient

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"google.golang.org/api/option"
)

// Hosts are the Google hosts the admin SDKs send messaging calls to.
var Hosts = []string{"fcm.googleapis.com", "iid.googleapis.com"}

// Transport rewrites requests for Hosts to base (pyric's messaging URL,
// "http://127.0.0.1:9599") and sends them with next (nil means
// http.DefaultTransport). Requests for other hosts pass through untouched.
// Rewritten requests without credentials carry "Authorization: Bearer
// owner", the emulators' admin credential.
type Transport struct {
	Base *url.URL
	Next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	if !rewritten(r.URL.Host) {
		return next.RoundTrip(r)
	}
	out := r.Clone(r.Context())
	u := *r.URL
	u.Scheme, u.Host = t.Base.Scheme, t.Base.Host
	if p := t.Base.Path; p != "" && p != "/" {
		u.Path = p + u.Path
	}
	out.URL, out.Host = &u, t.Base.Host
	if out.Header.Get("Authorization") == "" {
		out.Header.Set("Authorization", "Bearer owner")
	}
	return next.RoundTrip(out)
}

func rewritten(host string) bool {
	for _, h := range Hosts {
		if host == h || host == h+":443" {
			return true
		}
	}
	return false
}

// HTTPClient returns a client whose Transport rewrites Hosts to base.
func HTTPClient(base string) (*http.Client, error) {
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("fcmclient: %w", err)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("fcmclient: %q names no host", base)
	}
	// SendEach runs 50 sends at once; keep their connections alive
	// instead of the default two per host.
	next := http.DefaultTransport.(*http.Transport).Clone()
	next.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: &Transport{Base: u, Next: next}}, nil
}

// Option is the client option that points firebase-admin-go's messaging
// client (firebase.NewApp(ctx, cfg, opt)) at base, "http://host:port" or
// "host:port".
func Option(base string) (option.ClientOption, error) {
	hc, err := HTTPClient(base)
	if err != nil {
		return nil, err
	}
	return option.WithHTTPClient(hc), nil
}

// EnvVar names pyric's messaging base URL (http://host:port) in the
// environment of processes `pyric exec` starts, as PYRIC_AI_BASE_URL
// names the AI endpoint; host:port alone is accepted too.
const EnvVar = "PYRIC_MESSAGING_URL"

// EnvOption is Option(os.Getenv(EnvVar)); ok is false when the variable
// is unset, so an app can fall back to production credentials.
func EnvOption() (opt option.ClientOption, ok bool, err error) {
	base := os.Getenv(EnvVar)
	if base == "" {
		return nil, false, nil
	}
	opt, err = Option(base)
	return opt, err == nil, err
}
