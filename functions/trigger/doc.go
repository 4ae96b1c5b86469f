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
//
// Delivery is at least once, across a kill -9 of pyric too: the engines
// hold the changes the dispatcher Wants in the sandbox's outbox with
// their commits (service.Outbox), the dispatcher takes each in the same
// Journal record as the deliveries it matched, and a start matches what
// an earlier run held and never took (Resume) and makes what it matched
// and never settled (Redeliver, with the journaled payload, so the event
// id is the first attempt's). A held event comes back as decoded JSON,
// so the payload builders read an engine's record through the decoders
// of this package (decodeUser, decodeObject, customEventsOf) or its
// package's (pubsub.PublishEventOf), never by type assertion alone.
package trigger
