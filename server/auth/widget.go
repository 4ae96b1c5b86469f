package authserver

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"

	"github.com/pyric/pyric/auth"
)

// The fake IdP sign-in flow of the web SDK's signInWithPopup and
// signInWithRedirect under connectAuthEmulator:
//
//   - the SDK opens /emulator/auth/iframe (hidden, in the app's page) and
//     talks to it with Google's gapi.iframes library, which that page loads
//     from apis.google.com as production's /__/auth/iframe does;
//   - the popup (or the redirected tab) shows /emulator/auth/handler, an
//     account chooser: an identity of the provider already known to the
//     emulator, or a new one typed in;
//   - the chosen identity becomes an auth event whose urlResponse carries
//     providerId and id_token (and, for saml.* providers, a SAMLResponse
//     naming the email), which the SDK posts to accounts:signInWithIdp.
//     A popup hands the event to the iframe of the window that opened it; a
//     redirect stores it in sessionStorage (the iframe, same origin and
//     site, reads it when the app loads again) and goes back to redirectUrl.
//
// The query parameters, the event's shape and the storage key are the
// contract of the SDK and of firebase-tools' emulator; the pages are
// pyric's own and load nothing from the network themselves.

// idpChoice is one account the chooser offers.
type idpChoice struct {
	DisplayName, Email, PhotoURL string
	// Claims is the fake ID token the choice signs in with: strict JSON
	// claims, as signInWithIdp accepts them, URL-encoded (the page's
	// data-id-token, as firebase-tools' page has it).
	Claims string
}

// idpWidget serves GET /emulator/auth/handler.
func (h *Handler) idpWidget(req *request) {
	q := req.r.URL.Query()
	apiKey, providerID := q.Get("apiKey"), q.Get("providerId")
	if apiKey == "" || providerID == "" {
		api.JSON(req.w, 400, map[string]any{"authEmulator": map[string]any{"error": "missing apiKey or providerId query parameters"}})
		return
	}
	req.call.Project = h.projectOfKey(apiKey)
	req.call.Tenant = q.Get("tenantId")
	if req.call.Tenant == "" {
		req.call.Tenant = q.Get("tid")
	}
	infos, err := h.eng.IdpAccounts(req.call, providerID)
	if err != nil {
		writeError(req.w, err)
		return
	}
	choices := make([]idpChoice, len(infos))
	for i, pi := range infos {
		choices[i] = idpChoice{DisplayName: pi.DisplayName, Email: pi.Email, PhotoURL: pi.PhotoURL, Claims: fakeClaims(pi)}
	}
	var buf bytes.Buffer
	if err := widgetPage.Execute(&buf, map[string]any{"Provider": providerID, "Accounts": choices}); err != nil {
		writeError(req.w, auth.Internal("INTERNAL_ERROR : rendering the sign-in page: "+err.Error()))
		return
	}
	writeHTML(req.w, buf.Bytes())
}

// idpIframe serves GET /emulator/auth/iframe.
func (h *Handler) idpIframe(req *request) { writeHTML(req.w, []byte(iframePage)) }

