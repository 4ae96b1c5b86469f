package firestore

import (
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// foundResponse is a BatchGetDocuments response with its Found result,
// allocated as one (a get's response is two allocations otherwise).
type foundResponse struct {
	r     pb.BatchGetDocumentsResponse
	found pb.BatchGetDocumentsResponse_Found
}

// newFoundResponse is the response reading d at rt.
func newFoundResponse(d *pb.Document, rt *timestamppb.Timestamp) *pb.BatchGetDocumentsResponse {
	x := &foundResponse{found: pb.BatchGetDocumentsResponse_Found{Found: d}}
	x.r.ReadTime = rt
	x.r.Result = &x.found
	return &x.r
}
