package messagingserver_test

import (
	"bufio"
	"bytes"
	"github.com/pyric/pyric/identity"
)

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

var admin = identity.AdminIdentity()
