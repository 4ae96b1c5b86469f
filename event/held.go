package event

import "encoding/json"

// DecodeHeld decodes v, a Mutation's Current, into out through its
// JSON: a live event's value of the engine's own type, or a held event's
// read back from an outbox after a crash (its JSON, or its OutboxForm's,
// decoded into maps), reach a consumer as the same out.
func DecodeHeld(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
