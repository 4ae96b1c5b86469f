// Package trigger decides which Cloud Functions a committed change fires
// and builds the exact request each one receives, as production (and,
// where it agrees, the Emulator Suite) delivers it: CloudEvents for v2
// functions, the legacy {data, context} events for v1. It covers
// Firestore, the Realtime Database, Cloud Storage, Auth, Pub/Sub and
// Eventarc custom event triggers.
//
// A Function is what the dispatcher needs from one discovered endpoint
// (firebase-functions' `__endpoint` manifest entry: platform and
// eventTrigger). Match and Payloads are pure: given a Function and one
// event of package event they say whether it fires, with which params,
// and produce the JSON bodies. The Dispatcher taps the event bus
// losslessly, matches every change against the current functions,
// and calls an injected deliver function in commit order per function,
// retrying when the function asks for retries.
package trigger
