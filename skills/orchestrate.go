package skills

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/plan"
	"github.com/durable-a2a/orchestrator/workflows"
)

// SkillDelegate is the internal skill of a node task: it hands the node's
// message to its downstream agent and mirrors that task.
const SkillDelegate = "delegate"

// Metadata keys of a node task's first message.
const (
	MetaAgent = "agent"
	MetaNode  = "node"
)

// node is one node of a running graph, as the orchestrator tracks it.
type node struct {
	plan.Node
	TaskID    a2a.TaskID      `json:"taskId"`
	Started   bool            `json:"started"`
	State     a2a.TaskState   `json:"state"`
	Question  string          `json:"question,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Artifacts []*a2a.Artifact `json:"artifacts,omitempty"`
	Remote    string          `json:"downstreamTaskId,omitempty"`
}

func (n *node) done() bool { return n.State.Terminal() }

// runOrchestrate runs a plan: each node is a follow-up task of this server
// in the request's context (a child workflow running the delegate skill),
// started as soon as the nodes it depends on completed; independent nodes
// run at the same time. Questions of downstream agents travel up to this
// task, and the client's answers travel down.
func runOrchestrate(s *workflows.Session) error {
	var p plan.Plan
	if err := json.Unmarshal(s.Input().Args, &p); err != nil {
		return s.Reject("no plan: " + err.Error())
	}
	nodes := make([]*node, len(p.Nodes))
	byTask := map[a2a.TaskID]*node{}
	byID := map[string]*node{}
	for i, pn := range p.Nodes {
		n := &node{Node: pn, TaskID: nodeTaskID(s.TaskID(), pn.ID)}
		nodes[i], byTask[n.TaskID], byID[n.ID] = n, n, n
	}
	if err := s.Working(fmt.Sprintf("running a plan of %d tasks", len(nodes))); err != nil {
		return err
	}

	ctx := s.Ctx()
	type finished struct {
		n    *node
		task *a2a.Task
		err  error
	}
	var results []finished
	var statuses []workflows.NodeStatus
	var askers []*node // nodes waiting for the client, oldest first
	running := 0

	statusCh := workflow.GetSignalChannel(ctx, workflows.SignalNodeStatus)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var ns workflows.NodeStatus
			if !statusCh.Receive(ctx, &ns) {
				return
			}
			statuses = append(statuses, ns)
		}
	})

	start := func(n *node) {
		n.Started, n.State = true, a2a.TaskStateSubmitted
		running++
		msg := nodeMessage(s, n, byID)
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            string(n.TaskID),
			TaskQueue:             workflows.TaskQueue,
			WaitForCancellation:   true,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			Memo: map[string]any{
				workflows.MemoContextID: s.ContextID(), workflows.MemoOwner: s.Input().Owner, workflows.MemoTenant: s.Input().Tenant,
			},
			TypedSearchAttributes: temporal.NewSearchAttributes(
				workflows.SAContextID.ValueSet(workflows.SAKey("context", s.ContextID())),
				workflows.SAOwner.ValueSet(workflows.SAKey("owner", s.Input().Owner)),
				workflows.SATenant.ValueSet(workflows.SAKey("tenant", s.Input().Tenant)),
				workflows.SAState.ValueSet(string(a2a.TaskStateSubmitted)),
				workflows.SAStatusTime.ValueSet(workflow.Now(ctx).UTC()),
			),
		})
		in := workflows.TaskInput{
			TaskID: n.TaskID, ContextID: s.ContextID(), Owner: s.Input().Owner, Tenant: s.Input().Tenant,
			Skill: SkillDelegate, Message: msg,
		}
		fut := workflow.ExecuteChildWorkflow(cctx, workflows.TaskWorkflowName, in)
		workflow.Go(ctx, func(gctx workflow.Context) {
			var task a2a.Task
			// Read on a context that outlives a cancel: the child reports
			// its end (CANCELED) after it has stopped.
			dctx, _ := workflow.NewDisconnectedContext(gctx)
			err := fut.Get(dctx, &task)
			results = append(results, finished{n: n, task: &task, err: err})
		})
	}

	// startReady starts every node whose dependencies all completed, and
	// fails the nodes a failed dependency can never let start.
	startReady := func() {
		for changed := true; changed; {
			changed = false
			for _, n := range nodes {
				if n.Started || n.done() {
					continue
				}
				ready := true
				for _, d := range n.DependsOn {
					dep := byID[d]
					switch {
					case dep.done() && dep.State != a2a.TaskStateCompleted:
						n.State, n.Reason, changed = a2a.TaskStateFailed, fmt.Sprintf("not started: %s ended %s", d, dep.State), true
						ready = false
					case dep.State != a2a.TaskStateCompleted:
						ready = false
					}
					if n.done() {
						break
					}
				}
				if ready && !n.done() && ctx.Err() == nil {
					start(n)
				}
			}
		}
	}
	startReady()

	// showAsker keeps this task's own state in step with its nodes: waiting
	// for the client while any node does, with that node's question.
	showAsker := func() error {
		if len(askers) > 0 {
			a := askers[0]
			q := fmt.Sprintf("[%s via %s] %s", a.ID, a.Agent, a.Question)
			cur := s.State()
			if !workflows.Interrupted(cur) || s.Question() != q {
				if cur != a2a.TaskStateWorking && workflows.Interrupted(cur) {
					if err := s.Working(""); err != nil {
						return err
					}
				}
				return s.Interrupt(a.State, q)
			}
			return nil
		}
		if workflows.Interrupted(s.State()) {
			return s.Working("the graph goes on")
		}
		return nil
	}
	dropAsker := func(n *node) {
		for i, a := range askers {
			if a == n {
				askers = append(askers[:i], askers[i+1:]...)
				return
			}
		}
	}

	for running > 0 {
		if err := workflow.Await(ctx, func() bool {
			return len(results) > 0 || len(statuses) > 0 || s.HasMessage()
		}); err != nil {
			// Canceled: the children are being canceled with this context;
			// wait for each to end before this task ends.
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			_ = workflow.Await(dctx, func() bool { return len(results) == running })
			return workflows.ErrCanceled
		}
		for _, ns := range statuses {
			n := byTask[ns.TaskID]
			if n == nil || n.done() {
				continue
			}
			n.State = ns.State
			if workflows.Interrupted(ns.State) {
				n.Question = ns.Question
				dropAsker(n)
				askers = append(askers, n)
			} else {
				dropAsker(n)
			}
		}
		statuses = nil
		for _, r := range results {
			running--
			r.n.State = r.task.Status.State
			if r.err != nil {
				r.n.State, r.n.Reason = a2a.TaskStateFailed, r.err.Error()
			}
			if r.task.Status.State == "" {
				r.n.State = a2a.TaskStateFailed
			}
			r.n.Artifacts = r.task.Artifacts
			if remote, ok := r.task.Metadata["downstreamTaskId"].(string); ok {
				r.n.Remote = remote
			}
			if r.n.Reason == "" && r.n.State != a2a.TaskStateCompleted {
				r.n.Reason = textOfMessage(r.task.Status.Message)
			}
			dropAsker(r.n)
		}
		results = nil
		// The client answered this task: the answer goes to the node that
		// asked first.
		for s.HasMessage() && len(askers) > 0 {
			m, _ := s.TakeMessage()
			a := askers[0]
			askers = askers[1:]
			fwd := *m
			fwd.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(string(a.TaskID)+"/"+m.ID)).String()
			fwd.TaskID, fwd.ContextID = a.TaskID, s.ContextID()
			workflow.SignalExternalWorkflow(ctx, string(a.TaskID), "", workflows.SignalForward, workflows.SendInput{Message: &fwd})
		}
		for s.HasMessage() {
			s.TakeMessage() // no node is asking any more: the answer came too late
		}
		startReady()
		if err := showAsker(); err != nil {
			return err
		}
	}

	if err := s.AddArtifactParts("plan-summary", summary(nodes)...); err != nil {
		return err
	}
	for _, n := range nodes {
		if n.State != a2a.TaskStateCompleted {
			return fmt.Errorf("%d of %d tasks did not complete; see the plan-summary artifact", countNot(nodes, a2a.TaskStateCompleted), len(nodes))
		}
	}
	if workflows.Interrupted(s.State()) {
		if err := s.Working(""); err != nil {
			return err
		}
	}
	return s.Complete(fmt.Sprintf("all %d tasks completed", len(nodes)))
}

// nodeTaskID is deterministic: a replay, or a retried start, names the same task.
func nodeTaskID(parent a2a.TaskID, nodeID string) a2a.TaskID {
	return a2a.TaskID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(string(parent)+"/node/"+nodeID)).String())
}

// nodeMessage is what a node task starts with: the node's message, the
// results of the nodes it depends on as data, and their tasks as references.
func nodeMessage(s *workflows.Session, n *node, byID map[string]*node) *a2a.Message {
	parts := a2a.ContentParts{a2a.NewTextPart(n.Message)}
	var refs []a2a.TaskID
	if len(n.DependsOn) == 0 {
		// A root node of a follow-up builds on the tasks the request named.
		for _, r := range s.Input().References {
			refs = append(refs, r.TaskID)
			parts = append(parts, dataParts(r.Artifacts, string(r.TaskID))...)
		}
	}
	for _, d := range n.DependsOn {
		dep := byID[d]
		refs = append(refs, dep.TaskID)
		parts = append(parts, dataParts(dep.Artifacts, d)...)
	}
	return &a2a.Message{
		ID:             uuid.NewSHA1(uuid.NameSpaceOID, []byte(string(n.TaskID)+"/message")).String(),
		Role:           a2a.MessageRoleUser,
		Parts:          parts,
		ContextID:      s.ContextID(),
		TaskID:         n.TaskID,
		ReferenceTasks: refs,
		Metadata:       map[string]any{MetaAgent: n.Agent, MetaNode: n.ID},
	}
}

// dataParts are the data parts of artifacts, marked with where they come from.
func dataParts(arts []*a2a.Artifact, from string) []*a2a.Part {
	var out []*a2a.Part
	for _, a := range arts {
		for _, p := range a.Parts {
			if data, ok := p.Content.(a2a.Data); ok {
				out = append(out, &a2a.Part{Content: data, Metadata: map[string]any{"from": from}})
			}
		}
	}
	return out
}

func summary(nodes []*node) []*a2a.Part {
	var rows []map[string]any
	var b strings.Builder
	for _, n := range nodes {
		row := map[string]any{"node": n.ID, "agent": n.Agent, "taskId": string(n.TaskID), "state": string(n.State)}
		if n.Remote != "" {
			row["downstreamTaskId"] = n.Remote
		}
		var texts []string
		for _, a := range n.Artifacts {
			if t := partsText(a.Parts); t != "" {
				texts = append(texts, t)
			}
		}
		if len(texts) > 0 {
			row["result"] = strings.Join(texts, "\n")
		}
		if n.Reason != "" {
			row["reason"] = n.Reason
		}
		rows = append(rows, row)
		fmt.Fprintf(&b, "%s (%s): %s", n.ID, n.Agent, strings.TrimPrefix(string(n.State), "TASK_STATE_"))
		if r, ok := row["result"].(string); ok {
			fmt.Fprintf(&b, " - %s", r)
		} else if n.Reason != "" {
			fmt.Fprintf(&b, " - %s", n.Reason)
		}
		b.WriteString("\n")
	}
	return []*a2a.Part{a2a.NewTextPart(b.String()), a2a.NewDataPart(map[string]any{"nodes": rows})}
}

func countNot(nodes []*node, s a2a.TaskState) int {
	c := 0
	for _, n := range nodes {
		if n.State != s {
			c++
		}
	}
	return c
}

func partsText(parts a2a.ContentParts) string {
	var texts []string
	for _, p := range parts {
		if t, ok := p.Content.(a2a.Text); ok {
			texts = append(texts, string(t))
		}
	}
	return strings.Join(texts, " ")
}

func textOfMessage(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}

// orchestrateDef runs a plan the request carries as a data part
// {"plan": {"nodes": [...]}}.
func orchestrateDef(cfg *config.Config) Def {
	return Def{
		Card: a2a.AgentSkill{
			ID:   "orchestrate",
			Name: "Run a plan",
			Description: "Runs a dependency graph of tasks on downstream agents: send a data part {\"plan\": {\"nodes\": [{\"id\", \"agent\", \"message\", \"dependsOn\"}]}}. " +
				"Each node becomes a task of this server in your context; independent nodes run at the same time.",
			Tags:       []string{"orchestration", "multi-agent"},
			InputModes: []string{"application/json"}, OutputModes: []string{"text/plain", "application/json"},
		},
		Prepare: prepareWith(cfg, plan.FromRequest{}),
		Run:     runOrchestrate,
	}
}

// playbookDef runs a playbook of the configuration on the request's text.
func playbookDef(cfg *config.Config, pb plan.Playbook) Def {
	return Def{
		Card: a2a.AgentSkill{
			ID: pb.Name, Name: "Playbook: " + pb.Name, Description: pb.Description,
			Tags: []string{"orchestration", "playbook"}, InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain", "application/json"},
		},
		Prepare: prepareWith(cfg, pb),
		Run:     runOrchestrate,
	}
}

// prepareWith plans a request when its task starts and checks the plan
// against the configured agents: a bad plan is refused before any call.
func prepareWith(cfg *config.Config, planner plan.Planner) func(*a2a.Message) (json.RawMessage, error) {
	known := func(a string) bool { _, ok := cfg.Agent(a); return ok }
	return func(m *a2a.Message) (json.RawMessage, error) {
		p, err := planner.Plan(m)
		if err != nil {
			return nil, err
		}
		if err := p.Validate(known); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		return json.Marshal(p)
	}
}
