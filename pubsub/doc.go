// Package pubsub is the Cloud Pub/Sub engine: topics, subscriptions and
// snapshots with production's names and limits; publish with attributes
// and ordering keys; delivery by pull, streaming pull and push with
// leases (ack deadlines), acknowledgement, nack and redelivery, ordering
// per key, subscription filters (filter.go, the filter language),
// dead-letter topics with max delivery attempts, retry policies,
// retained acknowledged messages and Seek to a snapshot or a time.
//
// Every subscription's backlog lives in the service's Bucket (one value
// per publish and subscription, written before the publish is
// acknowledged; acknowledgements of part of it are a bitmap beside it); memory holds a bounded window of it, refilled from the
// Bucket as the window drains, so a large backlog, a slow push endpoint
// or a client that never acknowledges cannot grow memory without bound
// nor stall other subscriptions. With no Bucket (an in-memory sandbox)
// the engine keeps its records in an ordered in-memory bucket of its
// own, bounded by Options.MaxMemoryBytes.
//
// The official emulator (0.8.20) is the reference for codes and words;
// where it falls short of production (filters it never applies, detach it
// does not implement, ack deadlines under 10 s it accepts) the engine
// follows production. Wire adapters (server/pubsub) translate the
// google.pubsub.v1 gRPC and REST APIs to Engine calls; no semantics live
// there.
//
// The Engine implements service.Service ("pubsub").
package pubsub
