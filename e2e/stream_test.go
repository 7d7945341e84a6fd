package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go.temporal.io/api/workflowservice/v1"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/durable-a2a/orchestrator/internal/testenv"
)

// collect reads a whole stream.
func collect(t *testing.T, events func(yield func(a2a.Event, error) bool)) []a2a.Event {
	t.Helper()
	var out []a2a.Event
	for ev, err := range events {
		if err != nil {
			t.Fatalf("stream error after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

// describe renders events compactly for comparison and messages.
func describe(evs []a2a.Event) []string {
	var out []string
	for _, ev := range evs {
		switch e := ev.(type) {
		case *a2a.Task:
			out = append(out, "task:"+string(e.Status.State))
		case *a2a.Message:
			out = append(out, "message")
		case *a2a.TaskStatusUpdateEvent:
			out = append(out, "status:"+string(e.Status.State))
		case *a2a.TaskArtifactUpdateEvent:
			out = append(out, fmt.Sprintf("artifact:%s:append=%v:last=%v", e.Artifact.Name, e.Append, e.LastChunk))
		}
	}
	return out
}

func TestSendStreamingMessage(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, env.BaseURL, b)
			evs := collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{
				Message: userMsg("stream me", map[string]any{"delay": "300ms", "chunks": 3}),
			}))
			got := strings.Join(describe(evs), " ")
			want := "task:TASK_STATE_SUBMITTED status:TASK_STATE_WORKING " +
				"artifact:result:append=false:last=false artifact:result:append=true:last=false artifact:result:append=true:last=true " +
				"status:TASK_STATE_COMPLETED"
			if got != want {
				t.Fatalf("events:\n got %s\nwant %s", got, want)
			}
			task := evs[0].(*a2a.Task)
			final, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got := artifactText(final, "result"); got != "chunk 1 of 3\n" || len(final.Artifacts[0].Parts) != 3 {
				t.Errorf("the chunks did not make one artifact of 3 parts: %d parts", len(final.Artifacts[0].Parts))
			}
		})
	}
}

func TestStreamingQuickReplyIsOneMessage(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolHTTPJSON)
	evs := collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: userMsg("help", nil)}))
	if got := describe(evs); len(got) != 1 || got[0] != "message" {
		t.Fatalf("events = %v, want one message", got)
	}
}

func TestStreamEndsWhenInputIsRequired(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	evs := collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: flightMsg("a flight from Kajaani", nil)}))
	got := describe(evs)
	if got[len(got)-1] != "status:TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("events = %v, want the stream to end at INPUT_REQUIRED", got)
	}
	task := evs[0].(*a2a.Task)
	// The answer, streamed too, carries the task on to its next question.
	m := reply(task, "to Joensuu")
	evs = collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: m}))
	if got := describe(evs); got[0] != "task:TASK_STATE_WORKING" || got[len(got)-1] != "status:TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("events = %v", got)
	}
}

func TestSubscribeErrors(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, env.BaseURL, b)
			done := send(t, c, &a2a.SendMessageRequest{Message: userMsg("quick", nil)})
			for _, err := range c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: done.ID}) {
				if !errors.Is(err, a2a.ErrUnsupportedOperation) {
					t.Fatalf("subscribe to a terminal task: %v, want UnsupportedOperationError", err)
				}
				break
			}
			for _, err := range c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: "8f2a3c1e-0000-4000-8000-000000000000"}) {
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Fatalf("subscribe to an unknown task: %v, want TaskNotFoundError", err)
				}
				break
			}
		})
	}
}

// TestManyWatchers: several subscribers on one task, through interrupted
// states, all see the same events in the same order; one leaving early
// changes nothing for the others or the task.
func TestManyWatchers(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Kemi", nil)})
	expectState(t, task, a2a.TaskStateInputRequired, "to")

	const n = 4
	results := make([][]string, n)
	var ready, wg sync.WaitGroup
	ready.Add(n + 1)
	for i := range n + 1 {
		wg.Go(func() {
			wc := newClient(t, env.BaseURL, bindings[i%len(bindings)])
			var got []a2a.Event
			first := true
			for ev, err := range wc.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					t.Errorf("watcher %d: %v", i, err)
					break
				}
				if first {
					ready.Done()
					first = false
				}
				got = append(got, ev)
				if i == n { // the early leaver
					break
				}
			}
			if i < n {
				results[i] = describe(got)
			}
		})
	}
	ready.Wait()
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "to Tornio")})
	expectState(t, task, a2a.TaskStateInputRequired, "date")
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "2027-08-08")})
	expectState(t, task, a2a.TaskStateCompleted, "")
	wg.Wait()

	want := "task:TASK_STATE_INPUT_REQUIRED status:TASK_STATE_WORKING status:TASK_STATE_INPUT_REQUIRED status:TASK_STATE_WORKING artifact:booking:append=false:last=false status:TASK_STATE_COMPLETED"
	for i, got := range results {
		if strings.Join(got, " ") != want {
			t.Errorf("watcher %d saw\n %v\nwant\n %s", i, got, want)
		}
	}
}

