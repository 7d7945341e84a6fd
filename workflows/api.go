// Package workflows holds the Temporal workflow behind every A2A task, and
// the skills that run inside it. One task is one workflow; the workflow ID is
// the A2A task ID.
package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
)

// TaskQueue is the Temporal task queue served by the workers.
const TaskQueue = "a2a-tasks"

// Names of the workflow type and its handlers, shared with the frontend.
const (
	TaskWorkflowName = "A2ATask"
	UpdateSend       = "a2a.SendMessage"
	UpdateCancel     = "a2a.CancelTask"
	QueryTask        = "a2a.GetTask"
	QueryEvents      = "a2a.Events"
	// SignalForward delivers a client's answer to a node task from its
	// parent; SignalNodeStatus tells a parent that a node task's state changed.
	SignalForward    = "a2a.Forward"
	SignalNodeStatus = "a2a.NodeStatus"
	// UpdateWake is a downstream agent's push notification reaching a node
	// task through the frontend's webhook; its argument is the token.
	UpdateWake = "a2a.DownstreamEvent"
)

// NodeStatus is what a node task tells its parent.
type NodeStatus struct {
	TaskID   a2a.TaskID    `json:"taskId"`
	State    a2a.TaskState `json:"state"`
	Question string        `json:"question,omitempty"`
}

// Application error types the handlers return; the frontend maps them to
// A2A errors.
const (
	ErrTypeUnsupported   = "UnsupportedOperation"
	ErrTypeNotCancelable = "TaskNotCancelable"
	ErrTypeInvalidParams = "InvalidParams"
	// ErrTypeMoved: the task continued as new while the call waited; the
	// caller asks again and reaches the new run.
	ErrTypeMoved = "ContinuedAsNew"
)

// Search attributes every task workflow carries, so that tasks can be listed
// by context, owner and state without asking each workflow.
var (
	SAContextID  = temporal.NewSearchAttributeKeyKeyword("A2AContextId")
	SAOwner      = temporal.NewSearchAttributeKeyKeyword("A2AOwner")
	SATenant     = temporal.NewSearchAttributeKeyKeyword("A2ATenant")
	SAState      = temporal.NewSearchAttributeKeyKeyword("A2AState")
	SAStatusTime = temporal.NewSearchAttributeKeyTime("A2AStatusTime")
)

// SAKey hashes a value (a context ID, owner, tenant) for a keyword search
// attribute, so that any string a client sends is safe in a visibility query.
func SAKey(kind, v string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + v))
	return hex.EncodeToString(sum[:16])
}

// Memo keys set at start; the frontend reads them with DescribeWorkflowExecution
// to check access before it asks the workflow anything.
const (
	MemoContextID = "contextId"
	MemoOwner     = "owner"
	MemoTenant    = "tenant"
)

// TaskInput starts a task workflow.
type TaskInput struct {
	TaskID    a2a.TaskID   `json:"taskId"`
	ContextID string       `json:"contextId"`
	Owner     string       `json:"owner"`
	Tenant    string       `json:"tenant"`
	Skill     string       `json:"skill"`
	Message   *a2a.Message `json:"message"`
	// Args are the skill's arguments, fixed by the frontend when the task
	// starts (the orchestrator's plan), so that later configuration changes
	// cannot change a running task.
	Args json.RawMessage `json:"args,omitempty"`
	// References are the tasks the first message names in
	// referenceTaskIds, with their artifacts as they were when it arrived:
	// a follow-up builds on them.
	References []Reference `json:"references,omitempty"`
	// Push is a push config sent with the first message.
	Push *a2a.PushConfig `json:"push,omitempty"`
	// Carry is the state of a task continued as new, to keep its Temporal
	// history short however many rounds it goes through.
	Carry *Carry `json:"carry,omitempty"`
}

// Reference is a task a follow-up builds on.
type Reference struct {
	TaskID    a2a.TaskID      `json:"taskId"`
	Artifacts []*a2a.Artifact `json:"artifacts,omitempty"`
}

// Carry is what a task takes into its next run.
type Carry struct {
	State *taskState `json:"state"`
}

// SendInput is the argument of the UpdateSend handler.
type SendInput struct {
	Message           *a2a.Message `json:"message"`
	ReturnImmediately bool         `json:"returnImmediately,omitempty"`
}

// CancelInput is the argument of the UpdateCancel handler.
type CancelInput struct {
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TaskView is the task as a handler or query sees it, with the sequence
// number of the newest event it reflects: a stream that starts from it
// misses nothing and repeats nothing.
type TaskView struct {
	Task *a2a.Task `json:"task"`
	Seq  int64     `json:"seq"`
}

// EventsView answers QueryEvents: the logged events after a sequence number.
type EventsView struct {
	Events []LoggedEvent `json:"events"`
	// FirstSeq is the oldest event still in the log; a cursor before it has
	// missed events that were dropped.
	FirstSeq int64         `json:"firstSeq"`
	State    a2a.TaskState `json:"state"`
}
