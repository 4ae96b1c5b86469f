package auth

// spaceExtra is the part of a space's snapshot beyond users and OOB codes.
type spaceExtra struct {
	VerificationCodes []*VerificationCode           `json:"verificationCodes,omitempty"`
	TemporaryProofs   map[string]TemporaryProof     `json:"temporaryProofs,omitempty"`
	TOTP              map[string]TOTPRecord         `json:"totp,omitempty"`
	OAuthIdpConfigs   map[string]*OAuthIdpConfig    `json:"oauthIdpConfigs,omitempty"`
	SAMLConfigs       map[string]*InboundSAMLConfig `json:"inboundSamlConfigs,omitempty"`
}

func (s *space) snapExtra() spaceExtra {
	var x spaceExtra
	for _, c := range s.codes {
		v := *c
		x.VerificationCodes = append(x.VerificationCodes, &v)
	}
	if len(s.proofs) > 0 {
		x.TemporaryProofs = map[string]TemporaryProof{}
		for k, v := range s.proofs {
			x.TemporaryProofs[k] = v
		}
	}
	if len(s.totp) > 0 {
		x.TOTP = map[string]TOTPRecord{}
		for k, v := range s.totp {
			x.TOTP[k] = v
		}
	}
	x.OAuthIdpConfigs, x.SAMLConfigs = s.snapIdps()
	return x
}

func (s *space) fillExtra(x spaceExtra) {
	for _, c := range x.VerificationCodes {
		if c == nil {
			continue
		}
		v := *c
		v.seq = s.codeSeq
		s.codeSeq++
		s.codes = append(s.codes, &v)
	}
	for k, v := range x.TemporaryProofs {
		s.proofs[k] = v
	}
	for k, v := range x.TOTP {
		s.totp[k] = v
	}
	s.fillIdps(x.OAuthIdpConfigs, x.SAMLConfigs)
}
