// Package storagebench measures Cloud Storage through the official Go
// client (cloud.google.com/go/storage, the GCS JSON API through
// STORAGE_EMULATOR_HOST) against `pyric serve` in its default mode
// (durable), fake-gcs-server (the Go ecosystem's GCS fake, built from
// the pinned module in ./peer, its in-memory backend) and a do-nothing
// GCS server that stores no bytes (the most any server could reach
// through this client here), each in its own process, in the same run,
// and prints each side's figures and Pyric's ratios: small-object
// upload, download, metadata and list rates, 64 concurrent clients, and
// large-object upload and download throughput.
//
//	PYRIC_BENCH=1 go test -v -run Bench ./e2e/storagebench
//
// With PYRIC_BENCH_PROFILE=DIR it also writes pyric serve's CPU profile
// of each workload to DIR (profileEnv), to see where its time goes.
//
// Without PYRIC_BENCH=1 it runs a small smoke workload (so the harness
// cannot rot in CI). It measures; it asserts nothing about timing.
package storagebench
