package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// APIKeyHeader carries a caller's API key.
const APIKeyHeader = "X-API-Key"

// APIKey maps a secret key to the principal who holds it.
type APIKey struct {
	Key       string
	Principal string
}

// Auth identifies callers from transport credentials only (never from the
// payload). With no keys configured every caller is "anonymous": fine on
// a loopback address, which is all the commands allow then.
type Auth struct {
	Keys []APIKey
	// JWT, when set, accepts bearer tokens it verifies.
	JWT *JWTVerifier
	// RatePerSecond and Burst limit each principal's calls (0: no limit);
	// past it a call gets HTTP 429 with Retry-After.
	RatePerSecond float64
	Burst         int

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// allow spends one call of the principal's budget.
func (a *Auth) allow(principal string) bool {
	if a == nil || a.RatePerSecond <= 0 {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.limiters == nil {
		a.limiters = map[string]*rate.Limiter{}
	}
	l, ok := a.limiters[principal]
	if !ok {
		l = rate.NewLimiter(rate.Limit(a.RatePerSecond), max(a.Burst, 1))
		a.limiters[principal] = l
	}
	return l.Allow()
}

type principalKey struct{}

// Enabled reports whether callers must authenticate.
func (a *Auth) Enabled() bool { return a != nil && (len(a.Keys) > 0 || a.JWT != nil) }

// identify finds the principal from an API key or a bearer token.
func (a *Auth) identify(apiKey, authorization string) (string, bool) {
	if apiKey != "" {
		return a.lookup(apiKey)
	}
	if a.JWT != nil {
		if tok, ok := strings.CutPrefix(authorization, "Bearer "); ok {
			p, err := a.JWT.Verify(tok)
			return p, err == nil
		}
	}
	return "", false
}

func (a *Auth) challenge() string {
	var c []string
	if len(a.Keys) > 0 {
		c = append(c, `APIKey realm="a2a", header="`+APIKeyHeader+`"`)
	}
	if a.JWT != nil {
		c = append(c, `Bearer realm="a2a"`)
	}
	return strings.Join(c, ", ")
}

// lookup finds the principal of a key, comparing in constant time.
func (a *Auth) lookup(key string) (string, bool) {
	found := ""
	for _, k := range a.Keys {
		if subtle.ConstantTimeCompare([]byte(k.Key), []byte(key)) == 1 {
			found = k.Principal
		}
	}
	return found, found != ""
}

// HTTP wraps the protocol routes: a missing or bad key gets 401 with a
// WWW-Authenticate header naming the scheme; the card, health and webhook
// routes are not wrapped.
func (a *Auth) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.Enabled() {
			if !a.allow("anonymous") {
				tooMany(w)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		p, ok := a.identify(r.Header.Get(APIKeyHeader), r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", a.challenge())
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"status":"UNAUTHENTICATED","message":"missing or invalid credentials (an API key in ` + APIKeyHeader + `, or a bearer token)"}}`))
			return
		}
		if !a.allow(p) {
			tooMany(w)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

func tooMany(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"rate limit exceeded for this principal; retry later"}}`))
}

// GRPC returns interceptors that authenticate from the x-api-key metadata.
func (a *Auth) GRPC() []grpc.ServerOption {
	if !a.Enabled() {
		return nil
	}
	check := func(ctx context.Context) (context.Context, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		first := func(k string) string {
			if v := md.Get(k); len(v) > 0 {
				return v[0]
			}
			return ""
		}
		p, ok := a.identify(first("x-api-key"), first("authorization"))
		if !ok {
			return nil, status.Error(codes.Unauthenticated, "missing or invalid credentials (metadata x-api-key, or authorization: Bearer)")
		}
		if !a.allow(p) {
			return nil, status.Error(codes.ResourceExhausted, "rate limit exceeded for this principal; retry later")
		}
		return context.WithValue(ctx, principalKey{}, p), nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, err := check(ctx)
			if err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			ctx, err := check(ss.Context())
			if err != nil {
				return err
			}
			return h(srv, &authedStream{ServerStream: ss, ctx: ctx})
		}),
	}
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *authedStream) Context() context.Context { return s.ctx }

// principalFrom is who the transport authenticated; "anonymous" without auth.
func principalFrom(ctx context.Context) Principal {
	if p, ok := ctx.Value(principalKey{}).(string); ok {
		return Principal{Owner: p}
	}
	return Principal{Owner: "anonymous"}
}

// Declare adds the scheme to the card, when callers must authenticate.
func (a *Auth) Declare(card *a2a.AgentCard) {
	if !a.Enabled() {
		return
	}
	card.SecuritySchemes = a2a.NamedSecuritySchemes{}
	if len(a.Keys) > 0 {
		card.SecuritySchemes["apiKey"] = a2a.APIKeySecurityScheme{Location: a2a.APIKeySecuritySchemeLocationHeader, Name: APIKeyHeader}
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{"apiKey": {}})
	}
	if a.JWT != nil {
		card.SecuritySchemes["bearer"] = a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{"bearer": {}})
	}
}
