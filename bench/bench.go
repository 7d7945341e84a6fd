// Package bench measures what durability costs: each measurement of this
// server runs next to a baseline in the same run, on the same machine, and
// is reported as a ratio (absolute times on a shared machine mean little).
package bench

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/internal/testenv"
	"github.com/durable-a2a/orchestrator/workflows"
)

// Options size the run.
type Options struct {
	Latency    int // sequential tasks per variant
	Throughput int // tasks per variant, sent by 32 clients
	Clients    int
	Resume     int // answers to a waiting task
	Stream     int // streamed status changes
	GraphRuns  int // runs of the graph per D
	Idle       int // tasks parked waiting for input
	CacheSize  int // the worker's workflow cache (0: the product's default)
	// ServerProfile, when set, is where the Temporal process writes its CPU
	// profile.
	ServerProfile string
	// Only names the measurements to run (latency, throughput, resume,
	// stream, graph, idle); empty runs them all.
	Only []string
}

// Defaults take a few minutes on 2 cores.
func Defaults() Options {
	return Options{Latency: 200, Throughput: 600, Clients: 32, Resume: 100, Stream: 100, GraphRuns: 3, Idle: 2000}
}

// Row is one line of the report.
type Row struct {
	Metric, Ours, Baseline, Ratio, Aim string
}

const bareQueue = workflows.TaskQueue

// Run measures everything and writes the table to w.
func Run(ctx context.Context, o Options, w io.Writer) ([]Row, error) {
	dir, err := os.MkdirTemp("", "a2a-bench-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tp, err := startTemporal(dir, o.ServerProfile)
	if err != nil {
		return nil, err
	}
	defer tp.stop()
	env, err := testenv.StartWith(dir, testenv.Options{Quiet: true, TemporalHostPort: tp.hostPort, CacheSize: o.CacheSize, Register: func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(bareWork, workflow.RegisterOptions{Name: "BenchBareWork"})
		r.RegisterWorkflowWithOptions(bareWait, workflow.RegisterOptions{Name: "BenchBareWait"})
		r.RegisterWorkflowWithOptions(bareUpdate, workflow.RegisterOptions{Name: "BenchBareUpdate"})
	}})
	if err != nil {
		return nil, err
	}
	defer env.Close()
	ours, err := newClient(ctx, env.BaseURL)
	if err != nil {
		return nil, err
	}
	mem, stopMem, err := startInMemory()
	if err != nil {
		return nil, err
	}
	defer stopMem()
	memClient, err := newClient(ctx, mem)
	if err != nil {
		return nil, err
	}
	b := &runner{ctx: ctx, env: env, ours: ours, mem: memClient, tp: tp}
	var rows []Row
	add := func(r ...Row) {
		rows = append(rows, r...)
		for _, x := range r {
			fmt.Fprintf(w, "%-46s %14s %14s %8s  %s\n", x.Metric, x.Ours, x.Baseline, x.Ratio, x.Aim)
		}
	}
	fmt.Fprintf(w, "%-46s %14s %14s %8s  %s\n", "metric", "this server", "baseline", "ratio", "aim")

	steps := []struct {
		name string
		run  func(Options) ([]Row, error)
	}{{"latency", b.latency}, {"throughput", b.throughput}, {"resume", b.resume}, {"stream", b.stream}, {"graph", b.graph}, {"idle", b.idle}}
	for _, step := range steps {
		if len(o.Only) > 0 && !slices.Contains(o.Only, step.name) {
			continue
		}
		r, err := step.run(o)
		if err != nil {
			return rows, err
		}
		add(r...)
	}
	return rows, nil
}

type runner struct {
	ctx  context.Context
	env  *testenv.Env
	ours *a2aclient.Client
	mem  *a2aclient.Client
	tp   *temporalProc
}

// cpu is the CPU time used so far by this process (frontend, worker, trip
// agents, clients and baselines) and by the Temporal server's.
func (b *runner) cpu() (ours, server time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), b.tp.cpu()
}

func newClient(ctx context.Context, base string) (*a2aclient.Client, error) {
	card, err := agentcard.DefaultResolver.Resolve(ctx, base)
	if err != nil {
		return nil, err
	}
	return a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}}))
}

func msg(text string, meta map[string]any) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.Metadata = meta
	return m
}

// task sends a blocking message that must end in want.
func task(ctx context.Context, c *a2aclient.Client, m *a2a.Message, want a2a.TaskState) (*a2a.Task, error) {
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
	if err != nil {
		return nil, err
	}
	t, ok := res.(*a2a.Task)
	if !ok || t.Status.State != want {
		return nil, fmt.Errorf("got %v, want a task in %s", res, want)
	}
	return t, nil
}