// sseEvent is one raw SSE event.
type sseEvent struct {
	id   string
	data map[string]any
}

// subscribeRaw opens SubscribeToTask over HTTP+JSON with an optional
// Last-Event-ID and returns the events as they come, and the keep-alive
// comments seen.
func subscribeRaw(ctx context.Context, t *testing.T, base string, id a2a.TaskID, lastEventID string) (<-chan sseEvent, func() int) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/rest/tasks/"+string(id)+":subscribe", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("subscribe: HTTP %d", resp.StatusCode)
	}
	out := make(chan sseEvent, 100)
	var mu sync.Mutex
	pings := 0
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var cur sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, ":"):
				mu.Lock()
				pings++
				mu.Unlock()
			case strings.HasPrefix(line, "id:"):
				cur.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "data:"):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data:")), &cur.data)
			case line == "" && cur.data != nil:
				out <- cur
				cur = sseEvent{}
			}
		}
	}()
	return out, func() int { mu.Lock(); defer mu.Unlock(); return pings }
}

func kind(e sseEvent) string {
	for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
		if _, ok := e.data[k]; ok {
			return k
		}
	}
	return "?"
}

// TestResumeWithLastEventID: every SSE event carries its sequence number as
// its id; a client that drops the connection and comes back with
// Last-Event-ID, to another frontend, gets exactly the events after it.
func TestResumeWithLastEventID(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{
		Message: userMsg("a long stream", map[string]any{"delay": "2s", "chunks": 10}),
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})

	// The full stream, as the reference.
	all, _ := subscribeRaw(ctxT(t), t, env.BaseURL, task.ID, "")
	var ref []sseEvent
	for e := range all {
		ref = append(ref, e)
	}

	// A second watcher started at the same time that leaves after 4 events.
	var seqs []int64
	for _, e := range ref {
		n, err := strconv.ParseInt(e.id, 10, 64)
		if err != nil {
			t.Fatalf("event id %q is not a sequence number", e.id)
		}
		seqs = append(seqs, n)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] && i > 1 {
			t.Fatalf("ids not increasing: %v", seqs)
		}
	}
	if kind(ref[len(ref)-1]) != "statusUpdate" {
		t.Fatalf("the stream did not end with the final status: %v", kind(ref[len(ref)-1]))
	}
	if len(ref) < 8 {
		t.Fatalf("only %d events", len(ref))
	}
	// The task is finished now; resuming needs a running one.
	live := send(t, c, &a2a.SendMessageRequest{
		Message: userMsg("another long stream", map[string]any{"delay": "2s", "chunks": 10}),
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})
	ctx, cancel := context.WithCancel(ctxT(t))
	first, _ := subscribeRaw(ctx, t, env.BaseURL, live.ID, "")
	var got []sseEvent
	for e := range first {
		got = append(got, e)
		if len(got) == 4 {
			break
		}
	}
	cancel() // the connection drops

	other, stop, err := env.AddFrontend()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rest, _ := subscribeRaw(ctxT(t), t, other, live.ID, got[len(got)-1].id)
	resumedFirst := true
	for e := range rest {
		if resumedFirst {
			resumedFirst = false
			if kind(e) != "task" || e.id != got[len(got)-1].id {
				t.Fatalf("resumed stream starts with %s id %s, want the task at id %s", kind(e), e.id, got[len(got)-1].id)
			}
			continue
		}
		got = append(got, e)
	}
	// Sequence numbers after the first Task event: contiguous, no gap, no repeat.
	var ids []string
	for _, e := range got[1:] {
		ids = append(ids, e.id)
	}
	for i := 1; i < len(ids); i++ {
		a, _ := strconv.Atoi(ids[i-1])
		b, _ := strconv.Atoi(ids[i])
		if b != a+1 {
			t.Fatalf("ids after resume are not contiguous: %v", ids)
		}
	}
	if kind(got[len(got)-1]) != "statusUpdate" || !strings.Contains(fmt.Sprint(got[len(got)-1].data), "COMPLETED") {
		t.Fatalf("resumed stream did not reach the end: %v", got[len(got)-1].data)
	}
	chunks := 0
	for _, e := range got {
		if kind(e) == "artifactUpdate" {
			chunks++
		}
	}
	if chunks != 10 {
		t.Errorf("saw %d of 10 chunks across the reconnect", chunks)
	}
}

