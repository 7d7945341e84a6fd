package activities

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/hashicorp/go-retryablehttp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-a2a/orchestrator/config"
)

// Activity types of the calls to downstream agents.
const (
	DownstreamSendName      = "DownstreamSend"
	DownstreamWatchName     = "DownstreamWatch"
	DownstreamCancelName    = "DownstreamCancel"
	DownstreamSubscribeName = "DownstreamSubscribe"
)

// WebhookPath is where a node task's downstream agent pushes its events:
// WebhookPath + node task ID, below the frontend's base URL.
const WebhookPath = "/webhooks/tasks/"

// ErrTypeDownstream marks a downstream call that cannot succeed by retrying
// (the agent refused the request).
const ErrTypeDownstream = "DownstreamRefused"

// DownstreamCall sends one message to a downstream agent.
type DownstreamCall struct {
	Agent     string      `json:"agent"`
	MessageID string      `json:"messageId"`
	TaskID    string      `json:"taskId,omitempty"`
	ContextID string      `json:"contextId,omitempty"`
	Parts     []*a2a.Part `json:"parts"`
}

// DownstreamResult is where the downstream task stands.
type DownstreamResult struct {
	TaskID    string          `json:"taskId,omitempty"`
	ContextID string          `json:"contextId,omitempty"`
	State     a2a.TaskState   `json:"state"`
	Question  string          `json:"question,omitempty"`
	Artifacts []*a2a.Artifact `json:"artifacts,omitempty"`
	// Reply is the text of a Message answer (the agent made no task).
	Reply string `json:"reply,omitempty"`
	// Push says the agent offers push notifications.
	Push bool `json:"push,omitempty"`
}

// Settled: the downstream task is terminal or waits for an answer.
func (r DownstreamResult) Settled() bool {
	return r.Reply != "" || r.State.Terminal() || r.State == a2a.TaskStateInputRequired || r.State == a2a.TaskStateAuthRequired
}

// Downstream calls the agents of the registry with the a2a-go client over
// go-retryablehttp. An activity follows the downstream task for at most
// WatchFor; past that it reports where the task stands and the workflow
// waits on a durable timer, which costs nothing, before looking again.
type Downstream struct {
	Config   *config.Config
	WatchFor time.Duration
	Log      *slog.Logger

	mu      sync.Mutex
	clients map[string]agentClient
}

type agentClient struct {
	cl   *a2aclient.Client
	card *a2a.AgentCard
}

// Register adds the activities to a worker.
func (d *Downstream) Register(r interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}) {
	r.RegisterActivityWithOptions(d.Send, activity.RegisterOptions{Name: DownstreamSendName})
	r.RegisterActivityWithOptions(d.Watch, activity.RegisterOptions{Name: DownstreamWatchName})
	r.RegisterActivityWithOptions(d.Cancel, activity.RegisterOptions{Name: DownstreamCancelName})
	r.RegisterActivityWithOptions(d.Subscribe, activity.RegisterOptions{Name: DownstreamSubscribeName})
}

// Subscribe registers this server's webhook for a node task with the
// downstream task's agent; it returns false when there is nowhere to
// register (no webhook base URL configured).
func (d *Downstream) Subscribe(ctx context.Context, agent, downstreamTaskID, nodeTaskID, token string) (bool, error) {
	if d.Config.WebhookBaseURL == "" {
		return false, nil
	}
	cl, _, err := d.client(ctx, agent)
	if err != nil {
		return false, err
	}
	_, err = cl.CreateTaskPushConfig(ctx, &a2a.PushConfig{
		TaskID: a2a.TaskID(downstreamTaskID),
		ID:     "orchestrator-" + nodeTaskID,
		URL:    strings.TrimRight(d.Config.WebhookBaseURL, "/") + WebhookPath + nodeTaskID,
		Token:  token,
	})
	if err != nil {
		if errors.Is(err, a2a.ErrUnsupportedOperation) || errors.Is(err, a2a.ErrTaskNotFound) {
			return false, nil // the task ended meanwhile: the workflow reads it
		}
		return false, classify(agent, err)
	}
	return true, nil
}

// beat heartbeats every second with the latest result, so that a quiet
// downstream task does not look like a dead worker, and a dead worker is
// noticed within the heartbeat timeout.
type beat struct {
	mu   sync.Mutex
	last DownstreamResult
	stop chan struct{}
	done chan struct{}
}

func startBeat(ctx context.Context, r DownstreamResult) *beat {
	b := &beat{last: r, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				b.mu.Lock()
				r := b.last
				b.mu.Unlock()
				activity.RecordHeartbeat(ctx, r)
			}
		}
	}()
	return b
}

func (b *beat) set(ctx context.Context, r DownstreamResult) {
	b.mu.Lock()
	b.last = r
	b.mu.Unlock()
	activity.RecordHeartbeat(ctx, r)
}

