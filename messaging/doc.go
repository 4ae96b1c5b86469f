// Package messaging is the Cloud Messaging engine: a registration-token
// registry, the FCM HTTP v1 send plane's validation (one target; token,
// topic and condition syntax with a real condition parser; payload caps;
// android/apns/webpush fields; durations) with production's google.rpc
// error envelopes, topic subscriptions as the instance-id service keeps
// them, and delivery of every accepted message to a per-token inbox and
// its topic or condition fan-out.
//
// There is no Google backend behind it and no official emulator to match:
// the wire shapes come from the FCM v1 discovery document and the
// envelopes production returns. Wire adapters (server/messaging) decode
// HTTP, call the Engine with an explicit identity and encode its results
// and *Error values; no semantics live there.
//
// The Engine implements service.Service ("messaging") and persists every
// mutation to its Bucket before acknowledging it.
package messaging
