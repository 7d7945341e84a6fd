package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/agents"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/embedded"
	"github.com/durable-a2a/orchestrator/internal/testenv"
	"github.com/durable-a2a/orchestrator/stack"
)

// procStack is a frontend and a worker, each its own process, on one
// Temporal server, recording side effects in a ledger directory.
type procStack struct {
	t        *testing.T
	hostPort string
	extraEnv []string
	temporal []string
	ledger   string
	base     string
	addr     string
	worker   *proc
	frontend *proc
}

func newProcStack(t *testing.T) *procStack {
	srv, err := embedded.Start(embedded.Config{SearchAttributes: stack.SearchAttributes, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	s := &procStack{
		t:        t,
		hostPort: srv.HostPort(),
		temporal: []string{"TEMPORAL_ADDRESS=" + srv.HostPort(), "TEMPORAL_NAMESPACE=default"},
		ledger:   t.TempDir(),
		addr:     freeAddr(t),
	}
	s.base = "http://" + s.addr
	s.startWorker()
	s.startFrontend()
	return s
}

func (s *procStack) startWorker() {
	env := append(append([]string{}, s.temporal...), s.extraEnv...)
	s.worker = startProc(s.t, "worker", append(env, "A2A_LEDGER_DIR="+s.ledger))
}

func (s *procStack) startFrontend() {
	s.frontend = startProc(s.t, "frontend", append(append([]string{}, s.temporal...), s.extraEnv...), "-addr", s.addr)
	waitReady(s.t, s.base)
}

func (s *procStack) effects(prefix string) int {
	l, err := activities.NewLedger(s.ledger)
	if err != nil {
		s.t.Fatal(err)
	}
	n, err := l.Count(prefix)
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// TestWorkerKilledLosesNothing kills the worker (SIGKILL) while tasks are
// WORKING and while others wait in INPUT_REQUIRED, answers the waiting ones
// while no worker runs, and restarts it: every task ends as it would have
// without the crash, and every booking and piece of work happened once.
func TestWorkerKilledLosesNothing(t *testing.T) {
	s := newProcStack(t)
	c := newClient(t, s.base, a2a.TransportProtocolJSONRPC)

	const nFlights, nWork = 4, 3
	var flights, work []*a2a.Task
	for range nFlights {
		task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Helsinki to Oulu", nil)})
		expectState(t, task, a2a.TaskStateInputRequired, "date")
		flights = append(flights, task)
	}
	for range nWork {
		work = append(work, send(t, c, &a2a.SendMessageRequest{
			Message: userMsg("work through a crash", map[string]any{"delay": "2s"}),
			Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
		}))
	}
	s.worker.kill()

	// Answer while no worker runs: the calls wait for one.
	var wg sync.WaitGroup
	answered := make([]*a2a.Task, nFlights)
	errs := make([]error, nFlights)
	for i, task := range flights {
		wg.Go(func() {
			res, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: reply(task, "2027-05-0"+string(rune('1'+i)))})
			errs[i] = err
			if tk, ok := res.(*a2a.Task); ok {
				answered[i] = tk
			}
		})
	}
	s.startWorker()
	wg.Wait()

	for i := range flights {
		if errs[i] != nil {
			t.Fatalf("answer %d: %v", i, errs[i])
		}
		expectState(t, answered[i], a2a.TaskStateCompleted, "")
		if !strings.Contains(artifactText(answered[i], "booking"), "2027-05-0") {
			t.Errorf("booking %d = %q", i, artifactText(answered[i], "booking"))
		}
	}
	for _, w := range work {
		done := send(t, c, &a2a.SendMessageRequest{Message: w.History[0]}) // blocking resend waits for it
		expectState(t, done, a2a.TaskStateCompleted, "")
	}
	if n := s.effects("flight-"); n != nFlights {
		t.Errorf("%d flights booked, want %d", n, nFlights)
	}
	if n := s.effects("work-"); n != nWork {
		t.Errorf("work done for %d tasks, want %d", n, nWork)
	}
}

// TestFrontendKilledDuringBlockingSend kills the frontend while a client
// waits on a blocking SendMessage; the client's retry with the same
// messageId, through the restarted frontend, gets the task, not a second one.
func TestFrontendKilledDuringBlockingSend(t *testing.T) {
	s := newProcStack(t)
	c := newClient(t, s.base, a2a.TransportProtocolJSONRPC)
	msg := userMsg("survive the frontend", map[string]any{"delay": "2s"})

	callErr := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		callErr <- err
	}()
	// Wait until the task exists (its work has been recorded as started by
	// the workflow), then kill the frontend mid-call.
	waitFor(t, func() bool { return s.taskWorking(t, c, msg) }, "task to start")
	s.frontend.kill()
	if err := <-callErr; err == nil {
		t.Fatal("the blocking call survived its frontend being killed")
	}

	s.startFrontend()
	c = newClient(t, s.base, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: msg})
	expectState(t, task, a2a.TaskStateCompleted, "")
	if n := s.effects("work-"); n != 1 {
		t.Errorf("work done %d times, want once", n)
	}
}