func (b *beat) close() {
	close(b.stop)
	<-b.done
}

// Send delivers the message and follows the task it makes or continues. A
// retry after a crash that knows the task (from the heartbeat) watches it
// instead of sending again; the message's deterministic ID lets an agent
// that deduplicates by messageId ignore a resend in the remaining window.
func (d *Downstream) Send(ctx context.Context, call DownstreamCall) (r DownstreamResult, err error) {
	defer observe(ctx, call.Agent, time.Now(), &err)
	return d.send(ctx, call)
}

// observe records a downstream call's latency, and its errors.
func observe(ctx context.Context, agent string, start time.Time, err *error) {
	m := activity.GetMetricsHandler(ctx).WithTags(map[string]string{"agent": agent})
	m.Timer("a2a_downstream_call_latency").Record(time.Since(start))
	if *err != nil {
		m.Counter("a2a_downstream_call_errors").Inc(1)
	}
}

func (d *Downstream) send(ctx context.Context, call DownstreamCall) (DownstreamResult, error) {
	if activity.HasHeartbeatDetails(ctx) {
		var known DownstreamResult
		if err := activity.GetHeartbeatDetails(ctx, &known); err == nil && known.TaskID != "" {
			return d.watch(ctx, call.Agent, known)
		}
	}
	cl, card, err := d.client(ctx, call.Agent)
	if err != nil {
		return DownstreamResult{}, err
	}
	msg := &a2a.Message{
		ID: call.MessageID, Role: a2a.MessageRoleUser, Parts: call.Parts,
		TaskID: a2a.TaskID(call.TaskID), ContextID: call.ContextID,
	}
	start := DownstreamResult{TaskID: call.TaskID, ContextID: call.ContextID}
	b := startBeat(ctx, start)
	defer b.close()
	if card.Capabilities.Streaming {
		r, err := d.follow(ctx, cl, call.Agent, start, func(c context.Context) iter.Seq2[a2a.Event, error] {
			return cl.SendStreamingMessage(c, &a2a.SendMessageRequest{Message: msg})
		}, b)
		return withPush(r, card), err
	}
	res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		return DownstreamResult{}, classify(call.Agent, err)
	}
	r := fromResult(res)
	b.set(ctx, r)
	if r.Settled() {
		return withPush(r, card), nil
	}
	r, err = d.poll(ctx, cl, call.Agent, r, b)
	return withPush(r, card), err
}

// Watch follows a known downstream task until it settles or WatchFor passes.
func (d *Downstream) Watch(ctx context.Context, agent string, known DownstreamResult) (r DownstreamResult, err error) {
	defer observe(ctx, agent, time.Now(), &err)
	return d.watch(ctx, agent, known)
}

func (d *Downstream) watch(ctx context.Context, agent string, known DownstreamResult) (DownstreamResult, error) {
	cl, card, err := d.client(ctx, agent)
	if err != nil {
		return DownstreamResult{}, err
	}
	b := startBeat(ctx, known)
	defer b.close()
	var r DownstreamResult
	if card.Capabilities.Streaming {
		r, err = d.follow(ctx, cl, agent, known, func(c context.Context) iter.Seq2[a2a.Event, error] {
			return cl.SubscribeToTask(c, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(known.TaskID)})
		}, b)
	} else {
		r, err = d.poll(ctx, cl, agent, known, b)
	}
	return withPush(r, card), err
}

// Cancel cancels a downstream task; one that already ended is fine.
func (d *Downstream) Cancel(ctx context.Context, agent, taskID string) error {
	cl, _, err := d.client(ctx, agent)
	if err != nil {
		return err
	}
	_, err = cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
	if err == nil || errors.Is(err, a2a.ErrTaskNotCancelable) || errors.Is(err, a2a.ErrTaskNotFound) {
		return nil
	}
	return fmt.Errorf("cancel %s task %s: %w", agent, taskID, err)
}

// follow reads a stream until the task settles or WatchFor passes, then
// reads the whole task.
func (d *Downstream) follow(ctx context.Context, cl *a2aclient.Client, agent string, r DownstreamResult, open func(context.Context) iter.Seq2[a2a.Event, error], b *beat) (DownstreamResult, error) {
	sctx, cancel := context.WithTimeout(ctx, d.WatchFor)
	defer cancel()
	for ev, err := range open(sctx) {
		if err != nil {
			if sctx.Err() != nil && ctx.Err() == nil && r.TaskID != "" {
				break // watched long enough: the workflow waits on
			}
			if errors.Is(err, a2a.ErrUnsupportedOperation) && r.TaskID != "" {
				break // the task ended before the subscription: read it
			}
			return r, classify(agent, err)
		}
		switch e := ev.(type) {
		case *a2a.Message:
			return fromResult(e), nil
		case *a2a.Task:
			r.TaskID, r.ContextID, r.State = string(e.ID), e.ContextID, e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			r.State = e.Status.State
		}
		b.set(ctx, r)
		if r.Settled() {
			break
		}
	}
	if r.TaskID == "" {
		if sctx.Err() != nil && ctx.Err() == nil {
			return r, fmt.Errorf("agent %s sent no task within %s", agent, d.WatchFor)
		}
		return r, temporal.NewNonRetryableApplicationError(agent+" answered with no task", ErrTypeDownstream, nil)
	}
	task, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(r.TaskID)})
	if err != nil {
		return r, classify(agent, err)
	}
	return fromResult(task), nil
}

