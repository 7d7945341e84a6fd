package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"
)

// Skill is the work behind a task. It runs as workflow code, so it must be
// deterministic: side effects go through activities started on s.Ctx().
// It ends the task by returning: nil completes it (unless it already set a
// terminal state), an error fails it.
type Skill func(s *Session) error

// Session is what a skill sees of its task.
type Session struct {
	ctx          workflow.Context
	state        *taskState
	input        TaskInput
	historyLimit int
	tasks        *Tasks
	// resuming: the task continued as new while interrupted; the skill's
	// first Ask finds the question already asked and just waits.
	resuming bool
}

// errContinueAsNew tells the workflow to continue as new: its history is long.
var errContinueAsNew = errors.New("continue as new")

// ErrCanceled is returned by Session methods once the client canceled the task.
var ErrCanceled = errors.New("task canceled")

// Ctx is the workflow context of the task's work; it is canceled when the
// client cancels the task, which cancels any activity started on it.
func (s *Session) Ctx() workflow.Context { return s.ctx }

// Input is what started the task.
func (s *Session) Input() TaskInput { return s.input }

// TaskID of this task.
func (s *Session) TaskID() a2a.TaskID { return s.state.Task.ID }

// ContextID of this task.
func (s *Session) ContextID() string { return s.state.Task.ContextID }

// Working moves the task to WORKING, with an optional progress note.
func (s *Session) Working(note string) error {
	return s.state.setStatus(s.ctx, a2a.TaskStateWorking, s.agentMessage(note))
}

// Artifact adds a result to the task.
func (s *Session) Artifact(name string, parts ...*a2a.Part) error {
	s.state.addArtifact(&a2a.Artifact{ID: s.newArtifactID(), Name: name, Parts: parts}, false, false)
	return nil
}

// ArtifactChunk streams an artifact in pieces: the first call (appendParts
// false) creates it, later ones append to it, the one with last set ends it.
// It returns the artifact's ID for the following chunks.
func (s *Session) ArtifactChunk(id a2a.ArtifactID, name string, appendParts, last bool, parts ...*a2a.Part) a2a.ArtifactID {
	if id == "" {
		id = s.newArtifactID()
	}
	s.state.addArtifact(&a2a.Artifact{ID: id, Name: name, Parts: parts}, appendParts, last)
	return id
}

// Complete ends the task successfully.
func (s *Session) Complete(note string) error {
	return s.state.setStatus(s.ctx, a2a.TaskStateCompleted, s.agentMessage(note))
}

// Reject ends the task: the agent will not do it.
func (s *Session) Reject(reason string) error {
	return s.state.setStatus(s.ctx, a2a.TaskStateRejected, s.agentMessage(reason))
}

// Interrupt moves the task to INPUT_REQUIRED or AUTH_REQUIRED with a
// question, without waiting: a skill that waits on several things at once
// (the orchestrator) waits itself and takes answers with TakeMessage.
func (s *Session) Interrupt(state a2a.TaskState, question string) error {
	if !Interrupted(state) {
		return fmt.Errorf("interrupt needs an interrupted state, not %s", state)
	}
	return s.state.setStatus(s.ctx, state, s.agentMessage(question))
}

// Question is the text of the task's current status message.
func (s *Session) Question() string { return textOf(s.state.Task.Status.Message) }

// AddArtifactParts adds an artifact made of parts.
func (s *Session) AddArtifactParts(name string, parts ...*a2a.Part) error {
	s.AddArtifact(&a2a.Artifact{Name: name, Parts: parts})
	return nil
}

// State is the task's current state.
func (s *Session) State() a2a.TaskState { return s.state.Task.Status.State }

// HasMessage reports whether a client's answer waits to be taken.
func (s *Session) HasMessage() bool { return len(s.state.Inbox) > 0 }

// TakeMessage takes the oldest waiting answer.
func (s *Session) TakeMessage() (*a2a.Message, bool) {
	if len(s.state.Inbox) == 0 {
		return nil, false
	}
	m := s.state.Inbox[0]
	s.state.Inbox = s.state.Inbox[1:]
	return m, true
}

// SetMetadata sets a key of the task's metadata.
func (s *Session) SetMetadata(key string, v any) { s.state.Task.SetMeta(key, v) }

// AddArtifact adds an artifact as it is (an ID is made if it has none).
func (s *Session) AddArtifact(a *a2a.Artifact) {
	if a.ID == "" {
		a.ID = s.newArtifactID()
	}
	s.state.addArtifact(a, false, false)
}

