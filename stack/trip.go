package stack

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/durable-a2a/orchestrator/a2a/server"
	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/agents"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/skills"
)

// TripAgents are the trip's downstream agents, each its own A2A server.
type TripAgents struct {
	Flight, Hotel, Snowmobile, Spa string // base URLs
	SpaExec                        *agents.Spa
	listeners                      []net.Listener
}

// ListenTripAgents opens the agents' listeners on host at ports first..first+3
// (first 0: any free ports).
func ListenTripAgents(host string, first int, spa *agents.Spa) (*TripAgents, error) {
	t := &TripAgents{SpaExec: spa}
	for i := range 4 {
		port := 0
		if first != 0 {
			port = first + i
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
		if err != nil {
			for _, l := range t.listeners {
				_ = l.Close()
			}
			return nil, fmt.Errorf("trip agent listener: %w", err)
		}
		t.listeners = append(t.listeners, ln)
	}
	url := func(i int) string { return "http://" + t.listeners[i].Addr().String() }
	t.Flight, t.Hotel, t.Snowmobile, t.Spa = url(0), url(1), url(2), url(3)
	return t, nil
}

// Config is the single command's configuration: these agents and the trip playbook.
func (t *TripAgents) Config() *config.Config {
	return config.Local(t.Flight, t.Hotel, t.Snowmobile, t.Spa)
}

// Serve runs the agents until ctx ends. The flight, hotel and snowmobile
// agents are frontends of this project on Temporal (their tasks run on the
// worker); the spa agent is a2a-go's stock in-memory server.
func (t *TripAgents) Serve(ctx context.Context, c client.Client, namespace string, webhooks activities.WebhookPolicy, log *slog.Logger) error {
	all := skills.New(nil)
	g, ctx := errgroup.WithContext(ctx)
	for i, a := range []struct{ name, skill string }{
		{"Flight agent", "book-flight"}, {"Hotel agent", "book-hotel"}, {"Snowmobile agent", "book-snowmobile"},
	} {
		ln := t.listeners[i]
		f := &Frontend{
			Temporal: c, Namespace: namespace, Catalog: all.Only(a.skill), Log: log, Webhooks: webhooks,
			Card: server.CardOptions{Name: a.name, Description: a.name + " of the trip example (durable, on Temporal).", Version: Agent.Version, BaseURL: "http://" + ln.Addr().String()},
		}
		g.Go(func() error { return f.Serve(ctx, ln, nil) })
	}
	g.Go(func() error { return agents.ServeSpa(ctx, t.listeners[3], t.SpaExec) })
	return g.Wait()
}
