package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/console"
)

// Paths of the bindings under the frontend's base URL.
const (
	JSONRPCPath = "/jsonrpc"
	RESTPath    = "/rest"
)

// MaxBodyBytes bounds a request body: a larger declared one gets 413 at once,
// a larger undeclared one is cut off there and fails to parse.
const MaxBodyBytes = 2 << 20

// CardOptions describe the agent for its card.
type CardOptions struct {
	Name        string
	Description string
	Version     string
	// BaseURL is how clients reach the frontend, such as http://127.0.0.1:8080.
	BaseURL string
	// GRPCAddr, when set, is the host:port of the gRPC binding.
	GRPCAddr string
	Skills   []a2a.AgentSkill
}

// NewCard builds the public Agent Card: one interface per binding served,
// and only the capabilities that are built.
func NewCard(o CardOptions) *a2a.AgentCard {
	base := strings.TrimRight(o.BaseURL, "/")
	ifaces := []*a2a.AgentInterface{
		a2a.NewAgentInterface(base+JSONRPCPath, a2a.TransportProtocolJSONRPC),
		a2a.NewAgentInterface(base+RESTPath, a2a.TransportProtocolHTTPJSON),
	}
	if o.GRPCAddr != "" {
		ifaces = append(ifaces, a2a.NewAgentInterface(o.GRPCAddr, a2a.TransportProtocolGRPC))
	}
	return &a2a.AgentCard{
		Name:                o.Name,
		Description:         o.Description,
		Version:             o.Version,
		SupportedInterfaces: ifaces,
		Capabilities:        a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:   []string{"text/plain", "application/json"},
		DefaultOutputModes:  []string{"text/plain", "application/json"},
		Skills:              o.Skills,
	}
}

// cardHandler serves the card with caching headers: an ETag from its content
// and a short max-age, and 304 for a client that has it already.
func cardHandler(card *a2a.AgentCard) (http.Handler, error) {
	body, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("marshal agent card: %w", err)
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	inner := a2asrv.NewStaticAgentCardHandler(card)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("ETag", etag)
		if r.Method == http.MethodGet && r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		inner.ServeHTTP(w, r)
	}), nil
}

// NewHTTPHandler routes the card, the JSON-RPC and HTTP+JSON bindings and a
// health check to the request handler.
// Idle streams get an SSE comment every keepAlive.
func NewHTTPHandler(h *Handler, card *a2a.AgentCard, auth *Auth, keepAlive time.Duration, log *slog.Logger) (http.Handler, error) {
	ch, err := cardHandler(card)
	if err != nil {
		return nil, err
	}
	opts := []a2asrv.TransportOption{
		a2asrv.WithTransportPanicHandler(func(r any) error {
			log.Error("panic serving a request", "panic", fmt.Sprint(r))
			return a2a.NewError(a2a.ErrInternalError, "internal error")
		}),
		a2asrv.WithTransportKeepAlive(keepAlive),
	}
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, ch)
	vh := Versioned(h)
	mux.Handle(JSONRPCPath, auth.HTTP(versionQuery(limitBody(sseIDs(a2asrv.NewJSONRPCHandler(vh, opts...))))))
	rest := restWithTenants(a2asrv.NewRESTHandler(vh, opts...), a2asrv.NewTenantRESTHandler("/{*}", vh, opts...))
	mux.Handle(RESTPath+"/", auth.HTTP(versionQuery(http.StripPrefix(RESTPath, limitBody(sseIDs(rest))))))
	mux.Handle("POST "+activities.WebhookPath+"{id}", limitBody(http.HandlerFunc(h.ServeWebhook)))
	mux.Handle("GET /console/", console.Handler())
	mux.Handle("GET /console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	mux.HandleFunc("GET /readyz", h.Ready)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux, nil
}

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = fmt.Fprintf(w, `{"error":{"code":413,"status":"INVALID_ARGUMENT","message":"request body larger than %d bytes"}}`, MaxBodyBytes)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// restWithTenants serves the HTTP+JSON routes, also under a tenant prefix
// (/{tenant}/message:send, /{tenant}/tasks/{id}, ...). A first path segment
// that is one of the binding's own roots is not a tenant.
func restWithTenants(plain, tenanted http.Handler) http.Handler {
	roots := map[string]bool{"message:send": true, "message:stream": true, "tasks": true, "extendedAgentCard": true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); roots[first] {
			plain.ServeHTTP(w, r)
			return
		}
		tenanted.ServeHTTP(w, r)
	})
}
