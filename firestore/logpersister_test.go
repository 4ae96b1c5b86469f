package firestore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/sandbox/service"
)

// appendsLog is a service.Log that keeps a copy of every Append.
type appendsLog struct {
	spaces  []string
	appends [][]service.LogChange
}

func (l *appendsLog) Append(space string, changes []service.LogChange) error {
	l.spaces = append(l.spaces, space)
	l.appends = append(l.appends, slices.Clone(changes))
	return nil
}

func (l *appendsLog) Load(func(string, []service.LogChange) error) error { return nil }

// TestLogPersisterReusesNothingVisible checks that the slice logPersister
// builds its appends in, kept from one commit for the next, carries
// nothing of an earlier commit into a later one (a longer commit with
// outbox entries, then shorter ones, a delete among them), and that each
// append names its database's space, when commits alternate between
// databases too.
func TestLogPersisterReusesNothingVisible(t *testing.T) {
	log := &appendsLog{}
	p := logPersister{log}
	other := DatabaseName{Project: "p", Database: "other"}
	doc := &pb.Document{Name: name("a/1")}
	type commit struct {
		db      DatabaseName
		changes []Change
		held    []fsstore.Held
		want    []service.LogChange
	}
	commits := []commit{
		{testDB, []Change{{Path: "a/1", Doc: doc, Data: []byte("one")}, {Path: "a/2", Doc: doc, Data: []byte("two")}, {Path: "a/3", Doc: doc, Data: []byte("three")}},
			[]fsstore.Held{{Key: "h1", Value: []byte("held")}},
			[]service.LogChange{{Key: "a/1", Value: []byte("one")}, {Key: "a/2", Value: []byte("two")}, {Key: "a/3", Value: []byte("three")}, {Key: "h1", Value: []byte("held"), Outbox: true}}},
		{other, []Change{{Path: "b/1"}}, nil, []service.LogChange{{Key: "b/1"}}},
		{testDB, []Change{{Path: "a/4", Doc: doc, Data: []byte("four")}, {Path: "a/5"}}, nil,
			[]service.LogChange{{Key: "a/4", Value: []byte("four")}, {Key: "a/5"}}},
		{testDB, []Change{{Path: "a/6", Doc: doc, Data: []byte("six")}}, nil, []service.LogChange{{Key: "a/6", Value: []byte("six")}}},
	}
	for i, c := range commits {
		if err := p.CommitHeld(c.db, time.Time{}, c.changes, c.held); err != nil {
			t.Fatal(err)
		}
		if got, want := log.spaces[i], c.db.String(); got != want {
			t.Errorf("commit %d: space %q, want %q", i, got, want)
		}
		if got := log.appends[i]; fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("commit %d appended %v\nwant %v", i, got, c.want)
		}
	}
}
