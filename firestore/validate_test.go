package firestore

import (
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

func TestDocumentSize(t *testing.T) {
	t.Parallel()
	// Production's documented example: users/jeff/tasks/my_task_id has a
	// name of 6+5+6+11+16 = 44 bytes.
	if got := nameSize("users/jeff/tasks/my_task_id"); got != 44 {
		t.Errorf("nameSize = %d, want 44", got)
	}
	fields := map[string]*pb.Value{"type": String("Personal"), "done": Bool(false), "priority": Int(1), "description": String("Learn Cloud Firestore")}
	// Documented total: 44 + 147 - ... = 147 bytes for this task document.
	if got := DocumentSize("users/jeff/tasks/my_task_id", fields); got != 147 {
		t.Errorf("DocumentSize = %d, want 147", got)
	}
}
