// Package server implements the A2A protocol on Temporal: a2a-go's
// RequestHandler whose every task is a workflow, the Agent Card, and the HTTP
// routes of the JSON-RPC and HTTP+JSON bindings. It keeps no state of its own.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"
	"github.com/sourcegraph/conc"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/skills"
	"github.com/durable-a2a/orchestrator/workflows"
)

// Principal is who calls: the owner of the tasks it creates, and its tenant.
type Principal struct {
	Owner  string
	Tenant string
}

// Handler is the A2A RequestHandler backed by Temporal.
type Handler struct {
	temporal  client.Client
	namespace string
	catalog   *skills.Catalog
	log       *slog.Logger
	// principal tells who is calling; authentication fills it in.
	principal func(context.Context) Principal
	// Webhooks says which addresses push notification URLs may use.
	Webhooks activities.WebhookPolicy
	// Extended makes the extended Agent Card for an authenticated caller;
	// nil when callers do not authenticate (there is no extended card).
	Extended func(Principal) *a2a.AgentCard
	// draining closes when the frontend shuts down: open streams end
	// cleanly (their clients resume elsewhere with Last-Event-ID) while
	// unary requests in flight finish.
	draining chan struct{}
	drainMu  sync.Once
	// Streams, when set, hears streams open (+1) and close (-1).
	Streams func(delta int)
	// facts of running tasks, so that replies skip a describe.
	facts *factCache
}

// CountState counts the tasks in a state, all owners (for metrics).
func (h *Handler) CountState(state string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := h.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus != 'ContinuedAsNew' AND %s = '%s'", workflows.TaskWorkflowName, workflows.SAState.GetName(), state),
	})
	if err != nil {
		return 0, err
	}
	return resp.GetCount(), nil
}

// Drain ends the open streams; the HTTP server's shutdown then finishes.
func (h *Handler) Drain() { h.drainMu.Do(func() { close(h.draining) }) }

// Ready reports whether Temporal answers (GET /readyz).
func (h *Handler) Ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain")
	if _, err := h.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("temporal unreachable\n"))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

var _ a2asrv.RequestHandler = (*Handler)(nil)

// NewHandler makes a handler that runs tasks on Temporal.
func NewHandler(c client.Client, namespace string, catalog *skills.Catalog, log *slog.Logger) *Handler {
	return &Handler{
		temporal: c, namespace: namespace, catalog: catalog, log: log, draining: make(chan struct{}),
		principal: principalFrom, facts: newFactCache(10000),
	}
}

// taskNamespace seeds task IDs derived from (tenant, owner, messageId).
var taskNamespace = uuid.MustParse("6f1c3f5e-5b7a-4c1e-9d43-2a7f0c6b9e11")

// newTaskID derives the task ID from the message that creates it, so that a
// resent message (same sender, same messageId) finds its task instead of
// creating a second one, whichever frontend it reaches.
func newTaskID(p Principal, messageID string) a2a.TaskID {
	return a2a.TaskID(uuid.NewSHA1(taskNamespace, []byte(p.Tenant+"\x00"+p.Owner+"\x00"+messageID)).String())
}

// SendMessage starts a task, or delivers a message to the task it names.
func (h *Handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if err := validateSend(req); err != nil {
		return nil, err
	}
	p := h.principal(ctx)
	p.Tenant = tenantOf(ctx, req.Tenant)
	returnNow := req.Config != nil && req.Config.ReturnImmediately
	reply, view, err := h.send(ctx, p, req.Message, returnNow, pushConfigOf(req.Config))
	if err != nil {
		return nil, err
	}
	if reply != nil {
		return reply, nil
	}
	return trimHistory(view.Task, historyLength(req.Config)), nil
}

// send starts a task or delivers the message to its task. A push config
// sent along is registered with the task before the message is applied.
func (h *Handler) send(ctx context.Context, p Principal, msg *a2a.Message, returnNow bool, pushCfg *a2a.PushConfig) (*a2a.Message, *workflows.TaskView, error) {
	if msg.TaskID != "" {
		if pushCfg != nil {
			cfg := *pushCfg
			cfg.TaskID, cfg.Tenant = msg.TaskID, p.Tenant
			if _, err := h.createPush(ctx, p, &cfg); err != nil {
				return nil, nil, err
			}
		}
		view, err := h.continueTask(ctx, p, msg, returnNow)
		return nil, view, err
	}
	return h.startTask(ctx, p, msg, returnNow, pushCfg)
}

