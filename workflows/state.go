package workflows

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/workflow"
)

// LoggedEvent is one entry of a task's event log: every change of status or
// artifact, numbered from 1 in the order it happened.
type LoggedEvent struct {
	Seq   int64              `json:"seq"`
	Event a2a.StreamResponse `json:"event"`
}

// taskState is the workflow's whole state: the A2A task and its event log.
type taskState struct {
	Task   a2a.Task        `json:"task"`
	Events []LoggedEvent   `json:"events"`
	Seen   map[string]bool `json:"seen"` // message IDs already applied
	// Inbox holds client messages accepted while the task was interrupted,
	// not yet taken by the skill.
	Inbox           []*a2a.Message `json:"inbox"`
	Push            []*pushSub     `json:"push,omitempty"`
	CancelRequested bool           `json:"cancelRequested"`
	// SkillState is the skill's checkpoint, from which it resumes after a
	// continue-as-new; Waiting says the task was interrupted at that point.
	SkillState json.RawMessage `json:"skillState,omitempty"`
	Waiting    bool            `json:"waiting,omitempty"`
	// WebhookToken authenticates pushes from a downstream agent; Wakes
	// counts the pushes received.
	WebhookToken string `json:"webhookToken,omitempty"`
	Wakes        int    `json:"wakes,omitempty"`

	// closing: this run is about to continue as new; waiting handlers
	// answer "ask again" so that it can.
	closing bool
	// onStatus, when set, hears every status change (a node task tells its
	// parent).
	onStatus func(workflow.Context, a2a.TaskStatus) `json:"-"`
}

// Bounds of what a task keeps: the newest messages of its history and the
// newest events of its log.
const (
	maxHistory = 2000
	maxEvents  = 2000
)

func newTaskState(in TaskInput) *taskState {
	if in.Carry != nil && in.Carry.State != nil {
		st := in.Carry.State
		if st.Seen == nil {
			st.Seen = map[string]bool{}
		}
		return st
	}
	return &taskState{
		Task: a2a.Task{
			ID:        in.TaskID,
			ContextID: in.ContextID,
			Status:    a2a.TaskStatus{State: a2a.TaskStateUnspecified},
		},
		Seen: map[string]bool{},
	}
}

// legal lists the transitions a task may take (the spec has no table; this
// follows its definitions of terminal and interrupted states).
var legal = map[a2a.TaskState][]a2a.TaskState{
	a2a.TaskStateUnspecified: {a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateRejected,
		a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired, a2a.TaskStateCompleted, a2a.TaskStateFailed},
	a2a.TaskStateSubmitted: {a2a.TaskStateWorking, a2a.TaskStateRejected, a2a.TaskStateCanceled, a2a.TaskStateFailed,
		a2a.TaskStateCompleted, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired},
	a2a.TaskStateWorking: {a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled,
		a2a.TaskStateRejected, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired},
	a2a.TaskStateInputRequired: {a2a.TaskStateWorking, a2a.TaskStateCanceled, a2a.TaskStateFailed, a2a.TaskStateRejected},
	a2a.TaskStateAuthRequired:  {a2a.TaskStateWorking, a2a.TaskStateCanceled, a2a.TaskStateFailed, a2a.TaskStateRejected},
}

// CanTransition reports whether a task may move from one state to another.
func CanTransition(from, to a2a.TaskState) bool {
	for _, s := range legal[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Interrupted reports whether the task waits on its client.
func Interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// settled: a blocking SendMessage returns once the task is here.
func (s *taskState) settled() bool {
	st := s.Task.Status.State
	return st.Terminal() || Interrupted(st)
}

func now(ctx workflow.Context) time.Time {
	// Millisecond precision, UTC: what the spec asks of timestamps.
	return workflow.Now(ctx).UTC().Truncate(time.Millisecond)
}

// setStatus moves the task to a new state, records the event and keeps the
// search attributes in step.
func (s *taskState) setStatus(ctx workflow.Context, state a2a.TaskState, msg *a2a.Message) error {
	from := s.Task.Status.State
	if !CanTransition(from, state) {
		return fmt.Errorf("illegal task transition %s -> %s", from, state)
	}
	ts := now(ctx)
	if msg != nil {
		msg.TaskID = s.Task.ID
		msg.ContextID = s.Task.ContextID
		s.Task.History = append(s.Task.History, msg)
	}
	s.Task.Status = a2a.TaskStatus{State: state, Message: msg, Timestamp: &ts}
	s.log(&a2a.TaskStatusUpdateEvent{TaskID: s.Task.ID, ContextID: s.Task.ContextID, Status: s.Task.Status})
	if err := workflow.UpsertTypedSearchAttributes(ctx,
		SAState.ValueSet(string(state)), SAStatusTime.ValueSet(ts)); err != nil {
		return fmt.Errorf("upsert search attributes: %w", err)
	}
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"state": string(state)}).Counter("a2a_task_transitions").Inc(1)
	if s.onStatus != nil {
		s.onStatus(ctx, s.Task.Status)
	}
	return nil
}

