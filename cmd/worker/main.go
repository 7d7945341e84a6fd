// Command worker runs the task workflows and their activities against the
// Temporal cluster named by the TEMPORAL_* settings. Run as many as you like.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/metrics"
	"github.com/durable-a2a/orchestrator/stack"
)

func main() {
	configPath := flag.String("config", "", "configuration file (agents, playbooks); default $A2A_CONFIG")
	metricsAddr := flag.String("metrics-addr", "", "serve Prometheus metrics at http://<addr>/metrics (empty: off)")
	flag.Parse()
	stack.Main("worker", *configPath, *metricsAddr, func(ctx context.Context, c client.Client, ns string, cfg *config.Config, _ *metrics.Registry, log *slog.Logger) error {
		fmt.Println("Worker started.")
		return stack.RunWorker(ctx, c, ns, cfg, log)
	})
}
