package skills

import (
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/workflows"
)

// runDelegate is a node task: it sends its message to the downstream agent
// and mirrors that task here: its questions (INPUT_REQUIRED or
// AUTH_REQUIRED) become this task's, the client's answers go to it, and its
// artifacts become this task's result. While the downstream task works this
// task waits on durable timers, looking again less and less often.
func runDelegate(s *workflows.Session) error {
	msg := s.Input().Message
	agent, _ := msg.Metadata[MetaAgent].(string)
	if agent == "" {
		return s.Reject("a node task needs metadata.agent")
	}
	// The checkpoint: where the downstream task stands, and whether this
	// task's webhook is registered with it.
	var cp struct {
		R      activities.DownstreamResult `json:"r"`
		Pushed bool                        `json:"pushed,omitempty"`
	}
	resumed, err := s.Restore(&cp)
	if err != nil {
		return err
	}
	r := &cp.R
	ctx := workflow.WithActivityOptions(s.Ctx(), workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		HeartbeatTimeout:    5 * time.Second,
		// An unreachable agent is retried with backoff (by default for
		// about ten minutes), then the node fails with the reason.
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			MaximumAttempts:        int32(s.DownstreamAttempts()),
			NonRetryableErrorTypes: []string{activities.ErrTypeDownstream},
		},
		WaitForCancellation: true,
	})
	canceled := func() error {
		if r.TaskID != "" {
			// Best effort, on a context the cancel does not stop.
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			dctx = workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
				StartToCloseTimeout: 30 * time.Second,
				RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
			})
			_ = workflow.ExecuteActivity(dctx, activities.DownstreamCancelName, agent, r.TaskID).Get(dctx, nil)
		}
		return workflows.ErrCanceled
	}
	failed := func(err error) error {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			return fmt.Errorf("%s", appErr.Message())
		}
		return fmt.Errorf("agent %s: %w", agent, err)
	}

	if !resumed {
		if err := s.Working("sending to " + agent); err != nil {
			return err
		}
		call := activities.DownstreamCall{Agent: agent, MessageID: string(s.TaskID()), Parts: msg.Parts}
		if err := workflow.ExecuteActivity(ctx, activities.DownstreamSendName, call).Get(ctx, r); err != nil {
			if s.Ctx().Err() != nil {
				return canceled()
			}
			return failed(err)
		}
		if r.TaskID != "" {
			s.SetMetadata("downstreamTaskId", r.TaskID)
		}
	}
	wait := 500 * time.Millisecond
	seen := s.Wakes() // pushes counted before the last look at the downstream task
	for {
		// The checkpoint is where the task stands; a continue-as-new resumes
		// from it.
		if err := s.Checkpoint(cp); err != nil {
			return err
		}
		if err := s.ContinueIfLong(); err != nil {
			return err
		}
		switch {
		case r.Reply != "":
			s.AddArtifact(&a2a.Artifact{Name: agent, Parts: a2a.ContentParts{a2a.NewTextPart(r.Reply)}})
			return s.Complete("")
		case r.State == a2a.TaskStateCompleted:
			for _, a := range r.Artifacts {
				cp := *a
				cp.ID = "" // this task's own artifact IDs
				s.AddArtifact(&cp)
			}
			return s.Complete("")
		case r.State.Terminal():
			return fmt.Errorf("agent %s ended its task %s: %s", agent, r.State, r.Question)
		case workflows.Interrupted(r.State):
			answer, err := s.Ask(r.State, r.Question)
			if errors.Is(err, workflows.ErrCanceled) {
				return canceled()
			}
			if err != nil {
				return err
			}
			call := activities.DownstreamCall{
				Agent: agent, TaskID: r.TaskID, ContextID: r.ContextID, Parts: answer.Parts,
				MessageID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(string(s.TaskID())+"/"+answer.ID)).String(),
			}
			if err := workflow.ExecuteActivity(ctx, activities.DownstreamSendName, call).Get(ctx, r); err != nil {
				if s.Ctx().Err() != nil {
					return canceled()
				}
				return failed(err)
			}
			wait = 500 * time.Millisecond
		default:
			// Still working downstream. Where the agent pushes, register this
			// task's webhook and sleep until it is called (with a slow timer
			// as a safety net); else look again after a growing durable pause.
			// Either costs nothing while the downstream task runs for hours.
			if r.Push && !cp.Pushed {
				if err := workflow.ExecuteActivity(ctx, activities.DownstreamSubscribeName,
					agent, r.TaskID, string(s.TaskID()), s.WebhookToken()).Get(ctx, &cp.Pushed); err != nil {
					if s.Ctx().Err() != nil {
						return canceled()
					}
					cp.Pushed = false // fall back to polling
				}
			}
			if cp.Pushed {
				// Pushes that came while the last look ran count: no wake is lost.
				if _, err := s.AwaitWake(seen, 5*time.Minute); err != nil {
					return canceled()
				}
			} else {
				if err := workflow.Sleep(s.Ctx(), wait); err != nil {
					return canceled()
				}
				wait = min(wait*2, time.Minute)
			}
			seen = s.Wakes()
			if err := workflow.ExecuteActivity(ctx, activities.DownstreamWatchName, agent, *r).Get(ctx, r); err != nil {
				if s.Ctx().Err() != nil {
					return canceled()
				}
				return failed(err)
			}
		}
	}
}
