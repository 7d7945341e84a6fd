// Command frontend serves the A2A protocol; tasks run on whatever Temporal
// cluster the TEMPORAL_* settings name, executed by separate workers.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/metrics"
	"github.com/durable-a2a/orchestrator/stack"
)

func main() {
	var fl stack.FrontendFlags
	flag.StringVar(&fl.Addr, "addr", "127.0.0.1:8080", "A2A HTTP listen address (JSON-RPC, HTTP+JSON, Agent Card)")
	flag.StringVar(&fl.GRPCAddr, "grpc-addr", "", "A2A gRPC listen address (empty: no gRPC)")
	flag.StringVar(&fl.PublicURL, "public-url", "", "base URL written in the Agent Card (default http://<addr>)")
	flag.BoolVar(&fl.Insecure, "insecure", false, "serve on a non-loopback address without authentication")
	flag.StringVar(&fl.TLSCert, "tls-cert", "", "PEM certificate file: serve HTTPS and gRPC over TLS")
	flag.StringVar(&fl.TLSKey, "tls-key", "", "PEM private key file of -tls-cert")
	configPath := flag.String("config", "", "configuration file (agents, playbooks); default $A2A_CONFIG")
	probe := flag.String("probe", "", "instead of serving, GET this URL and exit 0 on HTTP 200 (a container health check)")
	metricsAddr := flag.String("metrics-addr", "", "serve Prometheus metrics at http://<addr>/metrics (empty: off)")
	flag.Parse()
	if *probe != "" {
		os.Exit(stack.Probe(*probe))
	}
	stack.Main("frontend", *configPath, *metricsAddr, func(ctx context.Context, c client.Client, ns string, cfg *config.Config, reg *metrics.Registry, log *slog.Logger) error {
		fl.Metrics = reg
		return stack.RunFrontend(ctx, c, ns, cfg, fl, log, func(cardURL string) { fmt.Printf("Agent Card: %s\n", cardURL) })
	})
}
