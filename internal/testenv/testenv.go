// Package testenv starts what the tests run against: a real embedded
// Temporal server, a worker and the A2A frontend on 127.0.0.1, in process.
package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/durable-a2a/orchestrator/a2a/server"
	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/agents"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/embedded"
	"github.com/durable-a2a/orchestrator/metrics"
	"github.com/durable-a2a/orchestrator/skills"
	"github.com/durable-a2a/orchestrator/stack"
)

// HistoryLimit makes test tasks continue as new after a few rounds, so
// that every multi-turn test crosses runs.
const HistoryLimit = 60

// Env is a running stack.
type Env struct {
	// Temporal is the in-process server; nil when Options.TemporalHostPort
	// named one running elsewhere.
	Temporal *embedded.Server
	Client   client.Client
	Acts     *stack.Activities
	Metrics  *metrics.Registry
	Trip     *stack.TripAgents
	Config   *config.Config
	// BaseURL of the A2A frontend, such as http://127.0.0.1:41234.
	BaseURL string
	// GRPCAddr of the frontend's gRPC binding.
	GRPCAddr string
	Log      *slog.Logger

	worker worker.Worker
	stop   []func()
	opts   Options
}

// PushGiveUp bounds a push notification's retries in tests.
const PushGiveUp = 30 * time.Second

// Webhooks admits loopback webhooks (the tests' receivers), nothing private.
var Webhooks = activities.WebhookPolicy{AllowLoopback: true}

// TripDelay is how long each trip agent's booking takes in tests.
const TripDelay = 150 * time.Millisecond

// Start brings up Temporal (data in dataDir, or in memory when empty), a
// worker, a frontend and the trip agents.
func Start(dataDir string) (*Env, error) {
	return StartWith(dataDir, Options{HistoryLimit: HistoryLimit, Quiet: false})
}

// Options change what Start sets up.
type Options struct {
	// HistoryLimit is when waiting tasks continue as new (0: Temporal's
	// suggestion, as in production).
	HistoryLimit int
	// Quiet drops warnings from the log too.
	Quiet bool
	// Register adds more workflows and activities to the worker (benchmark
	// baselines).
	Register func(worker.Registry)
	// TemporalHostPort is a Temporal server already running (the benchmark
	// runs one in its own process); empty starts one in this process.
	TemporalHostPort string
	// CacheSize is the workers' workflow cache (0: the default). It is one
	// per process: only the first Start of a process sets it.
	CacheSize int
}

