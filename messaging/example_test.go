package messaging_test

import (
	"fmt"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
)

// A token is minted, subscribed to a topic, and a condition send reaches
// it; a malformed condition gets production's envelope.
func ExampleEngine_Send() {
	eng, _ := messaging.NewEngine(service.Env{Project: "demo-project"}, messaging.Options{})
	admin := identity.AdminIdentity()
	tok, _ := eng.MintToken(admin, "demo-project", messaging.MintRequest{Platform: messaging.PlatformWeb})
	eng.Subscribe(admin, "/topics/weather", []string{tok.Token})

	req, _ := messaging.DecodeSendRequest([]byte(`{"message": {
		"condition": "'weather' in topics && !('muted' in topics)",
		"notification": {"title": "Rain at noon"}}}`))
	if _, err := eng.Send(admin, "demo-project", req); err != nil {
		fmt.Println(err)
	}
	inbox, _ := eng.Inbox("demo-project", tok.Token)
	fmt.Println(len(inbox), inbox[0].Payload.Notification["title"])

	bad, _ := messaging.DecodeSendRequest([]byte(`{"message": {"condition": "'weather' in topics &&"}}`))
	_, err := eng.Send(admin, "demo-project", bad)
	e := err.(*messaging.Error)
	fmt.Println(e.HTTP(), e.Status(), e.FcmCode, e.Violations[0].Field)
	// Output:
	// 1 Rain at noon
	// 400 INVALID_ARGUMENT INVALID_ARGUMENT message.condition
}
