// Package stack wires the product's processes: a Temporal client from the
// standard TEMPORAL_* settings, the worker, and the A2A frontend. The
// commands and the tests build on it, so every path runs the same code.
package stack

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/prometheus/client_golang/prometheus"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/durable-a2a/orchestrator/a2a/server"
	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/metrics"
	"github.com/durable-a2a/orchestrator/skills"
	"github.com/durable-a2a/orchestrator/workflows"
)

var taskStates = []string{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED",
	"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}

// SearchAttributes are the custom search attributes task workflows set.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	workflows.SAContextID.GetName():  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	workflows.SAOwner.GetName():      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	workflows.SATenant.GetName():     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	workflows.SAState.GetName():      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	workflows.SAStatusTime.GetName(): enumspb.INDEXED_VALUE_TYPE_DATETIME,
}

// Dial connects to Temporal. hostPort, when set, overrides TEMPORAL_ADDRESS
// (the embedded server passes its own); everything else comes from the
// standard TEMPORAL_* settings and config file. It returns the namespace too.
func Dial(ctx context.Context, hostPort string, log *slog.Logger, opts ...func(*client.Options)) (client.Client, string, error) {
	o, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return nil, "", fmt.Errorf("load TEMPORAL_* client settings: %w", err)
	}
	for _, f := range opts {
		f(&o)
	}
	return dial(ctx, hostPort, log, o)
}

// WithMetrics reports the SDK's metrics (and the workflows' and
// activities') to a registry.
func WithMetrics(r *metrics.Registry) func(*client.Options) {
	return func(o *client.Options) { o.MetricsHandler = r.Handler() }
}

func dial(ctx context.Context, hostPort string, log *slog.Logger, opts client.Options) (client.Client, string, error) {
	if hostPort != "" {
		opts.HostPort = hostPort
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	opts.Logger = tlog.NewStructuredLogger(quiet(log))
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, "", fmt.Errorf("connect to Temporal at %q: %w", opts.HostPort, err)
	}
	return c, opts.Namespace, nil
}