func TestIdleStreamKeepAlive(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Hanko", nil)})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	events, pings := subscribeRaw(ctx, t, env.BaseURL, task.ID, "")
	<-events // the task
	waitFor(t, func() bool { return pings() >= 2 }, "keep-alives on an idle stream")
}

var _ = a2aclient.Config{}

// TestLongStreamStaysBounded streams an artifact in 20,000 chunks. The task
// continues as new as it goes, so no workflow run's history grows past a
// bound, and a subscriber that drops out midway resumes with Last-Event-ID
// and gets every chunk exactly once, in order.
func TestLongStreamStaysBounded(t *testing.T) {
	const chunks = 20000
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{
		Message: userMsg("a very long stream", map[string]any{"delay": "10s", "chunks": chunks}),
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})

	next := 1 // the chunk number expected next
	lastID := ""
	check := func(e sseEvent) {
		lastID = e.id
		if kind(e) != "artifactUpdate" {
			return
		}
		parts := e.data["artifactUpdate"].(map[string]any)["artifact"].(map[string]any)["parts"].([]any)
		for _, p := range parts {
			want := fmt.Sprintf("chunk %d of %d\n", next, chunks)
			if got := p.(map[string]any)["text"]; got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
			next++
		}
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	first, _ := subscribeRaw(ctx, t, env.BaseURL, task.ID, "")
	<-first // the task
	for e := range first {
		check(e)
		if next > chunks/3 {
			break
		}
	}
	cancel()

	rest, _ := subscribeRaw(ctxT(t), t, env.BaseURL, task.ID, lastID)
	if e := <-rest; kind(e) != "task" {
		t.Fatalf("resumed stream starts with %s", kind(e))
	}
	var final sseEvent
	for e := range rest {
		check(e)
		final = e
	}
	if next != chunks+1 {
		t.Fatalf("received %d of %d chunks", next-1, chunks)
	}
	if !strings.Contains(fmt.Sprint(final.data), "TASK_STATE_COMPLETED") {
		t.Fatalf("last event %v, want COMPLETED", final.data)
	}

	runs, err := env.Client.ListWorkflow(ctxT(t), &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowId = '" + string(task.ID) + "'", PageSize: 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.GetExecutions()) < 5 {
		t.Errorf("%d runs: the task did not continue as new", len(runs.GetExecutions()))
	}
	for _, r := range runs.GetExecutions() {
		if r.GetHistoryLength() > 4*testenv.HistoryLimit {
			t.Errorf("a run's history has %d events, want it bounded near %d", r.GetHistoryLength(), testenv.HistoryLimit)
		}
	}
}

// A frontend shutting down ends its open streams cleanly instead of
// waiting on them, and the client resumes on another frontend.
func TestShutdownEndsStreamsCleanly(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Kuusamo", nil)})
	other, stop, err := env.AddFrontend()
	if err != nil {
		t.Fatal(err)
	}
	events, _ := subscribeRaw(ctxT(t), t, other, task.ID, "")
	first := <-events
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(8 * time.Second): // the shutdown's own deadline is 10 s
		t.Fatal("shutdown waited on an open stream")
	}
	for range events {
	} // the stream ended
	rest, _ := subscribeRaw(ctxT(t), t, env.BaseURL, task.ID, first.id)
	if e := <-rest; kind(e) != "task" {
		t.Fatalf("resumed elsewhere with %s", kind(e))
	}
	send(t, c, &a2a.SendMessageRequest{Message: reply(task, "to Kemi on 2027-05-05")})
	got := ""
	for e := range rest {
		got = fmt.Sprint(e.data)
	}
	if !strings.Contains(got, "COMPLETED") {
		t.Errorf("the resumed stream ended with %s", got)
	}
}