func (h *Handler) startTask(ctx context.Context, p Principal, msg *a2a.Message, returnNow bool, pushCfg *a2a.PushConfig) (*a2a.Message, *workflows.TaskView, error) {
	skillID, def, err := h.catalog.Pick(msg)
	if err != nil {
		return nil, nil, a2a.NewError(a2a.ErrInvalidParams, err.Error())
	}
	if def.Validate != nil {
		if err := def.Validate(msg); err != nil {
			return nil, nil, a2a.NewError(a2a.ErrInvalidParams, err.Error())
		}
	}
	contextID := msg.ContextID
	if contextID == "" {
		contextID = a2a.NewContextID()
	}
	if def.Reply != nil {
		if reply := def.Reply(msg); reply != nil {
			reply.ContextID = contextID
			return reply, nil, nil
		}
	}
	var args json.RawMessage
	if def.Prepare != nil {
		if args, err = def.Prepare(msg); err != nil {
			return nil, nil, a2a.NewError(a2a.ErrInvalidParams, err.Error())
		}
	}
	refs, err := h.references(ctx, p, msg)
	if err != nil {
		return nil, nil, err
	}
	push, err := h.inlinePush(ctx, pushCfg)
	if err != nil {
		return nil, nil, err
	}
	taskID := newTaskID(p, msg.ID)
	stored := *msg
	stored.ContextID = contextID
	stored.TaskID = taskID
	in := workflows.TaskInput{TaskID: taskID, ContextID: contextID, Owner: p.Owner, Tenant: p.Tenant, Skill: skillID, Message: &stored, Args: args, References: refs, Push: push}

	start := h.temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       string(taskID),
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// A finished task's ID is never reused: a resend finds it, not a new run.
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		Memo:                  map[string]any{workflows.MemoContextID: contextID, workflows.MemoOwner: p.Owner, workflows.MemoTenant: p.Tenant},
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.SAContextID.ValueSet(saKey("context", contextID)),
			workflows.SAOwner.ValueSet(saKey("owner", p.Owner)),
			workflows.SATenant.ValueSet(saKey("tenant", p.Tenant)),
			workflows.SAState.ValueSet(string(a2a.TaskStateSubmitted)),
			workflows.SAStatusTime.ValueSet(time.Now().UTC()),
		),
	}, workflows.TaskWorkflowName, in)
	// Wait for the new task to be listed while it runs.
	var listedWG conc.WaitGroup
	defer listedWG.Wait()
	listedWG.Go(func() { h.awaitListed(ctx, taskID) })
	handle, err := h.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			// Fresh per call: the workflow recognises a resent message by its
			// messageId and answers with the task as it is now, where
			// Temporal's update-ID dedupe would replay the first answer.
			UpdateID:     uuid.NewString(),
			UpdateName:   workflows.UpdateSend,
			Args:         []any{workflows.SendInput{Message: &stored, ReturnImmediately: returnNow}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err == nil {
		var view workflows.TaskView
		if err = handle.Get(ctx, &view); err == nil {
			return nil, &view, nil
		}
	}
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) || isCompleted(err) {
		// The task this message made has already finished: a resend gets it.
		view, getErr := h.getTask(ctx, p, taskID)
		return nil, view, getErr
	}
	return nil, nil, h.mapError(ctx, err, "start task")
}

func (h *Handler) continueTask(ctx context.Context, p Principal, msg *a2a.Message, returnNow bool) (*workflows.TaskView, error) {
	info, cached, err := h.describeRunning(ctx, p, msg.TaskID)
	if err != nil {
		return nil, err
	}
	if msg.ContextID != "" && msg.ContextID != info.contextID {
		return nil, a2a.NewError(a2a.ErrInvalidParams,
			fmt.Sprintf("message.contextId %q does not match the context of task %s", msg.ContextID, msg.TaskID))
	}
	terminal := func() (*workflows.TaskView, error) {
		if cached { // the facts came from memory: read how it ended
			var err error
			if info, err = h.describe(ctx, p, msg.TaskID); err != nil {
				return nil, err
			}
		}
		// A resend of a message the task took before it finished gets the task.
		if view, err := h.finalTask(ctx, msg.TaskID, info); err == nil && hasMessage(view.Task, msg.ID) {
			return view, nil
		}
		return nil, a2a.NewError(a2a.ErrUnsupportedOperation,
			fmt.Sprintf("task %s is in a terminal state and accepts no more messages", msg.TaskID))
	}
	if !info.running {
		return terminal()
	}
	stored := *msg
	stored.ContextID = info.contextID
	view, err := h.update(ctx, msg.TaskID, workflows.UpdateSend, workflows.SendInput{Message: &stored, ReturnImmediately: returnNow})
	if err == nil {
		return view, nil
	}
	if h.closedMeanwhile(ctx, msg.TaskID, err) {
		return terminal()
	}
	return nil, h.mapError(ctx, err, "send message")
}