// quiet keeps the SDK's logs at warnings and above.
func quiet(log *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{Handler: log.Handler(), min: slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// EnsureSearchAttributes registers the task search attributes in the
// namespace where they are missing (a cluster other than the embedded one).
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range SearchAttributes {
		if _, ok := resp.GetCustomAttributes()[name]; !ok {
			missing[name] = typ
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

// Activities are the side effects the worker runs.
type Activities struct {
	Demo       *activities.Demo
	Flights    *activities.Flights
	Bookings   *activities.Bookings
	Downstream *activities.Downstream
	Push       *activities.Push
}

// NewActivities makes the activities: ledgerDir is where bookings are
// recorded (empty: in memory), cfg names the downstream agents, tripDelay
// is how long the trip agents' bookings take.
func NewActivities(ledgerDir string, cfg *config.Config, tripDelay time.Duration, webhooks activities.WebhookPolicy, log *slog.Logger) (*Activities, error) {
	l, err := activities.NewLedger(ledgerDir)
	if err != nil {
		return nil, err
	}
	return &Activities{
		Demo:       &activities.Demo{Ledger: l},
		Flights:    &activities.Flights{Ledger: l},
		Bookings:   &activities.Bookings{Ledger: l, Delay: tripDelay},
		Downstream: &activities.Downstream{Config: cfg, WatchFor: 30 * time.Second, Log: log},
		Push:       activities.NewPush(webhooks),
	}, nil
}

// WorkerOptions tune the task workflows.
type WorkerOptions struct {
	// HistoryLimit is when a waiting task continues as new (0: when
	// Temporal suggests it).
	HistoryLimit int
	// PushGiveUp bounds the retries of one push notification (0: an hour).
	PushGiveUp time.Duration
	// DownstreamAttempts bounds the tries of a call to an unreachable agent (0: 15).
	DownstreamAttempts int
}

// DefaultCacheSize keeps a worker's memory bounded (about 50 KB per kept
// task) however many tasks wait, where the SDK's default keeps 10,000.
const DefaultCacheSize = 1000

// SetWorkflowCache sets how many tasks the workers of this process keep in
// memory between their steps (0: DefaultCacheSize). A task that is not kept
// costs the worker nothing while it waits, and is replayed from its history
// (bounded by continue-as-new) when it next moves. The SDK's cache is one per
// process, made by the first worker started (an embedded Temporal server's
// own workers included), so call this before anything starts.
func SetWorkflowCache(n int) {
	worker.SetStickyWorkflowCacheSize(cmp.Or(n, DefaultCacheSize))
}

// WorkflowCacheFromEnv reads A2A_WORKFLOW_CACHE (0 when unset).
func WorkflowCacheFromEnv() (int, error) {
	v := os.Getenv("A2A_WORKFLOW_CACHE")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("A2A_WORKFLOW_CACHE: want a positive number of tasks, got %q", v)
	}
	return n, nil
}

// NewWorker makes a worker for the task workflows and their activities.
func NewWorker(c client.Client, catalog *skills.Catalog, acts *Activities, o WorkerOptions) worker.Worker {
	// On Stop the worker takes no new work and gives the activities it runs
	// up to 30 s to finish (a drain); whatever is left is retried elsewhere.
	w := worker.New(c, workflows.TaskQueue, worker.Options{WorkerStopTimeout: 30 * time.Second})
	(&workflows.Tasks{Skills: catalog.Workflows(), HistoryLimit: o.HistoryLimit, PushGiveUp: o.PushGiveUp, DownstreamAttempts: o.DownstreamAttempts}).Register(w)
	acts.Demo.Register(w)
	acts.Flights.Register(w)
	acts.Bookings.Register(w)
	acts.Downstream.Register(w)
	acts.Push.Register(w)
	return w
}

// Frontend is the A2A server.
type Frontend struct {
	Temporal  client.Client
	Namespace string
	Catalog   *skills.Catalog
	Card      server.CardOptions
	Log       *slog.Logger
	// KeepAlive is how often idle streams get an SSE comment (default 15s).
	KeepAlive time.Duration
	// Webhooks says which addresses push notification URLs may use.
	Webhooks activities.WebhookPolicy
	// Auth authenticates callers (nil or no keys: anonymous).
	Auth *server.Auth
	// TLSCert and TLSKey (PEM files), when set, serve HTTPS and gRPC over
	// TLS (1.2 or newer; Go negotiates 1.3).
	TLSCert, TLSKey string
	// Metrics, when set, gets the frontend's metrics: tasks by state and
	// open streams.
	Metrics *metrics.Registry
}

// Serve answers A2A requests on ln (and gRPC on grpcLn when not nil) until
// ctx ends, then finishes the requests in flight.
func (f *Frontend) Serve(ctx context.Context, ln net.Listener, grpcLn net.Listener) error {
	h := server.NewHandler(f.Temporal, f.Namespace, f.Catalog, f.Log)
	h.Webhooks = f.Webhooks
	if f.Metrics != nil {
		streams := prometheus.NewGauge(prometheus.GaugeOpts{Name: "a2a_stream_clients", Help: "open SSE and gRPC streams"})
		f.Metrics.MustRegister(streams)
		f.Metrics.MustRegister(metrics.TaskStates(taskStates, h.CountState))
		h.Streams = func(d int) { streams.Add(float64(d)) }
	}
	card := f.Card
	card.Skills = f.Catalog.Cards()
	if grpcLn != nil {
		card.GRPCAddr = grpcLn.Addr().String()
	}
	keepAlive := f.KeepAlive
	if keepAlive == 0 {
		keepAlive = 15 * time.Second
	}
	agentCard := server.NewCard(card)
	f.Auth.Declare(agentCard)
	if f.Auth.Enabled() {
		agentCard.Capabilities.ExtendedAgentCard = true
		public := *agentCard
		h.Extended = func(p server.Principal) *a2a.AgentCard {
			return extendedCard(public, p, f.Catalog)
		}
	}
	mux, err := server.NewHTTPHandler(h, agentCard, f.Auth, keepAlive, f.Log)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	errc := make(chan error, 2)
	go func() {
		if f.TLSCert != "" {
			errc <- srv.ServeTLS(ln, f.TLSCert, f.TLSKey)
			return
		}
		errc <- srv.Serve(ln)
	}()
	var gs *grpc.Server
	if grpcLn != nil {
		gopts := f.Auth.GRPC()
		if f.TLSCert != "" {
			creds, err := credentials.NewServerTLSFromFile(f.TLSCert, f.TLSKey)
			if err != nil {
				return fmt.Errorf("gRPC TLS: %w", err)
			}
			gopts = append(gopts, grpc.Creds(creds))
		}
		gs = grpc.NewServer(gopts...)
		a2agrpc.NewHandler(server.Versioned(h)).RegisterWith(gs)
		go func() { errc <- gs.Serve(grpcLn) }()
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Drain()
	if gs != nil {
		gs.GracefulStop()
	}
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// WebhookPolicyFromEnv reads $A2A_ALLOW_WEBHOOKS: "loopback" and/or
// "private" (comma-separated) admit those addresses for push notification
// URLs; by default only public addresses are.
func WebhookPolicyFromEnv() (activities.WebhookPolicy, error) {
	var p activities.WebhookPolicy
	for _, v := range strings.Split(os.Getenv("A2A_ALLOW_WEBHOOKS"), ",") {
		switch strings.TrimSpace(v) {
		case "":
		case "loopback":
			p.AllowLoopback = true
		case "private":
			p.AllowPrivate = true
		default:
			return p, fmt.Errorf("A2A_ALLOW_WEBHOOKS: unknown value %q (want loopback, private)", v)
		}
	}
	return p, nil
}

// extendedCard is what an authenticated caller may see beyond the public
// card: who it is known as, and the downstream agents the orchestrator's
// skills can reach.
func extendedCard(public a2a.AgentCard, p server.Principal, catalog *skills.Catalog) *a2a.AgentCard {
	c := public
	c.Description = public.Description + " (extended card for " + p.Owner + ")"
	c.Skills = append([]a2a.AgentSkill(nil), public.Skills...)
	if agents := catalog.Agents(); len(agents) > 0 {
		c.Skills = append(c.Skills, a2a.AgentSkill{
			ID: "downstream-agents", Name: "Downstream agents",
			Description: "Plans may name these agents: " + strings.Join(agents, ", "),
			Tags:        []string{"orchestration"},
		})
	}
	return &c
}
