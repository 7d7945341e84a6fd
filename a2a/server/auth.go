package server

import (
	"context"
	"crypto/subtle"
	"net/http"
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
func (a *Auth) Enabled() bool { return a != nil && len(a.Keys) > 0 }

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
		p, ok := a.lookup(r.Header.Get(APIKeyHeader))
		if !ok {
			w.Header().Set("WWW-Authenticate", `APIKey realm="a2a", header="`+APIKeyHeader+`"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"status":"UNAUTHENTICATED","message":"missing or invalid API key in the ` + APIKeyHeader + ` header"}}`))
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
		vals := md.Get("x-api-key")
		if len(vals) == 0 {
			return nil, status.Error(codes.Unauthenticated, "missing API key (metadata x-api-key)")
		}
		p, ok := a.lookup(vals[0])
		if !ok {
			return nil, status.Error(codes.Unauthenticated, "invalid API key")
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
	card.SecuritySchemes = a2a.NamedSecuritySchemes{
		"apiKey": a2a.APIKeySecurityScheme{Location: a2a.APIKeySecuritySchemeLocationHeader, Name: APIKeyHeader},
	}
	card.SecurityRequirements = a2a.SecurityRequirementsOptions{{"apiKey": {}}}
}