// GetTask returns a task's current state.
func (h *Handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "historyLength must not be negative")
	}
	p := h.principal(ctx)
	p.Tenant = tenantOf(ctx, req.Tenant)
	view, err := h.getTask(ctx, p, req.ID)
	if err != nil {
		return nil, err
	}
	return trimHistory(view.Task, req.HistoryLength), nil
}

func (h *Handler) getTask(ctx context.Context, p Principal, id a2a.TaskID) (*workflows.TaskView, error) {
	info, err := h.describe(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if !info.running {
		return h.finalTask(ctx, id, info)
	}
	v, err := h.temporal.QueryWorkflow(ctx, string(id), "", workflows.QueryTask)
	if err == nil {
		var view workflows.TaskView
		if err = v.Get(&view); err == nil {
			return &view, nil
		}
	}
	if isCompleted(err) {
		return h.finalTask(ctx, id, info)
	}
	return nil, h.mapError(ctx, err, "query task")
}

// finalTask reads a finished task from its workflow's close event, which
// needs no worker.
func (h *Handler) finalTask(ctx context.Context, id a2a.TaskID, info taskInfo) (*workflows.TaskView, error) {
	it := h.temporal.GetWorkflowHistory(ctx, string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, h.mapError(ctx, err, "read task result")
		}
		if attrs := ev.GetWorkflowExecutionCompletedEventAttributes(); attrs != nil {
			var task a2a.Task
			if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetResult(), &task); err != nil {
				return nil, fmt.Errorf("decode task %s: %w", id, err)
			}
			return &workflows.TaskView{Task: &task}, nil
		}
	}
	// Terminated or failed outside the protocol (for example by an operator
	// in the Temporal UI): report it as failed.
	ts := info.closeTime
	return &workflows.TaskView{Task: &a2a.Task{ID: id, ContextID: info.contextID, Status: a2a.TaskStatus{
		State:     a2a.TaskStateFailed,
		Timestamp: &ts,
		Message:   a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("the task's workflow was ended outside the A2A protocol")),
	}}}, nil
}

// CancelTask cancels a task and returns once its work has stopped.
func (h *Handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req.ID == "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "id is required")
	}
	p := h.principal(ctx)
	p.Tenant = tenantOf(ctx, req.Tenant)
	info, err := h.describe(ctx, p, req.ID)
	if err != nil {
		return nil, err
	}
	notCancelable := a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %s is in a terminal state", req.ID))
	if !info.running {
		return nil, notCancelable
	}
	view, err := h.update(ctx, req.ID, workflows.UpdateCancel, workflows.CancelInput{Metadata: req.Metadata})
	if err == nil {
		return view.Task, nil
	}
	if h.closedMeanwhile(ctx, req.ID, err) {
		return nil, notCancelable
	}
	return nil, h.mapError(ctx, err, "cancel task")
}

// GetExtendedAgentCard returns the card for authenticated callers.
func (h *Handler) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if h.Extended == nil {
		return nil, a2a.NewError(a2a.ErrUnsupportedOperation, "no extended agent card (capabilities.extendedAgentCard is false)")
	}
	return h.Extended(h.principal(ctx)), nil
}

type taskInfo struct {
	contextID string
	running   bool
	closeTime time.Time
}

// describeRunning is describe for a call that only goes on with a running
// task: a task this frontend has seen running is taken as running still
// (cached true), and the call finds out from Temporal if it has ended.
func (h *Handler) describeRunning(ctx context.Context, p Principal, id a2a.TaskID) (info taskInfo, cached bool, err error) {
	if f, ok := h.facts.get(id); ok {
		if f.owner != p.Owner || f.tenant != p.Tenant {
			return taskInfo{}, false, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s not found", id))
		}
		return taskInfo{contextID: f.contextID, running: true}, true, nil
	}
	info, err = h.describe(ctx, p, id)
	if err == nil && info.running {
		h.facts.put(id, taskFacts{owner: p.Owner, tenant: p.Tenant, contextID: info.contextID})
	}
	return info, false, err
}

