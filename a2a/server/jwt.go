package server

import (
	"crypto"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// JWTVerifier checks bearer tokens (with golang-jwt): the signature with a
// configured key, the expiry (required), and the issuer and audience when
// set. The principal is the subject claim.
type JWTVerifier struct {
	// HMACSecret verifies HS256 tokens; PublicKey verifies RS256/ES256 ones.
	HMACSecret []byte
	PublicKey  crypto.PublicKey
	Issuer     string
	Audience   string
}

// Verify returns the token's principal.
func (v *JWTVerifier) Verify(token string) (string, error) {
	opts := []jwt.ParserOption{jwt.WithExpirationRequired(), jwt.WithValidMethods([]string{"HS256", "RS256", "ES256"})}
	if v.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.Issuer))
	}
	if v.Audience != "" {
		opts = append(opts, jwt.WithAudience(v.Audience))
	}
	parsed, err := jwt.Parse(token, func(t *jwt.Token) (any, error) {
		switch t.Method.(type) {
		case *jwt.SigningMethodHMAC:
			if len(v.HMACSecret) == 0 {
				return nil, fmt.Errorf("no HMAC secret configured")
			}
			return v.HMACSecret, nil
		default:
			if v.PublicKey == nil {
				return nil, fmt.Errorf("no public key configured")
			}
			return v.PublicKey, nil
		}
	}, opts...)
	if err != nil {
		return "", fmt.Errorf("bearer token: %w", err)
	}
	sub, err := parsed.Claims.GetSubject()
	if err != nil || sub == "" {
		return "", fmt.Errorf("bearer token has no subject")
	}
	return sub, nil
}
