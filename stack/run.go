package stack

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-a2a/orchestrator/a2a/server"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/metrics"
	"github.com/durable-a2a/orchestrator/skills"
)

// FrontendFlags are the settings of an A2A frontend process.
type FrontendFlags struct {
	Addr      string // HTTP listen address
	GRPCAddr  string // gRPC listen address; empty turns gRPC off
	PublicURL string // base URL written in the card; default http(s)://Addr
	Insecure  bool   // allow a non-loopback address without authentication
	TLSCert   string // PEM certificate: serve HTTPS (and gRPC over TLS)
	TLSKey    string // PEM private key of TLSCert
	// Metrics gets the frontend's own metrics (nil: none).
	Metrics *metrics.Registry
}

// Agent describes this agent in its card.
var Agent = server.CardOptions{
	Name:        "Durable A2A Orchestrator",
	Description: "An A2A agent whose every task is a Temporal workflow: tasks survive crashes of any process and wait as long as they must.",
	Version:     "0.1.0",
}

// RunFrontend listens and serves the A2A frontend until ctx ends.
func RunFrontend(ctx context.Context, c client.Client, namespace string, cfg *config.Config, fl FrontendFlags, log *slog.Logger, ready func(cardURL string)) error {
	auth, err := AuthFrom(cfg)
	if err != nil {
		return err
	}
	if !auth.Enabled() {
		if err := checkExposure(fl); err != nil {
			return err
		}
		log.Warn("no API keys configured: every caller is anonymous (loopback only)")
	}
	ln, err := net.Listen("tcp", fl.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", fl.Addr, err)
	}
	var grpcLn net.Listener
	if fl.GRPCAddr != "" {
		if grpcLn, err = net.Listen("tcp", fl.GRPCAddr); err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen on %s: %w", fl.GRPCAddr, err)
		}
	}
	base := fl.PublicURL
	if base == "" {
		scheme := "http://"
		if fl.TLSCert != "" {
			scheme = "https://"
		}
		base = scheme + ln.Addr().String()
	}
	card := Agent
	card.BaseURL = base
	webhooks, err := WebhookPolicyFromEnv()
	if err != nil {
		return err
	}
	f := &Frontend{Temporal: c, Namespace: namespace, Catalog: skills.New(cfg), Card: card, Log: log, Webhooks: webhooks, Auth: auth, TLSCert: fl.TLSCert, TLSKey: fl.TLSKey, Metrics: fl.Metrics}
	if ready != nil {
		ready(base + "/.well-known/agent-card.json")
	}
	return f.Serve(ctx, ln, grpcLn)
}

// AuthFrom makes the frontend's authentication from the configuration.
func AuthFrom(cfg *config.Config) (*server.Auth, error) {
	a := &server.Auth{RatePerSecond: cfg.RateLimit.PerSecond, Burst: cfg.RateLimit.Burst}
	for _, k := range cfg.APIKeys {
		a.Keys = append(a.Keys, server.APIKey{Key: k.Key, Principal: k.Principal})
	}
	if j := cfg.JWT; j != nil {
		v := &server.JWTVerifier{HMACSecret: []byte(j.HMACSecret), Issuer: j.Issuer, Audience: j.Audience}
		if j.PublicKeyFile != "" {
			pemBytes, err := os.ReadFile(j.PublicKeyFile)
			if err != nil {
				return nil, fmt.Errorf("jwt.publicKeyFile: %w", err)
			}
			block, _ := pem.Decode(pemBytes)
			if block == nil {
				return nil, fmt.Errorf("jwt.publicKeyFile: no PEM block")
			}
			if v.PublicKey, err = x509.ParsePKIXPublicKey(block.Bytes); err != nil {
				return nil, fmt.Errorf("jwt.publicKeyFile: %w", err)
			}
		}
		a.JWT = v
	}
	return a, nil
}

// checkExposure refuses to serve beyond this machine with no authentication
// configured unless told to.
func checkExposure(fl FrontendFlags) error {
	for _, a := range []string{fl.Addr, fl.GRPCAddr} {
		if a == "" || fl.Insecure {
			continue
		}
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return fmt.Errorf("address %q: %w", a, err)
		}
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("refusing to serve on %s without authentication; configure apiKeys, use a loopback address, or pass -insecure", a)
		}
	}
	return nil
}

// RunWorker runs the worker until ctx ends. The demo ledger lives in
// $A2A_LEDGER_DIR (default in memory); the trip agents' bookings take
// $A2A_TRIP_DELAY (default 200ms); a push notification is retried for
// $A2A_PUSH_GIVE_UP (default 1h).
func RunWorker(ctx context.Context, c client.Client, namespace string, cfg *config.Config, log *slog.Logger) error {
	if err := EnsureSearchAttributes(ctx, c, namespace); err != nil {
		return err
	}
	delay := 200 * time.Millisecond
	if v := os.Getenv("A2A_TRIP_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("A2A_TRIP_DELAY: %w", err)
		}
		delay = d
	}
	webhooks, err := WebhookPolicyFromEnv()
	if err != nil {
		return err
	}
	acts, err := NewActivities(os.Getenv("A2A_LEDGER_DIR"), cfg, delay, webhooks, log)
	if err != nil {
		return err
	}
	var o WorkerOptions
	if v := os.Getenv("A2A_PUSH_GIVE_UP"); v != "" {
		if o.PushGiveUp, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("A2A_PUSH_GIVE_UP: %w", err)
		}
	}
	w := NewWorker(c, skills.New(cfg), acts, o)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

// LoadConfig reads the configuration file at path, or $A2A_CONFIG; with
// neither, the configuration is empty (no downstream agents).
func LoadConfig(path string) (*config.Config, error) {
	if path == "" {
		path = os.Getenv("A2A_CONFIG")
	}
	if path == "" {
		return &config.Config{}, nil
	}
	return config.Load(path)
}

// Logger is the processes' structured logger.
func Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// Main is the body of a command that runs against a Temporal cluster: it
// connects with the TEMPORAL_* settings, reads the configuration, serves
// Prometheus metrics on metricsAddr (when set), runs until SIGINT or
// SIGTERM, and exits non-zero on failure.
func Main(name, configPath, metricsAddr string, run func(context.Context, client.Client, string, *config.Config, *metrics.Registry, *slog.Logger) error) {
	log := Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fail := func(err error) {
		log.Error(name+" failed", "err", err)
		os.Exit(1)
	}
	cfg, err := LoadConfig(configPath)
	if err != nil {
		fail(err)
	}
	cache, err := WorkflowCacheFromEnv()
	if err != nil {
		fail(err)
	}
	SetWorkflowCache(cache)
	reg := metrics.New()
	if metricsAddr != "" {
		if err := ServeMetrics(ctx, metricsAddr, reg); err != nil {
			fail(err)
		}
	}
	c, ns, err := Dial(ctx, "", log, WithMetrics(reg))
	if err != nil {
		fail(err)
	}
	defer c.Close()
	if err := run(ctx, c, ns, cfg, reg, log); err != nil {
		c.Close()
		fail(err)
	}
}

// ServeMetrics serves /metrics on addr until ctx ends.
func ServeMetrics(ctx context.Context, addr string, reg *metrics.Registry) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.HTTP())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return nil
}

// Probe GETs a URL and returns the exit code of a health check: 0 on 200.
func Probe(url string) int {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 1
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}