// describe finds a task's workflow and checks the caller may see it; a task
// of another owner or tenant is reported exactly as a missing one.
func (h *Handler) describe(ctx context.Context, p Principal, id a2a.TaskID) (taskInfo, error) {
	notFound := a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s not found", id))
	if _, err := uuid.Parse(string(id)); err != nil {
		return taskInfo{}, notFound // not an ID this server makes
	}
	resp, err := h.temporal.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return taskInfo{}, notFound
		}
		return taskInfo{}, h.mapError(ctx, err, "describe task")
	}
	ex := resp.GetWorkflowExecutionInfo()
	if ex.GetType().GetName() != workflows.TaskWorkflowName {
		return taskInfo{}, notFound
	}
	memo := ex.GetMemo().GetFields()
	if memoString(memo, workflows.MemoOwner) != p.Owner || memoString(memo, workflows.MemoTenant) != p.Tenant {
		return taskInfo{}, notFound
	}
	info := taskInfo{
		contextID: memoString(memo, workflows.MemoContextID),
		running:   ex.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
	}
	if ct := ex.GetCloseTime(); ct != nil {
		info.closeTime = ct.AsTime().UTC()
	}
	return info, nil
}

func memoString(m map[string]*commonpb.Payload, key string) string {
	var s string
	if p, ok := m[key]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &s)
	}
	return s
}

// references reads the tasks a message names in referenceTaskIds. Each must
// be the caller's: another owner's task is reported as missing, exactly as
// an unknown one.
func (h *Handler) references(ctx context.Context, p Principal, msg *a2a.Message) ([]workflows.Reference, error) {
	const maxRefs = 20
	if len(msg.ReferenceTasks) > maxRefs {
		return nil, invalid("message.referenceTaskIds: at most %d", maxRefs)
	}
	var refs []workflows.Reference
	for _, id := range msg.ReferenceTasks {
		view, err := h.getTask(ctx, p, id)
		if err != nil {
			return nil, err
		}
		refs = append(refs, workflows.Reference{TaskID: id, Artifacts: view.Task.Artifacts})
	}
	return refs, nil
}

// update runs an Update on a task's workflow and returns the task it answers
// with. An update that meets a failed workflow task (it raced the workflow's
// completion) never ran, so it is sent again; the workflow dedupes messages
// by messageId, so nothing is applied twice.
func (h *Handler) update(ctx context.Context, id a2a.TaskID, name string, arg any) (*workflows.TaskView, error) {
	var err error
	for attempt := range 10 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(min(attempt, 4)) * 25 * time.Millisecond):
			}
		}
		var handle client.WorkflowUpdateHandle
		handle, err = h.temporal.UpdateWorkflow(ctx, updateOptions(id, name, arg))
		if err == nil {
			var view workflows.TaskView
			if err = handle.Get(ctx, &view); err == nil {
				return &view, nil
			}
		}
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeMoved {
			continue // the task continued as new: the next run answers
		}
		if appErr != nil || isCompleted(err) || ctx.Err() != nil {
			return nil, err
		}
	}
	return nil, err
}

func updateOptions(id a2a.TaskID, name string, arg any) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID:   string(id),
		UpdateID:     uuid.NewString(),
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
}

// closedMeanwhile reports whether an update failed because the task's
// workflow closed after it was described (the update then never ran).
func (h *Handler) closedMeanwhile(ctx context.Context, id a2a.TaskID, err error) bool {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) || ctx.Err() != nil {
		return false
	}
	if isCompleted(err) {
		return true
	}
	resp, derr := h.temporal.DescribeWorkflowExecution(ctx, string(id), "")
	return derr == nil && resp.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

func hasMessage(t *a2a.Task, id string) bool {
	for _, m := range t.History {
		if m.ID == id && m.Role == a2a.MessageRoleUser {
			return true
		}
	}
	return false
}

// isCompleted reports an error that says the workflow has already closed.
func isCompleted(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// mapError turns a Temporal error into the A2A error the client should see.
func (h *Handler) mapError(ctx context.Context, err error, op string) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case workflows.ErrTypeUnsupported:
			return a2a.NewError(a2a.ErrUnsupportedOperation, appErr.Message())
		case workflows.ErrTypeNotCancelable:
			return a2a.NewError(a2a.ErrTaskNotCancelable, appErr.Message())
		case workflows.ErrTypeInvalidParams:
			return a2a.NewError(a2a.ErrInvalidParams, appErr.Message())
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	h.log.ErrorContext(ctx, "temporal call failed", "op", op, "err", err)
	return a2a.NewError(a2a.ErrInternalError, op+" failed: the task engine is unavailable, try again")
}
