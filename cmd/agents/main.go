// Command agents serves the trip example's downstream agents (flight, hotel,
// snowmobile on Temporal; spa in memory) against the Temporal cluster named
// by the TEMPORAL_* settings; their durable tasks run on the workers.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-a2a/orchestrator/agents"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/metrics"
	"github.com/durable-a2a/orchestrator/stack"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address the agents listen on")
	port := flag.Int("port", 8091, "first of the four ports: flight, hotel, snowmobile, spa")
	spaDelay := flag.Duration("spa-delay", 200*time.Millisecond, "how long the spa agent's bookings take")
	metricsAddr := flag.String("metrics-addr", "", "serve Prometheus metrics at http://<addr>/metrics (empty: off)")
	flag.Parse()
	stack.Main("agents", "", *metricsAddr, func(ctx context.Context, c client.Client, ns string, _ *config.Config, _ *metrics.Registry, log *slog.Logger) error {
		trip, err := stack.ListenTripAgents(*host, *port, &agents.Spa{Delay: *spaDelay})
		if err != nil {
			return err
		}
		webhooks, err := stack.WebhookPolicyFromEnv()
		if err != nil {
			return err
		}
		fmt.Printf("Trip agents: flight %s, hotel %s, snowmobile %s, spa %s\n", trip.Flight, trip.Hotel, trip.Snowmobile, trip.Spa)
		return trip.Serve(ctx, c, ns, webhooks, log)
	})
}
