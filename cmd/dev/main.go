// Command dev runs the whole product in one process: an embedded Temporal
// server keeping its data on disk, a worker and the A2A frontend.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/durable-a2a/orchestrator/agents"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/embedded"
	"github.com/durable-a2a/orchestrator/metrics"
	"github.com/durable-a2a/orchestrator/stack"
)

func main() {
	var fl stack.FrontendFlags
	flag.StringVar(&fl.Addr, "addr", "127.0.0.1:8080", "A2A HTTP listen address (JSON-RPC, HTTP+JSON, Agent Card)")
	flag.StringVar(&fl.GRPCAddr, "grpc-addr", "127.0.0.1:8081", "A2A gRPC listen address (empty: no gRPC)")
	flag.StringVar(&fl.PublicURL, "public-url", "", "base URL written in the Agent Card (default http://<addr>)")
	flag.BoolVar(&fl.Insecure, "insecure", false, "serve on a non-loopback address without authentication")
	flag.StringVar(&fl.TLSCert, "tls-cert", "", "PEM certificate file: serve HTTPS and gRPC over TLS")
	flag.StringVar(&fl.TLSKey, "tls-key", "", "PEM private key file of -tls-cert")
	dataDir := flag.String("data-dir", "./a2a-data", "directory of the embedded Temporal server's SQLite file")
	temporalPort := flag.Int("temporal-port", 7233, "port of the embedded Temporal server (0: any free port)")
	agentPort := flag.Int("agent-port", 8091, "first of the 4 ports of the trip agents: flight, hotel, snowmobile, spa (0: any free ports)")
	tripDelay := flag.Duration("trip-delay", 200*time.Millisecond, "how long each trip agent's booking takes")
	metricsAddr := flag.String("metrics-addr", "127.0.0.1:9464", "serve Prometheus metrics at http://<addr>/metrics (empty: off)")
	configPath := flag.String("config", "", "configuration file whose agents, playbooks, apiKeys, jwt and rateLimit are added to the trip example's")
	flag.Parse()

	log := stack.Logger()
	if err := run(*dataDir, *temporalPort, *agentPort, *tripDelay, *configPath, *metricsAddr, fl); err != nil {
		log.Error("dev stack failed", "err", err)
		os.Exit(1)
	}
}

func run(dataDir string, temporalPort, agentPort int, tripDelay time.Duration, configPath, metricsAddr string, fl stack.FrontendFlags) error {
	var extra *config.Config
	if configPath != "" {
		var err error
		if extra, err = config.Load(configPath); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := stack.Logger()
	// Before the embedded server starts its own workers, which make the
	// process's workflow cache.
	cache, err := stack.WorkflowCacheFromEnv()
	if err != nil {
		return err
	}
	stack.SetWorkflowCache(cache)

	srv, err := embedded.Start(embedded.Config{
		DataDir: dataDir, FrontendPort: temporalPort, Namespace: "default", SearchAttributes: stack.SearchAttributes,
	})
	if err != nil {
		return fmt.Errorf("embedded Temporal: %w", err)
	}
	defer func() { _ = srv.Stop() }()

	reg := metrics.New()
	if metricsAddr != "" {
		if err := stack.ServeMetrics(ctx, metricsAddr, reg); err != nil {
			return err
		}
	}
	fl.Metrics = reg
	c, _, err := stack.Dial(ctx, srv.HostPort(), log, stack.WithMetrics(reg))
	if err != nil {
		return err
	}
	defer c.Close()

	// The trip agents are the example's internals: loopback only, whatever -addr is.
	trip, err := stack.ListenTripAgents("127.0.0.1", agentPort, &agents.Spa{Delay: tripDelay})
	if err != nil {
		return err
	}
	cfg := trip.Config()
	if extra != nil {
		cfg.Agents = append(cfg.Agents, extra.Agents...)
		cfg.Playbooks = append(cfg.Playbooks, extra.Playbooks...)
		cfg.APIKeys, cfg.JWT, cfg.RateLimit = extra.APIKeys, extra.JWT, extra.RateLimit
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("%s with the trip example: %w", configPath, err)
		}
	}
	cfg.WebhookBaseURL = fl.PublicURL
	if cfg.WebhookBaseURL == "" {
		scheme := "http://"
		if fl.TLSCert != "" {
			scheme = "https://"
		}
		cfg.WebhookBaseURL = scheme + fl.Addr
	}
	if err := os.Setenv("A2A_TRIP_DELAY", tripDelay.String()); err != nil {
		return err
	}
	// A local setup sends push notifications to local webhooks.
	if os.Getenv("A2A_ALLOW_WEBHOOKS") == "" {
		if err := os.Setenv("A2A_ALLOW_WEBHOOKS", "loopback"); err != nil {
			return err
		}
	}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return stack.RunWorker(ctx, c, "default", cfg, log) })
	webhooks, err := stack.WebhookPolicyFromEnv()
	if err != nil {
		return err
	}
	g.Go(func() error { return trip.Serve(ctx, c, "default", webhooks, log) })
	g.Go(func() error {
		return stack.RunFrontend(ctx, c, "default", cfg, fl, log, func(cardURL string) {
			fmt.Printf("Temporal:   %s (namespace default, data in %s)\n", srv.HostPort(), dataDir)
			fmt.Printf("Agent Card: %s\n", cardURL)
			fmt.Printf("Trip agents: flight %s, hotel %s, snowmobile %s, spa %s\n", trip.Flight, trip.Hotel, trip.Snowmobile, trip.Spa)
			if len(cfg.APIKeys) == 0 && cfg.JWT == nil {
				fmt.Printf("Ready. No authentication: serving on loopback only. Ctrl-C to stop.\n")
			} else {
				fmt.Printf("Ready. Callers authenticate (API key or bearer token). Ctrl-C to stop.\n")
			}
		})
	})
	return g.Wait()
}
