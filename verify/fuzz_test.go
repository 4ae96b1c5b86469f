package verify_test

import (
	"testing"

	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/verify"
)

// FuzzRun: any fixture the decoder accepts replays against every service
// without a panic; what goes wrong is an error or a divergence.
func FuzzRun(f *testing.F) {
	f.Add([]byte(`{"schema":"pyric.verify.fixture.v1","events":[]}`))
	f.Add([]byte(`{"schema":"pyric.verify.fixture.v1","events":[
	 {"seq":1,"kind":"request","service":"database","method":"set","path":"/users/bob","verdict":"allow","identity":{"lens":"user","uid":"bob"},"seen":{"data":{"a":{".sv":"timestamp"}}}},
	 {"seq":2,"kind":"commit","service":"database","method":"set","path":"/users/bob","identity":{"lens":"user","uid":"bob"},"before":null,"after":{"a":1}},
	 {"seq":3,"kind":"request","service":"database","method":"update","path":"ns2:/x","verdict":"deny","identity":{"lens":"unauthenticated"},"seen":{"updates":{"a/b":1,"c":null}}},
	 {"seq":4,"kind":"request","service":"database","method":"listen","path":"/","verdict":"allow","identity":{"lens":"user","uid":"u"}},
	 {"seq":5,"kind":"boundary","service":"sandbox","boundary":"reset"}],
	 "services":{"database":{"rules":{"format":"rtdb.rules.json","json":{"rules":{".read":true}}},"state":{"namespaces":{"p-default-rtdb":{"data":{"users":{"bob":{"a":1}}}}}}}}}`))
	f.Add([]byte(`{"schema":"pyric.verify.fixture.v1","events":[
	 {"seq":1,"kind":"request","service":"storage","method":"create","path":"u/a.txt","verdict":"allow","identity":{"lens":"user","uid":"u"},"seen":{"data":{"bucket":"b","name":"u/a.txt","size":3,"metadata":{"k":"v"}},"resource":{"exists":false,"data":{"bucket":"b"}}}},
	 {"seq":2,"kind":"mutation","service":"storage","method":"object_put","path":"u/a.txt","op":"object_put","current":{"bucket":"b","name":"u/a.txt","size":3}},
	 {"seq":3,"kind":"request","service":"storage","method":"list","path":"u/","verdict":"deny","identity":{"lens":"unauthenticated"}},
	 {"seq":4,"kind":"commit","service":"firestore","path":"teams/t","before":null,"after":{"m":["u"]}}],
	 "services":{"storage":{"rules":{"format":"storage.rules","source":"rules_version='2'; service firebase.storage { match /b/{b}/o { match /{p=**} { allow read, write: if firestore.get(/databases/(default)/documents/teams/t).data.m.size() > 0; } } }"},"state":{"objects":[{"bucket":"b","name":"u/a.txt","size":3,"data":"YWJj"}]}}}}`))
	db := source.NewFile("c.json", `{"rules": {".read": "auth != null", ".write": "auth.uid === 'u'"}}`)
	st := source.NewFile("c.rules", "rules_version = '2'; service firebase.storage { match /b/{b}/o { match /{p=**} { allow read: if true; allow write: if request.resource.size < 2; } } }")
	f.Fuzz(func(t *testing.T, data []byte) {
		fx, err := capture.DecodeWith(data, regs())
		if err != nil {
			return
		}
		verify.Run(fx, verify.Options{Registrations: regs()})
		verify.Run(fx, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"database": db, "storage": st}})
		for _, svc := range []string{"database", "storage", "firestore"} {
			verify.DeriveService(fx, svc, verify.Options{Registrations: regs()})
		}
		verify.DeriveService(fx, "storage", verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"storage": st}})
	})
}