// WebhookToken is the secret a downstream agent's pushes to this task must
// carry; made once (randomly, recorded in history) and kept.
func (s *Session) WebhookToken() string {
	if s.state.WebhookToken == "" {
		var tok string
		_ = workflow.SideEffect(s.ctx, func(workflow.Context) any { return uuid.NewString() }).Get(&tok)
		s.state.WebhookToken = tok
	}
	return s.state.WebhookToken
}

// AwaitWake waits for a push from the downstream agent (after the given
// count of pushes) or the timeout; false on timeout.
func (s *Session) AwaitWake(seen int, timeout time.Duration) (bool, error) {
	return workflow.AwaitWithTimeout(s.ctx, timeout, func() bool { return s.state.Wakes > seen })
}

// DownstreamAttempts is how often a call to a downstream agent is tried.
func (s *Session) DownstreamAttempts() int {
	if s.tasks == nil || s.tasks.DownstreamAttempts == 0 {
		return 15
	}
	return s.tasks.DownstreamAttempts
}

// Wakes counts the pushes received so far.
func (s *Session) Wakes() int { return s.state.Wakes }

// Checkpoint saves the skill's progress. A skill that asks more than a few
// questions checkpoints before each Ask, so that it can resume from there
// when the task continues as new.
func (s *Session) Checkpoint(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	s.state.SkillState = b
	return nil
}

// Restore loads the last checkpoint into v; false means there is none and
// the skill starts from the beginning.
func (s *Session) Restore(v any) (bool, error) {
	if s.state.SkillState == nil {
		return false, nil
	}
	if err := json.Unmarshal(s.state.SkillState, v); err != nil {
		return false, fmt.Errorf("restore checkpoint: %w", err)
	}
	return true, nil
}

// Ask moves the task to INPUT_REQUIRED (or AUTH_REQUIRED) with a question and
// waits, durably and for as long as it takes, for the client's next message.
func (s *Session) Ask(state a2a.TaskState, question string) (*a2a.Message, error) {
	if !Interrupted(state) {
		return nil, fmt.Errorf("ask needs an interrupted state, not %s", state)
	}
	if s.resuming {
		s.resuming = false
	} else {
		if err := s.state.setStatus(s.ctx, state, s.agentMessage(question)); err != nil {
			return nil, err
		}
		if s.historyTooLong() {
			s.state.Waiting = true
			return nil, errContinueAsNew
		}
	}
	if err := workflow.Await(s.ctx, func() bool { return len(s.state.Inbox) > 0 }); err != nil {
		return nil, ErrCanceled
	}
	msg := s.state.Inbox[0]
	s.state.Inbox = s.state.Inbox[1:]
	return msg, nil
}

// ContinueIfLong returns an error for the skill to return when the task's
// Temporal history has grown long: the task continues as new and the skill
// runs again from its last checkpoint. A skill that emits many events calls
// it at points where its checkpoint is current.
func (s *Session) ContinueIfLong() error {
	// A task with an answer to take, or a cancel to honour, deals with it
	// first (the workflow would run the skill again at once).
	if len(s.state.Inbox) > 0 || s.state.CancelRequested {
		return nil
	}
	if s.historyTooLong() {
		return errContinueAsNew
	}
	return nil
}

// historyTooLong: the workflow should continue as new.
func (s *Session) historyTooLong() bool {
	info := workflow.GetInfo(s.ctx)
	if s.historyLimit > 0 {
		return info.GetCurrentHistoryLength() > s.historyLimit
	}
	return info.GetContinueAsNewSuggested()
}

func (s *Session) agentMessage(text string) *a2a.Message {
	if text == "" {
		return nil
	}
	return agentMessage(s.state, text)
}

func (s *Session) newArtifactID() a2a.ArtifactID { return a2a.ArtifactID(s.state.newID("artifact")) }

// agentMessage builds the agent's message by hand: a2a.NewMessage draws a
// random ID, which workflow code must not.
func agentMessage(st *taskState, text string) *a2a.Message {
	return &a2a.Message{ID: st.newID("msg"), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
}

// newID makes an ID that replays identically: derived from the task and the
// position in its event log, not from randomness.
func (s *taskState) newID(kind string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s/%s/%d", s.Task.ID, kind, len(s.Events))).String()
}