func (b *runner) bare(ctx context.Context) error {
	run, err := b.env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "bench-" + uuid.NewString(), TaskQueue: bareQueue, EnableEagerStart: true,
	}, "BenchBareWork", "hello durable world")
	if err != nil {
		return err
	}
	var out string
	return run.Get(ctx, &out)
}

// bareUWS is the second baseline: the same work started the way a task is,
// with Update-with-Start (which cannot start eagerly), and no A2A around it.
func (b *runner) bareUWS(ctx context.Context) error {
	start := b.env.Client.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: "bench-" + uuid.NewString(), TaskQueue: bareQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, "BenchBareUpdate")
	h, err := b.env.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: "run", Args: []any{"hello durable world"}, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return err
	}
	var out string
	return h.Get(ctx, &out)
}

// bareUpdate does the work of the demo skill in its update handler.
func bareUpdate(ctx workflow.Context) (string, error) {
	var out string
	done := false
	if err := workflow.SetUpdateHandler(ctx, "run", func(ctx workflow.Context, text string) (string, error) {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
		err := workflow.ExecuteLocalActivity(ctx, activities.DemoWorkName, activities.WorkInput{Text: text}).Get(ctx, &out)
		done = true
		return out, err
	}); err != nil {
		return "", err
	}
	return out, workflow.Await(ctx, func() bool { return done })
}

// bareWork is the baseline: the same work as the demo skill (its activity),
// in a bare workflow started and awaited with the SDK.
func bareWork(ctx workflow.Context, text string) (string, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteLocalActivity(ctx, activities.DemoWorkName, activities.WorkInput{Text: text}).Get(ctx, &out)
	return out, err
}

