package capture

import "github.com/pyric/pyric/backend"

// decode reads a fixture as the CLI does: with the services pyric
// serves checking what they recorded.
func decode(data []byte) (*Fixture, error) {
	return DecodeWith(data, backend.Services(&backend.Options{}))
}
