package backend_test

import (
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

// The engines with rules offer the service.LiveRules capability (the
// sandbox's Firestore service is checked in studio's
// TestToyLiveRulesOnHome).
var (
	_ service.LiveRules = (*storage.Engine)(nil)
	_ service.LiveRules = (*database.Database)(nil)
)
