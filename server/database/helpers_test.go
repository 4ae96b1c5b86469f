package databaseserver_test

import "github.com/pyric/pyric/identity"

func identityAdmin() identity.Identity { return identity.AdminIdentity() }
