package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
)

func TestSendMessageCompletesWithArtifact(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, env.BaseURL, b)
			ctx := ctxT(t)
			before := time.Now().Add(-time.Second)
			task := send(t, c, &a2a.SendMessageRequest{Message: userMsg("three little words", nil)})

			if task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("state = %s, want COMPLETED (blocking by default)", task.Status.State)
			}
			if _, err := uuid.Parse(string(task.ID)); err != nil {
				t.Errorf("task id %q is not server-generated: %v", task.ID, err)
			}
			if task.ContextID == "" {
				t.Error("contextId was not generated")
			}
			if ts := task.Status.Timestamp; ts == nil || ts.Before(before) || ts.Location() != time.UTC {
				t.Errorf("status.timestamp = %v, want a fresh UTC time", ts)
			}
			got := artifactText(task, "result")
			if !strings.Contains(got, "3 words") {
				t.Errorf("result artifact = %q, want the work's result", got)
			}
			if len(task.History) == 0 || task.History[0].Role != a2a.MessageRoleUser {
				t.Errorf("history = %v, want the user's message first", task.History)
			}

			// GetTask returns the same finished task, from any binding.
			got2, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			if got2.Status.State != a2a.TaskStateCompleted || artifactText(got2, "result") != got {
				t.Errorf("GetTask = %s %q, want COMPLETED with the same artifact", got2.Status.State, artifactText(got2, "result"))
			}
		})
	}
}

func TestQuickReplyIsAMessage(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	res, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: userMsg("help", nil)})
	if err != nil {
		t.Fatal(err)
	}
	msg, ok := res.(*a2a.Message)
	if !ok {
		t.Fatalf("got %T, want a Message", res)
	}
	if msg.Role != a2a.MessageRoleAgent || msg.ContextID == "" || msg.TaskID != "" {
		t.Errorf("reply = role %s context %q task %q; want an agent message with a context and no task", msg.Role, msg.ContextID, msg.TaskID)
	}
}

func TestUnknownTaskIsNotFoundAndNotCreated(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, env.BaseURL, b)
			ctx := ctxT(t)
			id := a2a.TaskID(uuid.NewString())
			m := userMsg("hello", nil)
			m.TaskID = id
			_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("SendMessage to unknown task: err = %v, want TaskNotFoundError", err)
			}
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("GetTask unknown: err = %v, want TaskNotFoundError", err)
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("CancelTask unknown: err = %v, want TaskNotFoundError", err)
			}
			_, err = env.Client.DescribeWorkflowExecution(ctx, string(id), "")
			var nf *serviceerror.NotFound
			if !errors.As(err, &nf) {
				t.Fatalf("a workflow exists for the unknown task id (err = %v)", err)
			}
		})
	}
}

func TestMessageToTerminalTaskIsRefused(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, env.BaseURL, b)
			ctx := ctxT(t)
			task := send(t, c, &a2a.SendMessageRequest{Message: userMsg("finish me", nil)})
			m := userMsg("one more thing", nil)
			m.TaskID = task.ID
			_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			if !errors.Is(err, a2a.ErrUnsupportedOperation) {
				t.Fatalf("err = %v, want UnsupportedOperationError", err)
			}
			after, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if after.Status.State != a2a.TaskStateCompleted || len(after.History) != len(task.History) {
				t.Errorf("terminal task changed: %s with %d messages, was %d", after.Status.State, len(after.History), len(task.History))
			}
		})
	}
}

func TestContextID(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	ctx := ctxT(t)
	m := userMsg("in my context", nil)
	m.ContextID = "ctx-" + uuid.NewString()
	task := send(t, c, &a2a.SendMessageRequest{Message: m})
	if task.ContextID != m.ContextID {
		t.Fatalf("contextId = %q, want the client's %q", task.ContextID, m.ContextID)
	}

	// A running task, so that the mismatch is what gets refused.
	slow := send(t, c, &a2a.SendMessageRequest{
		Message: userMsg("slow", map[string]any{"delay": "20s"}),
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})
	t.Cleanup(func() { _, _ = c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: slow.ID}) })
	wrong := userMsg("wrong context", nil)
	wrong.TaskID = slow.ID
	wrong.ContextID = "some-other-context"
	_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: wrong})
	if !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("taskId/contextId mismatch: err = %v, want InvalidParams (-32602)", err)
	}
}

func TestCancelStopsTheWork(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, env.BaseURL, b)
			ctx := ctxT(t)
			canceledBefore, completedBefore := env.Acts.Demo.Canceled.Load(), env.Acts.Demo.Completed.Load()
			task := send(t, c, &a2a.SendMessageRequest{
				Message: userMsg("take your time", map[string]any{"delay": "30s"}),
				Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
			})
			if s := task.Status.State; s != a2a.TaskStateSubmitted && s != a2a.TaskStateWorking {
				t.Fatalf("returnImmediately: state = %s, want SUBMITTED or WORKING", s)
			}
			canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatalf("CancelTask: %v", err)
			}
			if canceled.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("state after cancel = %s, want CANCELED", canceled.Status.State)
			}
			// The task is CANCELED only once its activity has stopped (the
			// workflow waits for the cancellation to reach it), or if the
			// activity never started.
			if env.Acts.Demo.Completed.Load() != completedBefore {
				t.Errorf("the canceled work ran to completion")
			}
			if env.Acts.Demo.Canceled.Load() == canceledBefore && len(canceled.Artifacts) > 0 {
				t.Errorf("the work was not stopped")
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Fatalf("second cancel: err = %v, want TaskNotCancelableError", err)
			}
		})
	}
}

func TestGetTaskHistoryLength(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolHTTPJSON)
	ctx := ctxT(t)
	task := send(t, c, &a2a.SendMessageRequest{Message: userMsg("history", nil)})
	full, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.History) < 2 {
		t.Fatalf("history has %d messages, want the user's and the agent's", len(full.History))
	}
	zero := 0
	none, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.History) != 0 {
		t.Errorf("historyLength 0: got %d messages", len(none.History))
	}
	one := 1
	last, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &one})
	if err != nil {
		t.Fatal(err)
	}
	if len(last.History) != 1 || last.History[0].ID != full.History[len(full.History)-1].ID {
		t.Errorf("historyLength 1: got %d messages, want the last one", len(last.History))
	}
}

func TestResentMessageMakesOneTask(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	// The resend reaches another frontend, as a retry behind a load balancer would.
	otherURL, stop, err := env.AddFrontend()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	other := newClient(t, otherURL, a2a.TransportProtocolHTTPJSON)
	before := env.Acts.Demo.Completed.Load()
	m := userMsg("only once", nil)
	first := send(t, c, &a2a.SendMessageRequest{Message: m})
	second := send(t, other, &a2a.SendMessageRequest{Message: m})
	if first.ID != second.ID {
		t.Fatalf("resend made a second task: %s and %s", first.ID, second.ID)
	}
	if n := env.Acts.Demo.Completed.Load() - before; n != 1 {
		t.Errorf("the work ran %d times, want once", n)
	}
	diff := userMsg("only once", nil) // same text, new messageId: a new task
	third := send(t, c, &a2a.SendMessageRequest{Message: diff})
	if third.ID == first.ID {
		t.Error("a different messageId reused the task")
	}
}