// taskWorking reports whether the task the message creates is working, by
// resending it with returnImmediately (which never creates a second task).
func (s *procStack) taskWorking(t *testing.T, c interface {
	SendMessage(context.Context, *a2a.SendMessageRequest) (a2a.SendMessageResult, error)
}, msg *a2a.Message) bool {
	res, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		return false
	}
	task, ok := res.(*a2a.Task)
	return ok && task.Status.State == a2a.TaskStateWorking
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, bounded by the deadline
	}
}

// TestTripSurvivesWorkerKills runs the trip graph with the worker as its own
// process and kills it (SIGKILL) at several points: while the flight waits
// for input, right after the flight is booked (hotel and snowmobile
// starting), and right after the hotel is booked (the spa starting). After
// each restart the graph goes on; in the end every downstream agent got
// exactly one task per node.
func TestTripSurvivesWorkerKills(t *testing.T) {
	s := newProcStack(t)
	trip := s.withTripAgents("300ms")
	s.worker.kill()
	s.startWorker()
	s.frontend.kill()
	s.startFrontend()

	c := newClient(t, s.base, a2a.TransportProtocolJSONRPC)
	m := tripMsg("a trip to Levi")
	task := send(t, c, &a2a.SendMessageRequest{Message: m})
	expectState(t, task, a2a.TaskStateInputRequired, "from")

	s.worker.kill() // 1: the flight waits for input
	s.startWorker()
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "Oulu")})
	expectState(t, task, a2a.TaskStateInputRequired, "date")

	answered := make(chan error, 1)
	go func() {
		_, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: reply(task, "2027-01-15")})
		answered <- err
	}()
	waitFor(t, func() bool { return s.effects("flight-") == 1 }, "the flight booking")
	s.worker.kill() // 2: hotel and snowmobile about to start
	s.startWorker()
	waitFor(t, func() bool { return s.effects("hotel-") == 1 }, "the hotel booking")
	s.worker.kill() // 3: the spa about to start, the snowmobile maybe running
	s.startWorker()
	if err := <-answered; err != nil {
		t.Logf("the blocking answer ended with %v (its frontend call may outlive a kill)", err)
	}

	final := waitTask(t, c, task.ID, a2a.TaskStateCompleted)
	rows := summaryRows(t, final)
	for _, n := range []string{"flight", "hotel", "snowmobile", "spa"} {
		if rows[n]["state"] != string(a2a.TaskStateCompleted) {
			t.Errorf("node %s: %v", n, rows[n])
		}
	}
	for _, kind := range []string{"flight-", "hotel-", "snowmobile-"} {
		if n := s.effects(kind); n != 1 {
			t.Errorf("%s tasks made downstream: %d, want 1", kind, n)
		}
	}
	if n := trip.SpaExec.Total(); n != 1 {
		t.Errorf("the spa agent got %d messages, want 1", n)
	}
}

