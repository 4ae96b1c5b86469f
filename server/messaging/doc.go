// Package messagingserver is the HTTP adapter of the Cloud Messaging
// engine (package messaging). It decodes, picks the caller and project,
// calls the engine and encodes the engine's errors as production's
// google.rpc envelopes; no semantics live here. One handler serves, on
// one port:
//
//	POST   /v1/projects/{p}/messages:send           FCM HTTP v1 send (validate_only for a dry run)
//	POST   /batch                                   the legacy multipart batch of sends (SendAll)
//	POST   /iid/v1:batchAdd, /iid/v1:batchRemove    instance-id topic management
//	GET    /emulator/v1/projects/{p}/messages       every accepted message and where it went
//	DELETE /emulator/v1/projects/{p}/messages       clear the inbox
//	GET    /emulator/v1/projects/{p}/tokens         the token registry
//	GET    /emulator/v1/projects/{p}/topics         each topic and its live subscribers: {"topics": [{"name", "tokens"}]}
//	POST   /emulator/v1/projects/{p}/tokens         mint a token: {"platform": "web"|"android"|"ios", "instance": "...", "token": "..."}
//	GET    /emulator/v1/projects/{p}/tokens/{t}     one token (topics, deleted)
//	DELETE /emulator/v1/projects/{p}/tokens/{t}     deleteToken: later sends answer UNREGISTERED
//	GET    /emulator/v1/projects/{p}/tokens/{t}/messages  what that token received (the client payload)
//	GET    /emulator/v1/projects/{p}/tokens/{t}/stream    its deliveries as server-sent events
//	GET    /emulator/v1/messaging.js                the browser shim
//	GET    /emulator/v1/firebase-admin.cjs          the Node admin SDK helper (AppOptions for firebase-admin)
//
// # How clients reach it
//
// firebase-admin-go: its FCM and instance-id hosts are fixed, so give the
// app an HTTP client whose transport rewrites them (package fcmclient):
//
//	opt, _ := fcmclient.Option("http://127.0.0.1:9599")
//	app, _ := firebase.NewApp(ctx, &firebase.Config{ProjectID: "demo-project"}, opt)
//	client, _ := app.Messaging(ctx)
//
// Send, SendDryRun, SendEach, SendEachForMulticast, SendAll (the legacy
// batch), SubscribeToTopic and UnsubscribeFromTopic then reach pyric, and
// the SDK's error predicates (IsInvalidArgument, IsUnregistered,
// IsSenderIDMismatch, IsQuotaExceeded) see production's FcmError codes.
//
// Plain HTTP: the same paths production serves, without credentials
// (any bearer is accepted as the project's service account):
//
//	curl -X POST http://127.0.0.1:9599/emulator/v1/projects/demo-project/tokens -d '{}'
//	curl -X POST http://127.0.0.1:9599/v1/projects/demo-project/messages:send \
//	     -d '{"message": {"token": "<token>", "notification": {"title": "Hi"}}}'
//	curl http://127.0.0.1:9599/emulator/v1/projects/demo-project/tokens/<token>/messages
//
// Web apps: import the shim instead of firebase/messaging; it has the
// same getMessaging / getToken / onMessage / deleteToken / isSupported
// calls, mints tokens through pyric and receives over the stream:
//
//	import * as messaging from "http://127.0.0.1:9599/emulator/v1/messaging.js";
//
// The Node admin SDK (firebase-admin): its FCM and instance-id hosts are
// fixed and it signs in to Google, but two documented AppOptions redirect
// it: an httpAgent that connects those two hosts to pyric (every other
// host as usual) and a Credential whose token is "owner". The served
// helper returns both; sendEach and sendEachForMulticast open an HTTP/2
// session of their own (no agent), so the app also turns on the SDK's
// HTTP/1.1 transport:
//
//	curl -o pyric-firebase-admin.cjs http://127.0.0.1:9599/emulator/v1/firebase-admin.cjs
//
//	const { messagingOptions } = require("./pyric-firebase-admin.cjs");
//	const app = initializeApp({ projectId: "demo-project", ...messagingOptions("http://127.0.0.1:9599") });
//	const messaging = getMessaging(app);
//	messaging.enableLegacyHttpTransport();
//
// send, sendEach, sendEachForMulticast, subscribeToTopic and
// unsubscribeFromTopic then reach pyric with production's error codes
// (messaging/invalid-argument, messaging/registration-token-not-registered,
// messaging/mismatched-credential, messaging/message-rate-exceeded,
// messaging/invalid-registration-token).
package messagingserver
