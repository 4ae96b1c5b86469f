// Package pubsubbench measures Pub/Sub through the official Go client
// (cloud.google.com/go/pubsub/v2) against `pyric serve`, the official
// emulator and a do-nothing Pub/Sub server (the most any server could
// reach through this client here), all in their own processes, in the
// same run, and prints each side's figures and Pyric's ratios:
// startup, batched publish, 64 concurrent publishers, delivery rate to a
// streaming pull and publish-to-receive latency.
//
//	PYRIC_BENCH=1 go test -v -run Bench ./e2e/pubsubbench
//
// Without PYRIC_BENCH=1 it runs a small smoke workload. It measures; it
// asserts nothing about timing.
package pubsubbench