// bareWait is the resume baseline: a workflow whose update answers at once.
func bareWait(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandler(ctx, "answer", func(ctx workflow.Context, s string) (string, error) { return s, nil }); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

func percentile(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func ratio(a, b float64) string { return fmt.Sprintf("%.2f", a/b) }

func timeN(n int, f func() error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

func (b *runner) latency(o Options) ([]Row, error) {
	ctx := b.ctx
	ours, err := timeN(o.Latency, func() error {
		_, err := task(ctx, b.ours, msg("hello durable world", nil), a2a.TaskStateCompleted)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("latency, this server: %w", err)
	}
	mem, err := timeN(o.Latency, func() error {
		_, err := task(ctx, b.mem, msg("hello durable world", nil), a2a.TaskStateCompleted)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("latency, in-memory: %w", err)
	}
	bare, err := timeN(o.Latency, func() error { return b.bare(ctx) })
	if err != nil {
		return nil, fmt.Errorf("latency, bare workflow: %w", err)
	}
	uws, err := timeN(o.Latency, func() error { return b.bareUWS(ctx) })
	if err != nil {
		return nil, fmt.Errorf("latency, bare Update-with-Start: %w", err)
	}
	p := func(d []time.Duration, q int) float64 { return float64(percentile(d, q)) }
	return []Row{
		{"task latency p50 vs bare workflow", ms(percentile(ours, 50)), ms(percentile(bare, 50)), ratio(p(ours, 50), p(bare, 50)), "≤ 1.25"},
		{"task latency p99 vs bare workflow", ms(percentile(ours, 99)), ms(percentile(bare, 99)), ratio(p(ours, 99), p(bare, 99)), ""},
		{"task latency p50 vs bare Update-with-Start", ms(percentile(ours, 50)), ms(percentile(uws, 50)), ratio(p(ours, 50), p(uws, 50)), ""},
		{"task latency p50 vs a2a-go in-memory", ms(percentile(ours, 50)), ms(percentile(mem, 50)), ratio(p(ours, 50), p(mem, 50)), "≤ 6"},
		{"task latency p99 vs a2a-go in-memory", ms(percentile(ours, 99)), ms(percentile(mem, 99)), ratio(p(ours, 99), p(mem, 99)), ""},
	}, nil
}

// concurrently runs n calls of f from k clients; it returns tasks/s and
// the CPU (user+sys) used per call by this process and by the Temporal
// server's.
func (b *runner) concurrently(n, k int, f func() error) (float64, cpuUse, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan struct{}, n)
	)
	for range n {
		next <- struct{}{}
	}
	close(next)
	o0, s0 := b.cpu()
	start := time.Now()
	for range k {
		wg.Go(func() {
			for range next {
				if err := f(); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	o1, s1 := b.cpu()
	return float64(n) / wall.Seconds(), cpuUse{ours: (o1 - o0) / time.Duration(n), server: (s1 - s0) / time.Duration(n)}, first
}

// cpuUse is CPU time per task, in this process and in the Temporal server's.
type cpuUse struct{ ours, server time.Duration }

func (c cpuUse) total() time.Duration { return c.ours + c.server }

func (b *runner) throughput(o Options) ([]Row, error) {
	ctx := b.ctx
	ours, oursCPU, err := b.concurrently(o.Throughput, o.Clients, func() error {
		_, err := task(ctx, b.ours, msg("hello durable world", nil), a2a.TaskStateCompleted)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("throughput, this server: %w", err)
	}
	mem, _, err := b.concurrently(o.Throughput, o.Clients, func() error {
		_, err := task(ctx, b.mem, msg("hello durable world", nil), a2a.TaskStateCompleted)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("throughput, in-memory: %w", err)
	}
	bare, bareCPU, err := b.concurrently(o.Throughput, o.Clients, func() error { return b.bare(ctx) })
	if err != nil {
		return nil, fmt.Errorf("throughput, bare workflow: %w", err)
	}
	uws, uwsCPU, err := b.concurrently(o.Throughput, o.Clients, func() error { return b.bareUWS(ctx) })
	if err != nil {
		return nil, fmt.Errorf("throughput, bare Update-with-Start: %w", err)
	}
	f := func(x float64) string { return fmt.Sprintf("%.0f /s", x) }
	return []Row{
		{fmt.Sprintf("throughput, %d clients, vs bare workflow", o.Clients), f(ours), f(bare), ratio(ours, bare), "≥ 0.9"},
		{fmt.Sprintf("throughput, %d clients, vs bare Update-with-Start", o.Clients), f(ours), f(uws), ratio(ours, uws), ""},
		{fmt.Sprintf("throughput, %d clients, vs a2a-go in-memory", o.Clients), f(ours), f(mem), ratio(ours, mem), ""},
		{"CPU per task (all processes) vs bare", ms(oursCPU.total()), ms(bareCPU.total()), ratio(float64(oursCPU.total()), float64(bareCPU.total())), ""},
		{"  of which the Temporal server's", ms(oursCPU.server), ms(bareCPU.server), ratio(float64(oursCPU.server), float64(bareCPU.server)), ""},
		{"  of which frontend + worker (+ clients)", ms(oursCPU.ours), ms(bareCPU.ours), ratio(float64(oursCPU.ours), float64(bareCPU.ours)), ""},
		{"CPU per task vs bare Update-with-Start", ms(oursCPU.total()), ms(uwsCPU.total()), ratio(float64(oursCPU.total()), float64(uwsCPU.total())), ""},
	}, nil
}

func (b *runner) resume(o Options) ([]Row, error) {
	ctx := b.ctx
	t, err := task(ctx, b.ours, msg("from Lahti to Kuopio", map[string]any{"skill": "book-flight"}), a2a.TaskStateInputRequired)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	ours, err := timeN(o.Resume, func() error {
		m := msg("not a date yet", nil)
		m.TaskID, m.ContextID = t.ID, t.ContextID
		_, err := task(ctx, b.ours, m, a2a.TaskStateInputRequired)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("resume, this server: %w", err)
	}
	id := "bench-wait-" + uuid.NewString()
	if _, err := b.env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: bareQueue}, "BenchBareWait"); err != nil {
		return nil, err
	}
	defer func() { _ = b.env.Client.TerminateWorkflow(context.Background(), id, "", "bench done") }()
	bare, err := timeN(o.Resume, func() error {
		h, err := b.env.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID: id, UpdateName: "answer", Args: []any{"x"}, WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err != nil {
			return err
		}
		return h.Get(ctx, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("resume, bare update: %w", err)
	}
	return []Row{{"resume (answer → next question) p50 vs bare update", ms(percentile(ours, 50)), ms(percentile(bare, 50)),
		ratio(float64(percentile(ours, 50)), float64(percentile(bare, 50))), ""}}, nil
}

func (b *runner) stream(o Options) ([]Row, error) {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	t, err := task(ctx, b.ours, msg("from Lahti to Kuopio", map[string]any{"skill": "book-flight"}), a2a.TaskStateInputRequired)
	if err != nil {
		return nil, err
	}
	lat := make(chan time.Duration, 2*o.Stream+4)
	ready := make(chan struct{})
	go func() {
		first := true
		for ev, err := range b.ours.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: t.ID}) {
			if err != nil {
				return
			}
			now := time.Now()
			if first {
				first = false
				close(ready)
				continue
			}
			if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.Timestamp != nil {
				lat <- now.Sub(*su.Status.Timestamp)
			}
		}
	}()
	<-ready
	for range o.Stream {
		m := msg("not a date yet", nil)
		m.TaskID, m.ContextID = t.ID, t.ContextID
		if _, err := task(ctx, b.ours, m, a2a.TaskStateInputRequired); err != nil {
			return nil, err
		}
	}
	var all []time.Duration
	for len(all) < 2*o.Stream {
		select {
		case d := <-lat:
			all = append(all, d)
		case <-time.After(30 * time.Second):
			return nil, fmt.Errorf("stream: got %d of %d events", len(all), 2*o.Stream)
		}
	}
	return []Row{
		{"stream latency p50 (event recorded → SSE client)", ms(percentile(all, 50)), "", "", "< 50 ms"},
		{"stream latency p99", ms(percentile(all, 99)), "", "", ""},
	}, nil
}

// graphRun runs the trip-shaped plan (a; then b and c in parallel; d after
// b) on the given agents, each taking d, and returns the mean wall time.
func (b *runner) graphRun(o Options, d time.Duration, agents [4]string) (time.Duration, error) {
	oldB, oldS := b.env.Acts.Bookings.Delay, b.env.Trip.SpaExec.Delay
	b.env.Acts.Bookings.Delay, b.env.Trip.SpaExec.Delay = d, d
	defer func() { b.env.Acts.Bookings.Delay, b.env.Trip.SpaExec.Delay = oldB, oldS }()
	var total time.Duration
	for range o.GraphRuns {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("bench"), a2a.NewDataPart(map[string]any{"plan": map[string]any{"nodes": []any{
			map[string]any{"id": "a", "agent": agents[0], "message": "first"},
			map[string]any{"id": "b", "agent": agents[1], "message": "second", "dependsOn": []any{"a"}},
			map[string]any{"id": "c", "agent": agents[2], "message": "parallel", "dependsOn": []any{"a"}},
			map[string]any{"id": "d", "agent": agents[3], "message": "last", "dependsOn": []any{"b"}},
		}}}))
		start := time.Now()
		if _, err := task(b.ctx, b.ours, m, a2a.TaskStateCompleted); err != nil {
			return 0, fmt.Errorf("graph: %w", err)
		}
		total += time.Since(start)
	}
	return total / time.Duration(o.GraphRuns), nil
}

// graph measures the orchestrator: every node's downstream agent is a stock
// a2a-go agent (the spa) that answers after d, so what exceeds the critical
// path (3 × d) is this server's own cost. A last run puts this server's own
// durable trip agents downstream, which adds their cost too.
func (b *runner) graph(o Options) ([]Row, error) {
	var rows []Row
	stock := [4]string{"spa", "spa", "spa", "spa"}
	for _, d := range []time.Duration{50 * time.Millisecond, 500 * time.Millisecond} {
		wall, err := b.graphRun(o, d, stock)
		if err != nil {
			return nil, err
		}
		aim := ""
		if d == 500*time.Millisecond {
			aim = "≤ 1.10"
		}
		rows = append(rows, Row{fmt.Sprintf("trip graph wall / critical path (D = %s)", d), ms(wall), ms(3 * d), ratio(float64(wall), float64(3*d)), aim},
			Row{fmt.Sprintf("orchestration overhead per node (D = %s)", d), ms((wall - 3*d) / 3), "", "", ""})
	}
	d := 500 * time.Millisecond
	wall, err := b.graphRun(o, d, [4]string{"hotel", "hotel", "snowmobile", "spa"})
	if err != nil {
		return nil, err
	}
	rows = append(rows, Row{"same, durable trip agents downstream (D = 500ms)", ms(wall), ms(3 * d), ratio(float64(wall), float64(3*d)), ""})
	return rows, nil
}

// idle parks tasks on the product's own frontend and worker, run as
// separate processes as in production (cmd/frontend, cmd/worker), so that
// their memory is theirs alone.
func (b *runner) idle(o Options) ([]Row, error) {
	if o.Idle == 0 {
		return nil, nil
	}
	ctx := b.ctx
	bin, err := os.MkdirTemp("", "a2a-bench-bin-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)
	if err := buildCommands(ctx, bin); err != nil {
		return nil, err
	}
	// This process's worker leaves the task queue to the worker process.
	b.env.StopWorker()
	defer func() { _ = b.env.StartWorker() }()
	env := []string{"TEMPORAL_ADDRESS=" + b.tp.hostPort, "TEMPORAL_NAMESPACE=default"}
	if o.CacheSize > 0 {
		env = append(env, fmt.Sprintf("A2A_WORKFLOW_CACHE=%d", o.CacheSize))
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	wk, err := startProc(bin, "worker", env)
	if err != nil {
		return nil, err
	}
	defer wk.stop()
	fe, err := startProc(bin, "frontend", env, "-addr", addr)
	if err != nil {
		return nil, err
	}
	defer fe.stop()
	base := "http://" + addr
	if err := waitReady(ctx, base, fe); err != nil {
		return nil, err
	}
	c, err := newClient(ctx, base)
	if err != nil {
		return nil, err
	}
	// One task first, so that "before" includes what every task needs.
	if _, err := task(ctx, c, msg("warm up", nil), a2a.TaskStateCompleted); err != nil {
		return nil, fmt.Errorf("idle: %w", err)
	}
	wk0, fe0, server0 := wk.rss(), fe.rss(), b.tp.rss()

	type parked struct {
		id  a2a.TaskID
		ctx string
	}
	tasks := make([]parked, 0, o.Idle)
	var mu sync.Mutex
	start := time.Now()
	_, _, err = b.concurrently(o.Idle, 16, func() error {
		t, err := task(ctx, c, msg("from Inari to Salla", map[string]any{"skill": "book-flight"}), a2a.TaskStateInputRequired)
		if err == nil {
			mu.Lock()
			tasks = append(tasks, parked{t.ID, t.ContextID})
			mu.Unlock()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("idle: %w", err)
	}
	parkTime := time.Since(start)
	wk1, fe1, server1 := wk.rss(), fe.rss(), b.tp.rss()

	j := 0
	var answers []time.Duration
	_, _, err = b.concurrently(o.Idle, 16, func() error {
		mu.Lock()
		t := tasks[j]
		j++
		mu.Unlock()
		m := msg("2027-09-09", nil)
		m.TaskID, m.ContextID = t.id, t.ctx
		s := time.Now()
		_, err := task(ctx, c, m, a2a.TaskStateCompleted)
		mu.Lock()
		answers = append(answers, time.Since(s))
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("idle answers: %w", err)
	}
	mb := func(x uint64) string { return fmt.Sprintf("%.0f MB", float64(x)/(1<<20)) }
	perTask := func(a, b uint64) string {
		return fmt.Sprintf("%.1f KB", (float64(a)-float64(b))/float64(o.Idle)/1024)
	}
	return []Row{
		{fmt.Sprintf("park %d tasks in INPUT_REQUIRED", o.Idle), fmt.Sprintf("%.1f s", parkTime.Seconds()), "", "", ""},
		{"RSS worker + frontend, waiting / before", mb(wk1 + fe1), mb(wk0 + fe0), "", "≤ 200 MB at 10,000"},
		{"  worker process, waiting / before", mb(wk1), mb(wk0), "", ""},
		{"  frontend process, waiting / before", mb(fe1), mb(fe0), "", ""},
		{"  per waiting task (worker + frontend)", perTask(wk1+fe1, wk0+fe0), "", "", ""},
		{"RSS Temporal server, waiting / before", mb(server1), mb(server0), "", ""},
		{"  per waiting task", perTask(server1, server0), "", "", ""},
		{"answer latency p50 / p99 (16 clients)", ms(percentile(answers, 50)), ms(percentile(answers, 99)), "", ""},
	}, nil
}

// The a2a-go baseline: its stock in-memory server with an executor that
// does the same work as the demo skill.
type sameWork struct{}

func (e *sameWork) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) || !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		var text string
		for _, p := range ec.Message.Parts {
			if t, ok := p.Content.(a2a.Text); ok {
				text += string(t)
			}
		}
		words := len(strings.Fields(text))
		art := a2a.NewArtifactEvent(ec, a2a.NewTextPart(fmt.Sprintf("Processed %q: %d words, %d characters.", text, words, len([]rune(text)))))
		if !yield(art, nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (e *sameWork) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func startInMemory() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	base := "http://" + ln.Addr().String()
	card := &a2a.AgentCard{
		Name: "in-memory baseline", Description: "a2a-go stock server", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(base+"/jsonrpc", a2a.TransportProtocolJSONRPC)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "work", Name: "work", Description: "work", Tags: []string{"bench"}}},
	}
	h := a2asrv.NewHandler(&sameWork{})
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return base, func() { _ = srv.Close() }, nil
}