func writeHTML(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// fakeClaims are the claims of an existing identity, with the fields
// signInWithIdp reads (sub, email, email_verified, name, screen_name,
// picture) and the empty iss/aud/exp/iat the emulator's tokens carry.
func fakeClaims(pi auth.ProviderUserInfo) string {
	b, _ := json.Marshal(map[string]any{"sub": pi.RawID, "iss": "", "aud": "", "exp": 0, "iat": 0,
		"name": pi.DisplayName, "screen_name": pi.ScreenName, "email": pi.Email, "email_verified": true, "picture": pi.PhotoURL})
	return url.PathEscape(string(b))
}

// widgetPage is the account chooser. Its element ids and classes
// (#add-account-button, .js-reuse-account with data-id-token, #email-input,
// #display-name-input, #screen-name-input, #profile-photo-input,
// #autogen-button, #sign-in, #back-button) are the ones firebase-tools'
// page has, so browser tests written against that emulator drive this one
// unchanged.
var widgetPage = template.Must(template.New("widget").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in with {{.Provider}} (Auth emulator)</title>
<style>
body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #202124; }
main { max-width: 480px; margin: 24px auto; padding: 0 20px; }
h1 { font-size: 22px; font-weight: 500; }
.note { color: #5f6368; font-size: 13px; }
ul { list-style: none; padding: 0; }
li { margin: 6px 0; display: flex; align-items: center; gap: 12px; padding: 10px 12px;
  border: 1px solid #dadce0; border-radius: 6px; background: #fff; cursor: pointer; }
li:hover, li:focus { background: #f1f3f4; }
li button { border: 0; background: none; font: inherit; cursor: pointer; padding: 0; }
.avatar { width: 32px; height: 32px; border-radius: 50%; background: #c5c5c5; flex-shrink: 0; object-fit: cover; }
.who { display: flex; flex-direction: column; }
.email { color: #5f6368; font-size: 13px; }
form label { display: block; margin: 10px 0 2px; font-size: 13px; color: #5f6368; }
form input { width: 100%; box-sizing: border-box; padding: 8px; font: inherit; border: 1px solid #dadce0; border-radius: 4px; }
.actions { display: flex; justify-content: space-between; margin-top: 16px; }
.error { color: #c62828; font-size: 13px; }
</style>
</head>
<body>
<main>
<h1 id="title">Sign in with <span class="js-provider-id">{{.Provider}}</span></h1>
<p class="note">This is the Auth emulator's stand-in for {{.Provider}}: no real account is asked for.</p>
<section id="accounts-list">
{{- if .Accounts}}
<p class="js-accounts-help-text">Choose an account the emulator already knows, or add a new one:</p>
{{- else}}
<p class="js-accounts-help-text">No {{.Provider}} accounts exist in the emulator yet.</p>
{{- end}}
<ul>
{{- range .Accounts}}
<li class="js-reuse-account" tabindex="0" data-id-token="{{.Claims}}">
{{- if .PhotoURL}}<img class="avatar" alt="" src="{{.PhotoURL}}">{{else}}<span class="avatar"></span>{{end -}}
<span class="who"><span class="name">{{if .DisplayName}}{{.DisplayName}}{{else}}(No display name){{end}}</span><span class="email">{{.Email}}</span></span></li>
{{- end}}
<li id="add-account-button" class="js-new-account" tabindex="0"><button type="button">+ Add new account</button></li>
</ul>
</section>
<section id="add-user" hidden>
<button type="button" id="autogen-button">Auto-generate user information</button>
<form id="main-form">
<label for="email-input">Email</label><input id="email-input" type="text" autocomplete="off">
<span class="error" id="email-error"></span>
<label for="display-name-input">Display name (optional)</label><input id="display-name-input" type="text" autocomplete="off">
<label for="screen-name-input">Screen name (optional)</label><input id="screen-name-input" type="text" autocomplete="off">
<label for="profile-photo-input">Profile photo URL (optional)</label><input id="profile-photo-input" type="text" autocomplete="off">
<div class="actions"><button type="button" id="back-button">Back</button><button type="submit" id="sign-in">Sign in with {{.Provider}}</button></div>
</form>
</section>
<p class="error" id="failure" hidden></p>
</main>
<script>
(function () {
  'use strict';
  var q = new URLSearchParams(location.search);
  var apiKey = q.get('apiKey'), appName = q.get('appName'), authType = q.get('authType') || '';
  var providerId = q.get('providerId'), redirectUrl = q.get('redirectUrl'), eventId = q.get('eventId');
  var tenantId = q.get('tid') || q.get('tenantId');
  var storageKey = apiKey + ':' + appName;
  var $ = function (id) { return document.getElementById(id); };

  function fail(msg) {
    $('accounts-list').hidden = true;
    $('add-user').hidden = true;
    $('failure').textContent = msg;
    $('failure').hidden = false;
    throw new Error('Auth emulator: ' + msg);
  }
  if (q.get('error')) fail(q.get('error'));
  if (!appName) fail('Missing the appName query parameter: this page serves the web SDK\'s popup and redirect flows.');

  // finish turns the chosen identity into the SDK's auth event.
  function finish(claims) {
    var url = location.origin + location.pathname + '?providerId=' + encodeURIComponent(providerId) +
      '&id_token=' + encodeURIComponent(JSON.stringify(claims));
    if (/^saml\./.test(providerId)) {
      url += '&SAMLResponse=' + encodeURIComponent(JSON.stringify({ assertion: { subject: { nameId: claims.email } } }));
    }
    var ev = { type: authType, eventId: eventId, urlResponse: url, sessionId: 'unused-by-the-emulator',
      postBody: '', tenantId: tenantId, error: null };
    if (/popup/i.test(authType)) return relay(ev);
    if (redirectUrl) {
      sessionStorage.setItem('firebase:redirectEvent:' + storageKey, JSON.stringify(ev));
      location.assign(redirectUrl);
      return;
    }
    fail('Only the web popup and redirect flows are served here; use signInWithCredential elsewhere.');
  }

  // relay hands a popup's event to the emulator iframe of the opener.
  function relay(ev) {
    var sent = false, frames = window.opener ? window.opener.frames : [];
    for (var i = 0; i < frames.length; i++) {
      try {
        var f = frames[i], p = new URLSearchParams(f.location.search);
        if (f.location.origin === location.origin && p.get('apiKey') === apiKey && p.get('appName') === appName) {
          f.postMessage({ eventType: 'sendAuthEvent', data: { authEvent: ev, storageKey: storageKey } }, location.origin);
          sent = true;
        }
      } catch (e) { /* a frame of another origin */ }
    }
    if (!sent) fail('The window that opened this one has no Auth emulator frame to receive the sign-in.');
  }

  function rawId() {
    var b = new Uint8Array(40), s = '';
    crypto.getRandomValues(b);
    for (var i = 0; i < b.length; i++) s += String(b[i] % 10);
    return s;
  }

  document.querySelectorAll('.js-reuse-account').forEach(function (el) {
    var pick = function () { finish(JSON.parse(decodeURIComponent(el.dataset.idToken))); };
    el.addEventListener('click', pick);
    el.addEventListener('keydown', function (e) { if (e.key === 'Enter') pick(); });
  });
  function showForm(on) { $('add-user').hidden = !on; $('accounts-list').hidden = on; if (on) $('email-input').focus(); }
  $('add-account-button').addEventListener('click', function () { showForm(true); });
  $('back-button').addEventListener('click', function () { showForm(false); });

  function valid() {
    var v = $('email-input').value, msg = !v ? 'Email required' : v.indexOf('@') < 0 ? 'Missing "@"' : '';
    $('email-error').textContent = msg;
    $('sign-in').disabled = msg !== '';
    return msg === '';
  }
  $('email-input').addEventListener('input', valid);
  $('autogen-button').addEventListener('click', function () {
    var words = ['otter', 'heron', 'maple', 'cedar', 'lynx', 'quartz', 'fern', 'comet', 'basalt', 'wren'];
    var pick = function () { return words[Math.floor(Math.random() * words.length)]; };
    var given = pick(), family = pick(), cap = function (w) { return w[0].toUpperCase() + w.slice(1); };
    $('email-input').value = given + '.' + family + '.' + Math.floor(Math.random() * 1000) + '@example.com';
    $('display-name-input').value = cap(given) + ' ' + cap(family);
    $('screen-name-input').value = family + '_' + given;
    valid();
  });
  $('main-form').addEventListener('submit', function (e) {
    e.preventDefault();
    if (!valid()) return;
    var val = function (id) { return $(id).value || undefined; };
    finish({ sub: rawId(), iss: '', aud: '', exp: 0, iat: 0, name: val('display-name-input'), screen_name: val('screen-name-input'),
      email: val('email-input'), email_verified: true, picture: val('profile-photo-input') });
  });
})();
</script>
</body>
</html>
`))

// iframePage is the SDK's hidden helper frame: it answers the SDK's
// webStorageSupport probe and forwards auth events (from a popup's
// postMessage, or stored by a redirect) to the app over gapi.iframes.
const iframePage = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Auth emulator helper frame</title></head>
<body>
<script>
(function () {
  'use strict';
  var q = new URLSearchParams(location.search);
  var apiKey = q.get('apiKey'), appName = q.get('appName');
  var storageKey = apiKey + ':' + appName, stored = 'firebase:redirectEvent:' + storageKey;
  var parentFrame = null;
  if (!apiKey || !appName) throw new Error('Auth emulator: the helper frame needs apiKey and appName');

  function send(ev) {
    parentFrame.send('authEvent', { type: 'authEvent', authEvent: ev || { type: 'unknown', error: { code: 'auth/no-auth-event' } } },
      function (responses) {
        if (!responses || !responses.length || responses[responses.length - 1].status !== 'ACK') {
          console.error('Auth emulator: the app did not acknowledge the auth event');
        }
      }, gapi.iframes.CROSS_ORIGIN_IFRAMES_FILTER);
  }

  window.addEventListener('message', function (e) {
    var m = e.data;
    if (e.origin !== location.origin || !m || m.eventType !== 'sendAuthEvent' || !m.data || m.data.storageKey !== storageKey) return;
    if (parentFrame) send(m.data.authEvent);
    else sessionStorage.setItem(stored, JSON.stringify(m.data.authEvent));
  });

  window.gapi_onload = function () {
    gapi.load('gapi.iframes', {
      timeout: 10000,
      ontimeout: function () { console.error('Auth emulator: gapi.iframes did not load from apis.google.com'); },
      callback: function () {
        parentFrame = gapi.iframes.getContext().getParentIframe();
        parentFrame.register('webStorageSupport', function () { return { status: 'ACK', webStorageSupport: true }; },
          gapi.iframes.CROSS_ORIGIN_IFRAMES_FILTER);
        var ev = null, s = sessionStorage.getItem(stored);
        sessionStorage.removeItem(stored);
        if (s) { try { ev = JSON.parse(s); } catch (err) { ev = null; } }
        send(ev);
      }
    });
  };
})();
</script>
<script src="https://apis.google.com/js/api.js"></script>
</body>
</html>
`