// accept takes a client's answer to an interrupted task: the task works on.
// It refuses (false) a task that is not waiting for one.
func (s *taskState) accept(ctx workflow.Context, msg *a2a.Message) (bool, error) {
	if s.Seen[msg.ID] {
		return true, nil
	}
	if !Interrupted(s.Task.Status.State) || s.CancelRequested {
		return false, nil
	}
	s.acceptMessage(msg)
	s.Inbox = append(s.Inbox, msg)
	return true, s.setStatus(ctx, a2a.TaskStateWorking, nil)
}

// addArtifact appends an artifact (or, with appendParts, more parts of one
// already sent) and records the event.
func (s *taskState) addArtifact(art *a2a.Artifact, appendParts, lastChunk bool) {
	merged := false
	if appendParts {
		for _, a := range s.Task.Artifacts {
			if a.ID == art.ID {
				a.Parts = append(a.Parts, art.Parts...)
				merged = true
				break
			}
		}
	}
	if !merged {
		cp := *art
		cp.Parts = append(a2a.ContentParts(nil), art.Parts...)
		s.Task.Artifacts = append(s.Task.Artifacts, &cp)
	}
	s.log(&a2a.TaskArtifactUpdateEvent{
		TaskID: s.Task.ID, ContextID: s.Task.ContextID, Artifact: art,
		Append: appendParts && merged, LastChunk: lastChunk,
	})
}

func (s *taskState) log(ev a2a.Event) {
	s.Events = append(s.Events, LoggedEvent{Seq: s.lastSeq() + 1, Event: a2a.StreamResponse{Event: ev}})
	if len(s.Events) > maxEvents {
		s.Events = append([]LoggedEvent(nil), s.Events[len(s.Events)-maxEvents:]...)
	}
	if len(s.Task.History) > maxHistory {
		s.Task.History = append([]*a2a.Message(nil), s.Task.History[len(s.Task.History)-maxHistory:]...)
	}
}

// lastSeq is the sequence number of the newest event (0 when none).
func (s *taskState) lastSeq() int64 {
	if len(s.Events) == 0 {
		return 0
	}
	return s.Events[len(s.Events)-1].Seq
}

// acceptMessage records a client message in the history.
func (s *taskState) acceptMessage(msg *a2a.Message) {
	s.Seen[msg.ID] = true
	msg.TaskID = s.Task.ID
	msg.ContextID = s.Task.ContextID
	s.Task.History = append(s.Task.History, msg)
}

// snapshot is a copy of the task safe to hand out of the workflow.
func (s *taskState) snapshot() *a2a.Task {
	t := s.Task
	t.History = append([]*a2a.Message(nil), s.Task.History...)
	t.Artifacts = append([]*a2a.Artifact(nil), s.Task.Artifacts...)
	return &t
}

func (s *taskState) view() *TaskView { return &TaskView{Task: s.snapshot(), Seq: s.lastSeq()} }

// eventsAfter answers a stream's read from its cursor.
func (s *taskState) eventsAfter(after int64, limit int) *EventsView {
	v := &EventsView{State: s.Task.Status.State, FirstSeq: s.lastSeq() + 1}
	if len(s.Events) > 0 {
		v.FirstSeq = s.Events[0].Seq
	}
	for _, e := range s.Events {
		if e.Seq > after {
			v.Events = append(v.Events, e)
			if len(v.Events) == limit {
				break
			}
		}
	}
	return v
}