// poll reads the task with a growing pause until it settles or WatchFor passes.
func (d *Downstream) poll(ctx context.Context, cl *a2aclient.Client, agent string, r DownstreamResult, b *beat) (DownstreamResult, error) {
	deadline := time.Now().Add(d.WatchFor)
	pause := 20 * time.Millisecond
	for !r.Settled() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(pause*3/2, time.Second)
		task, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(r.TaskID)})
		if err != nil {
			return r, classify(agent, err)
		}
		r = fromResult(task)
		b.set(ctx, r)
	}
	return r, nil
}

func withPush(r DownstreamResult, card *a2a.AgentCard) DownstreamResult {
	r.Push = card.Capabilities.PushNotifications
	return r
}

func fromResult(res a2a.SendMessageResult) DownstreamResult {
	switch v := res.(type) {
	case *a2a.Message:
		return DownstreamResult{Reply: partsText(v.Parts), ContextID: v.ContextID, State: a2a.TaskStateCompleted}
	case *a2a.Task:
		r := DownstreamResult{TaskID: string(v.ID), ContextID: v.ContextID, State: v.Status.State, Artifacts: v.Artifacts}
		if v.Status.Message != nil {
			r.Question = partsText(v.Status.Message.Parts)
		}
		return r
	}
	return DownstreamResult{}
}

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(t))
		}
	}
	return b.String()
}

// classify: protocol refusals will not change on retry; anything else
// (the agent unreachable, a 5xx) is retried by Temporal with backoff.
func classify(agent string, err error) error {
	for _, refused := range []error{a2a.ErrInvalidParams, a2a.ErrTaskNotFound, a2a.ErrUnsupportedOperation,
		a2a.ErrUnsupportedContentType, a2a.ErrMethodNotFound, a2a.ErrUnauthenticated, a2a.ErrUnauthorized} {
		if errors.Is(err, refused) {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %s refused the request: %v", agent, err), ErrTypeDownstream, nil)
		}
	}
	return fmt.Errorf("call agent %s: %w", agent, err)
}

// client resolves an agent's card once and keeps a client for it.
func (d *Downstream) client(ctx context.Context, agent string) (*a2aclient.Client, *a2a.AgentCard, error) {
	a, ok := d.Config.Agent(agent)
	if !ok {
		return nil, nil, temporal.NewNonRetryableApplicationError("unknown agent "+agent, ErrTypeDownstream, nil)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.clients == nil {
		d.clients = map[string]agentClient{}
	}
	if c, ok := d.clients[agent]; ok {
		return c.cl, c.card, nil
	}
	httpClient := newHTTPClient(a)
	card, err := agentcard.NewResolver(httpClient).Resolve(ctx, a.CardURL)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: resolve card at %s: %w", agent, a.CardURL, err)
	}
	cl, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(httpClient), a2aclient.WithRESTTransport(httpClient),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON}}))
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: %w", agent, err)
	}
	d.clients[agent] = agentClient{cl: cl, card: card}
	return cl, card, nil
}

// newHTTPClient retries connection failures and 5xx answers with backoff,
// and adds the agent's credentials to every request.
func newHTTPClient(a config.Agent) *http.Client {
	rc := retryablehttp.NewClient()
	rc.RetryMax = 3
	rc.RetryWaitMin = 100 * time.Millisecond
	rc.RetryWaitMax = 2 * time.Second
	rc.Logger = nil
	c := rc.StandardClient()
	c.Transport = credentials{next: c.Transport, agent: a}
	return c
}

type credentials struct {
	next  http.RoundTripper
	agent config.Agent
}

func (c credentials) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.agent.APIKey == "" && c.agent.BearerToken == "" {
		return c.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	if c.agent.APIKey != "" {
		r.Header.Set(c.agent.APIKeyHeader, c.agent.APIKey)
	}
	if c.agent.BearerToken != "" {
		r.Header.Set("Authorization", "Bearer "+c.agent.BearerToken)
	}
	return c.next.RoundTrip(r)
}
