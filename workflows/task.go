package workflows

import (
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Skills maps a skill ID to the code that runs it.
type Skills map[string]Skill

// Tasks runs A2A tasks as workflows with the given skills.
type Tasks struct {
	Skills Skills
	// HistoryLimit is the Temporal history length at which a waiting task
	// continues as new; 0 follows the server's suggestion.
	HistoryLimit int
	// PushGiveUp bounds the retries of one push notification (default 1h).
	PushGiveUp time.Duration
	// DownstreamAttempts bounds the tries of a call to an unreachable
	// downstream agent before its node fails (default 15, about ten minutes).
	DownstreamAttempts int
}

// Register adds the task workflow to a worker.
func (t *Tasks) Register(r interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
}) {
	r.RegisterWorkflowWithOptions(t.Run, workflow.RegisterOptions{Name: TaskWorkflowName})
}

// Run is the task workflow: it accepts the first message, runs the skill, and
// ends when the task reaches a terminal state, returning the final task.
func (t *Tasks) Run(ctx workflow.Context, in TaskInput) (*a2a.Task, error) {
	st := newTaskState(in)
	workCtx, cancelWork := workflow.WithCancel(ctx)
	// The first message is the task's before any handler runs, so that the
	// Update-with-Start delivering it finds it already applied.
	if parent := workflow.GetInfo(ctx).ParentWorkflowExecution; parent != nil {
		// A node of an orchestrated graph: its parent hears of its states
		// and forwards the client's answers to it.
		st.onStatus = func(ctx workflow.Context, s a2a.TaskStatus) {
			ns := NodeStatus{TaskID: st.Task.ID, State: s.State, Question: textOf(s.Message)}
			workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalNodeStatus, ns)
		}
		forward := workflow.GetSignalChannel(ctx, SignalForward)
		workflow.Go(ctx, func(ctx workflow.Context) {
			for {
				var in SendInput
				if !forward.Receive(ctx, &in) {
					return
				}
				if in.Message != nil {
					_, _ = st.accept(ctx, in.Message)
				}
			}
		})
	}
	resuming := st.Waiting
	st.Waiting = false
	if in.Carry == nil && in.Push != nil {
		st.addPush(*in.Push) // before the first event: it hears them all
	}
	if err := t.pushHandlers(ctx, st); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateWake,
		func(ctx workflow.Context, token string) error { st.Wakes++; return nil },
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, token string) error {
			if st.WebhookToken == "" || token != st.WebhookToken {
				return temporal.NewApplicationError("bad webhook token", ErrTypeInvalidParams)
			}
			return nil
		}}); err != nil {
		return nil, fmt.Errorf("set wake handler: %w", err)
	}
	if in.Carry == nil {
		st.acceptMessage(in.Message)
		if err := st.setStatus(ctx, a2a.TaskStateSubmitted, nil); err != nil {
			return nil, err
		}
	}

	if err := workflow.SetQueryHandler(ctx, QueryTask, func() (*TaskView, error) {
		return st.view(), nil
	}); err != nil {
		return nil, fmt.Errorf("set query handler: %w", err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func(after int64) (*EventsView, error) {
		return st.eventsAfter(after, 500), nil
	}); err != nil {
		return nil, fmt.Errorf("set query handler: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSend,
		func(ctx workflow.Context, in SendInput) (*TaskView, error) {
			// Validators of updates delivered together all run before their
			// handlers: the first reply wins, the others are refused here.
			ok, err := st.accept(ctx, in.Message)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, temporal.NewApplicationError(
					fmt.Sprintf("task %s is %s: another message was accepted first", st.Task.ID, st.Task.Status.State),
					ErrTypeUnsupported)
			}
			if !in.ReturnImmediately {
				if err := workflow.Await(ctx, func() bool { return st.settled() || st.closing }); err != nil {
					return nil, err
				}
				if !st.settled() {
					return nil, temporal.NewApplicationError("the task continued as new; ask again", ErrTypeMoved)
				}
			}
			return st.view(), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, in SendInput) error {
			switch {
			case in.Message == nil || in.Message.ID == "":
				return temporal.NewApplicationError("message with messageId required", ErrTypeInvalidParams)
			case st.Seen[in.Message.ID]:
				return nil // a resend: answered with the task as it is
			case st.Task.Status.State.Terminal():
				return temporal.NewApplicationError(
					fmt.Sprintf("task %s is %s and accepts no more messages", st.Task.ID, st.Task.Status.State), ErrTypeUnsupported)
			case !Interrupted(st.Task.Status.State) || st.CancelRequested:
				return temporal.NewApplicationError(
					fmt.Sprintf("task %s is %s: it takes a new message only when it asks for input", st.Task.ID, st.Task.Status.State),
					ErrTypeUnsupported)
			}
			return nil
		}}); err != nil {
		return nil, fmt.Errorf("set send handler: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCancel,
		func(ctx workflow.Context, _ CancelInput) (*TaskView, error) {
			st.CancelRequested = true
			cancelWork()
			if err := workflow.Await(ctx, func() bool { return st.Task.Status.State.Terminal() || st.closing }); err != nil {
				return nil, err
			}
			if !st.Task.Status.State.Terminal() {
				return nil, temporal.NewApplicationError("the task continued as new; ask again", ErrTypeMoved)
			}
			return st.view(), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, _ CancelInput) error {
			if st.Task.Status.State.Terminal() {
				return temporal.NewApplicationError(
					fmt.Sprintf("task %s is already %s", st.Task.ID, st.Task.Status.State), ErrTypeNotCancelable)
			}
			return nil
		}}); err != nil {
		return nil, fmt.Errorf("set cancel handler: %w", err)
	}

	skill := t.Skills[in.Skill]
	var err error
	if skill == nil {
		err = st.setStatus(ctx, a2a.TaskStateRejected, agentMessage(st, fmt.Sprintf("unknown skill %q", in.Skill)))
	}
	for skill != nil {
		err = skill(&Session{ctx: workCtx, state: st, input: in, historyLimit: t.HistoryLimit, resuming: resuming, tasks: t})
		if !errors.Is(err, errContinueAsNew) {
			break
		}
		// Blocked calls answer from this run first: settled ones with the
		// task, the others with "ask again" (they reach the next run). A
		// message or a cancel that arrives meanwhile is handled in this run:
		// the skill resumes from its checkpoint and finds it.
		st.closing = true
		if err := workflow.Await(ctx, func() bool {
			return workflow.AllHandlersFinished(ctx) || len(st.Inbox) > 0 || st.CancelRequested
		}); err != nil {
			return nil, err
		}
		st.closing = false
		if len(st.Inbox) == 0 && !st.CancelRequested {
			next := in
			next.Carry = &Carry{State: st}
			return nil, workflow.NewContinueAsNewError(ctx, TaskWorkflowName, next)
		}
		st.Waiting, resuming = false, true
	}
	if ctx.Err() != nil {
		// The workflow itself was canceled (a node whose parent was canceled):
		// the task ends CANCELED, recorded on a context that still works.
		st.CancelRequested = true
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	if err := finish(ctx, st, err); err != nil {
		return nil, err
	}
	// Let blocked SendMessage/CancelTask calls see the final state, and
	// push notifications deliver it.
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && st.pushSettled() }); err != nil {
		return nil, err
	}
	return st.snapshot(), nil
}

// finish puts the task in its terminal state once the skill has returned.
func finish(ctx workflow.Context, st *taskState, skillErr error) error {
	state := st.Task.Status.State
	if state.Terminal() {
		return nil
	}
	switch {
	case st.CancelRequested:
		return st.setStatus(ctx, a2a.TaskStateCanceled, agentMessage(st, "canceled by the client"))
	case skillErr != nil:
		var appErr *temporal.ApplicationError
		msg := skillErr.Error()
		if errors.As(skillErr, &appErr) {
			msg = appErr.Message()
		}
		return st.setStatus(ctx, a2a.TaskStateFailed, agentMessage(st, msg))
	case Interrupted(state) || state == a2a.TaskStateSubmitted:
		// A skill that returns without finishing its work: count it done, via
		// WORKING since an interrupted task cannot complete directly.
		if err := st.setStatus(ctx, a2a.TaskStateWorking, nil); err != nil {
			return err
		}
	}
	return st.setStatus(ctx, a2a.TaskStateCompleted, nil)
}

func textOf(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var out string
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			out += string(t)
		}
	}
	return out
}