// withTripAgents serves the trip agents in this process on the stack's
// Temporal (their durable tasks run on the worker processes) and points the
// processes started from now on at them.
func (s *procStack) withTripAgents(tripDelay string) *stack.TripAgents {
	t := s.t
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	trip, err := stack.ListenTripAgents("127.0.0.1", 0, &agents.Spa{Delay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tc, _, err := stack.Dial(ctx, s.hostPort, env.Log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	go func() { _ = trip.Serve(ctx, tc, "default", testenv.Webhooks, env.Log) }()
	cfgPath := filepath.Join(t.TempDir(), "a2a.toml")
	if err := os.WriteFile(cfgPath, []byte(tripConfigTOML(trip)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.extraEnv = []string{"A2A_CONFIG=" + cfgPath, "A2A_TRIP_DELAY=" + tripDelay}
	return trip
}

func tripConfigTOML(t *stack.TripAgents) string {
	var b strings.Builder
	for _, a := range []struct{ name, url string }{{"flight", t.Flight}, {"hotel", t.Hotel}, {"snowmobile", t.Snowmobile}, {"spa", t.Spa}} {
		fmt.Fprintf(&b, "[[agents]]\nname = %q\ncardUrl = %q\n\n", a.name, a.url)
	}
	pb := config.TripPlaybook()
	fmt.Fprintf(&b, "[[playbooks]]\nname = %q\ndescription = %q\n", pb.Name, pb.Description)
	for _, n := range pb.Nodes {
		fmt.Fprintf(&b, "[[playbooks.nodes]]\nid = %q\nagent = %q\nmessage = %q\n", n.ID, n.Agent, n.Message)
		if len(n.DependsOn) > 0 {
			fmt.Fprintf(&b, "dependsOn = [%q]\n", n.DependsOn[0])
		}
	}
	return b.String()
}

// TestScaleOut runs two workers and two frontends as separate processes on
// one Temporal server. A client starts the trip on frontend A while a
// watcher follows it through SubscribeToTask on frontend B; one worker is
// killed with SIGKILL mid-graph. The graph completes and the watcher misses
// nothing: its event ids are contiguous up to the end.
func TestScaleOut(t *testing.T) {
	s := newProcStack(t)
	s.withTripAgents("400ms")
	s.worker.kill()
	s.frontend.kill()
	s.startWorker()
	w1 := s.worker
	s.startWorker() // a second worker on the same task queue
	s.startFrontend()
	a := s.base
	bAddr := freeAddr(t)
	startProc(t, "frontend", append(append([]string{}, s.temporal...), s.extraEnv...), "-addr", bAddr)
	b := "http://" + bAddr
	waitReady(t, b)

	c := newClient(t, a, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: tripMsg("a trip to Saariselkä")})
	expectState(t, task, a2a.TaskStateInputRequired, "from")
	watch, _ := subscribeRaw(ctxT(t), t, b, task.ID, "")
	first := <-watch
	if kind(first) != "task" {
		t.Fatalf("watcher starts with %s", kind(first))
	}

	answered := make(chan error, 1)
	go func() {
		_, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: reply(task, "from Helsinki on 2027-03-03")})
		answered <- err
	}()
	waitFor(t, func() bool { return s.effects("flight-") == 1 }, "the flight booking")
	w1.kill() // mid-graph: hotel and snowmobile starting
	var ids []int
	last := sseEvent{}
	for e := range watch {
		n, err := strconv.Atoi(e.id)
		if err != nil {
			t.Fatalf("event id %q", e.id)
		}
		ids = append(ids, n)
		last = e
	}
	if err := <-answered; err != nil {
		t.Logf("the answer's blocking call: %v", err)
	}
	start, _ := strconv.Atoi(first.id)
	for i, n := range ids {
		if n != start+i+1 {
			t.Fatalf("the watcher's ids are not contiguous from %d: %v", start, ids)
		}
	}
	if !strings.Contains(fmt.Sprint(last.data), "TASK_STATE_COMPLETED") {
		t.Fatalf("the watcher's last event: %v", last.data)
	}
	final, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || final.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("trip: %v %v", final.Status.State, err)
	}
	for _, k := range []string{"flight-", "hotel-", "snowmobile-"} {
		if n := s.effects(k); n != 1 {
			t.Errorf("%s: %d downstream tasks, want 1", k, n)
		}
	}
}