// StartWith is Start with options.
func StartWith(dataDir string, o Options) (*Env, error) {
	level := slog.LevelWarn
	if o.Quiet {
		level = slog.LevelError + 4
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	trip, err := stack.ListenTripAgents("127.0.0.1", 0, &agents.Spa{Delay: TripDelay})
	if err != nil {
		return nil, err
	}
	cfg := trip.Config()
	// An agent nobody answers for: its nodes fail after their retries.
	cfg.Agents = append(cfg.Agents, config.Agent{Name: "ghost", CardURL: "http://127.0.0.1:1"})
	acts, err := stack.NewActivities("", cfg, TripDelay, Webhooks, log)
	if err != nil {
		return nil, err
	}
	e := &Env{Acts: acts, Trip: trip, Config: cfg, Log: log, opts: o, Metrics: metrics.New()}
	stack.SetWorkflowCache(o.CacheSize)
	hostPort := o.TemporalHostPort
	if hostPort == "" {
		srv, err := embedded.Start(embedded.Config{DataDir: dataDir, SearchAttributes: stack.SearchAttributes, LogLevel: "fatal"})
		if err != nil {
			return nil, err
		}
		e.Temporal = srv
		e.stop = append(e.stop, func() { _ = srv.Stop() })
		hostPort = srv.HostPort()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := stack.Dial(ctx, hostPort, e.Log, stack.WithMetrics(e.Metrics))
	if err != nil {
		e.Close()
		return nil, err
	}
	e.Client = c
	e.stop = append(e.stop, c.Close)
	if err := e.StartWorker(); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.startFrontend(); err != nil {
		e.Close()
		return nil, err
	}
	cfg.WebhookBaseURL = e.BaseURL // nodes waiting on long downstream tasks get pushes here
	tctx, tcancel := context.WithCancel(context.Background())
	tdone := make(chan struct{})
	go func() {
		defer close(tdone)
		if err := trip.Serve(tctx, e.Client, "default", Webhooks, e.Log); err != nil {
			e.Log.Error("trip agents stopped", "err", err)
		}
	}()
	e.stop = append(e.stop, func() { tcancel(); <-tdone })
	return e, nil
}

// StartWorker starts a worker (again, after StopWorker).
func (e *Env) StartWorker() error {
	e.worker = stack.NewWorker(e.Client, skills.New(e.Config), e.Acts, stack.WorkerOptions{HistoryLimit: e.opts.HistoryLimit, PushGiveUp: PushGiveUp, DownstreamAttempts: 3})
	if e.opts.Register != nil {
		e.opts.Register(e.worker)
	}
	if err := e.worker.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	return nil
}

// StopWorker stops the worker: tasks wait in Temporal until one runs again.
func (e *Env) StopWorker() {
	e.worker.Stop()
	e.worker = nil
}

func (e *Env) startFrontend() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	e.BaseURL = "http://" + ln.Addr().String()
	e.GRPCAddr = gln.Addr().String()
	e.serveFrontendWith(ln, gln, func(f *stack.Frontend) { f.Metrics = e.Metrics })
	return nil
}

// KeepAlive is the SSE keep-alive interval of test frontends.
const KeepAlive = 300 * time.Millisecond

// AddFrontend starts another frontend on the same Temporal: it shares
// nothing with the first but Temporal. It returns its base URL and a stop
// function.
func (e *Env) AddFrontend() (string, func(), error) {
	return e.AddFrontendWithAuth(nil)
}

// AddFrontendWithAuth starts another frontend whose callers authenticate,
// with a gRPC binding too (see its card).
func (e *Env) AddFrontendWithAuth(auth *server.Auth) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	stop := e.serveFrontendAuth(ln, gln, auth)
	return "http://" + ln.Addr().String(), stop, nil
}

// AddFrontendTLS starts another frontend serving HTTPS with the given PEM
// certificate and key; it returns its https base URL.
func (e *Env) AddFrontendTLS(cert, key string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	stop := e.serveFrontendWith(ln, nil, func(f *stack.Frontend) {
		f.TLSCert, f.TLSKey = cert, key
		f.Card.BaseURL = "https://" + ln.Addr().String()
	})
	return "https://" + ln.Addr().String(), stop, nil
}

func (e *Env) serveFrontend(ln, gln net.Listener) func() { return e.serveFrontendAuth(ln, gln, nil) }

func (e *Env) serveFrontendAuth(ln, gln net.Listener, auth *server.Auth) func() {
	return e.serveFrontendWith(ln, gln, func(f *stack.Frontend) { f.Auth = auth })
}

func (e *Env) serveFrontendWith(ln, gln net.Listener, adjust func(*stack.Frontend)) func() {
	card := stack.Agent
	card.BaseURL = "http://" + ln.Addr().String()
	f := &stack.Frontend{Temporal: e.Client, Namespace: "default", Catalog: skills.New(e.Config), Card: card, Log: e.Log, KeepAlive: KeepAlive, Webhooks: Webhooks}
	adjust(f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.Serve(ctx, ln, gln); err != nil {
			e.Log.Error("frontend stopped", "err", err)
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	e.stop = append(e.stop, stop)
	return stop
}

// Close stops everything, last started first.
func (e *Env) Close() {
	if e.worker != nil {
		e.worker.Stop()
		e.worker = nil
	}
	for i := len(e.stop) - 1; i >= 0; i-- {
		e.stop[i]()
	}
	e.stop = nil
}
