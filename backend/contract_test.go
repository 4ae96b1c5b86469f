package backend_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/functions"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
)

// contractSamples holds, per service, a state its Restore accepts with
// data in it: the shared contract suite's input. A registration without
// one fails TestServiceContract, so a new service adds its sample here.
var contractSamples = map[string]string{
	backend.Firestore: `{"documents": {"users/alice": {"name": "Alice", "n": 1, "tags": ["a", "b"]}},
		"databases": {"projects/demo-pyric/databases/other": {"c/d": {"x": true}}}}`,
	backend.Auth: `{"version": 1, "projects": {"demo-pyric": {"config": {"signIn": {"allowDuplicateEmails": false}},
		"users": [{"localId": "u1", "email": "a@example.com", "emailVerified": true, "createdAt": "1767225600008",
		"providerUserInfo": [{"providerId": "password", "federatedId": "a@example.com", "email": "a@example.com", "rawId": "a@example.com"}]}]}}}`,
	backend.Database: `{"namespaces": {"demo-pyric-default-rtdb": {"data": {"users": {"alice": {"age": 3, ".priority": 2}}}},
		"other": {"data": {"x": "y"}}}}`,
	backend.Storage: `{"objects": [{"bucket": "demo-pyric.appspot.com", "name": "a/b c.txt", "contentType": "text/plain",
		"metadata": {"k": "v"}, "data": "aGVsbG8="}]}`,
	backend.Messaging: `{"lastId": 0, "tokens": [{"token": "tok-1", "project": "demo-pyric", "platform": "web", "createdAt": "2026-01-01T00:00:00.01Z"}], "messages": []}`,
	backend.AI:        `{"seq": 0, "projects": {"demo-pyric": {"script": [{"text": "hi"}]}}}`,
	backend.PubSub:    `{"lastId": "0", "topics": [{"name": "projects/demo-pyric/topics/orders"}], "subscriptions": [], "snapshots": []}`,
	// Functions holds no data: its functions are code (see stateless).
	backend.Functions: `{}`,
}

// stateless are the services whose one state is their sample.
var stateless = map[string]bool{backend.Functions: true}

// contractOptions turn on every service the backend can register:
// Functions only registers for an app with codebases.
var contractOptions = backend.Options{Functions: backend.FunctionsOptions{Options: functions.Options{Codebases: []functions.Codebase{{Name: "default", Source: "."}}}}}

// TestServiceContract runs the shared service-contract suite on every
// registration the backend makes.
func TestServiceContract(t *testing.T) {
	regs := backend.Services(&contractOptions)
	for _, reg := range regs {
		t.Run(reg.Name, func(t *testing.T) {
			sample, ok := contractSamples[reg.Name]
			if !ok {
				t.Fatalf("no contract sample for the %s service: add one to contractSamples", reg.Name)
			}
			servicetest.Run(t, reg, servicetest.Options{Sample: json.RawMessage(sample), Stateless: stateless[reg.Name]})
		})
	}
	// Every service with a registration runs the suite: the endpoints
	// without one (Hosting, Tasks, Eventarc) hold no state of their own.
	for name := range contractSamples {
		if !slices.ContainsFunc(regs, func(r service.Registration) bool { return r.Name == name }) {
			t.Errorf("%s has a contract sample but the backend does not register it", name)
		}
	}
}
