// Package pubsub is the wire adapter of the Pub/Sub engine: the
// google.pubsub.v1 gRPC API (Publisher, Subscriber) from the official
// protos, and the REST/JSON API the official emulator serves on the same
// port (HTTP/1.1 requests go to the REST handler, HTTP/2 connections to
// gRPC, through server.Port). Each RPC decodes its request, calls the
// engine and encodes the result or the engine error's code; REST routes
// call the same RPC methods with protojson bodies, so the two transports
// cannot drift.
package pubsub
