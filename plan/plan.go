// Package plan holds the orchestrator's work graph: nodes, each a message
// for a named downstream agent, and the dependsOn edges between them.
package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Limits on a plan's size, so that a hostile request cannot make the
// orchestrator start an unbounded graph.
const (
	MaxNodes      = 50
	MaxMessageLen = 16 << 10
)

// Plan is a dependency graph of downstream calls.
type Plan struct {
	Nodes []Node `json:"nodes"`
}

// Node is one call: a message for an agent, after the nodes it depends on.
type Node struct {
	ID        string   `json:"id" toml:"id"`
	Agent     string   `json:"agent" toml:"agent"`
	Message   string   `json:"message" toml:"message"`
	DependsOn []string `json:"dependsOn,omitempty" toml:"dependsOn"`
}

// Playbook is a named plan from the configuration; "{{request}}" in a
// node's message is replaced by the text of the request.
type Playbook struct {
	Name        string `json:"name" toml:"name"`
	Description string `json:"description" toml:"description"`
	Nodes       []Node `json:"nodes" toml:"nodes"`
}

// Expand makes the plan a request asks for from a playbook.
func (pb Playbook) Expand(request string) Plan {
	p := Plan{Nodes: make([]Node, len(pb.Nodes))}
	for i, n := range pb.Nodes {
		n.Message = strings.ReplaceAll(n.Message, "{{request}}", request)
		n.DependsOn = append([]string(nil), n.DependsOn...)
		p.Nodes[i] = n
	}
	return p
}

// FromMessage reads a plan from a message's data part {"plan": {...}}; ok
// is false when the message carries none.
func FromMessage(m *a2a.Message) (Plan, bool, error) {
	for i, part := range m.Parts {
		d, isData := part.Content.(a2a.Data)
		if !isData {
			continue
		}
		obj, isObj := d.Value.(map[string]any)
		if !isObj {
			continue
		}
		raw, has := obj["plan"]
		if !has {
			continue
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return Plan{}, true, fmt.Errorf("message.parts[%d].data.plan: %w", i, err)
		}
		p, err := Parse(b)
		if err != nil {
			return Plan{}, true, fmt.Errorf("message.parts[%d].data.plan: %w", i, err)
		}
		return p, true, nil
	}
	return Plan{}, false, nil
}

// Parse decodes a plan strictly: unknown fields are errors, so that a typo
// ("depends_on") is not silently ignored.
func Parse(b []byte) (Plan, error) {
	var p Plan
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Plan{}, fmt.Errorf("not a plan: %w", err)
	}
	return p, nil
}

// Validate refuses a plan that cannot run, naming the problem: no nodes,
// too many, a node without id or agent, a duplicate id, an unknown agent, an
// unknown dependency, or a cycle.
func (p Plan) Validate(knownAgent func(string) bool) error {
	if len(p.Nodes) == 0 {
		return fmt.Errorf("the plan has no nodes")
	}
	if len(p.Nodes) > MaxNodes {
		return fmt.Errorf("the plan has %d nodes; at most %d are allowed", len(p.Nodes), MaxNodes)
	}
	ids := map[string]bool{}
	for i, n := range p.Nodes {
		switch {
		case n.ID == "":
			return fmt.Errorf("nodes[%d] has no id", i)
		case ids[n.ID]:
			return fmt.Errorf("node id %q is used twice", n.ID)
		case n.Agent == "":
			return fmt.Errorf("node %q names no agent", n.ID)
		case !knownAgent(n.Agent):
			return fmt.Errorf("node %q names unknown agent %q", n.ID, n.Agent)
		case strings.TrimSpace(n.Message) == "":
			return fmt.Errorf("node %q has no message", n.ID)
		case len(n.Message) > MaxMessageLen:
			return fmt.Errorf("node %q: message longer than %d bytes", n.ID, MaxMessageLen)
		}
		ids[n.ID] = true
	}
	for _, n := range p.Nodes {
		for _, d := range n.DependsOn {
			if !ids[d] {
				return fmt.Errorf("node %q depends on unknown node %q", n.ID, d)
			}
			if d == n.ID {
				return fmt.Errorf("node %q depends on itself", n.ID)
			}
		}
	}
	if cycle := p.findCycle(); cycle != nil {
		return fmt.Errorf("the plan has a cycle: %s", strings.Join(cycle, " -> "))
	}
	return nil
}

// findCycle returns the nodes of a dependency cycle, or nil.
func (p Plan) findCycle() []string {
	deps := map[string][]string{}
	for _, n := range p.Nodes {
		deps[n.ID] = n.DependsOn
	}
	const (
		unseen = iota
		onPath
		done
	)
	mark := map[string]int{}
	var path []string
	var visit func(string) []string
	visit = func(id string) []string {
		mark[id] = onPath
		path = append(path, id)
		for _, d := range deps[id] {
			switch mark[d] {
			case onPath:
				for i, x := range path {
					if x == d {
						return append(append([]string(nil), path[i:]...), d)
					}
				}
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[id] = done
		return nil
	}
	ids := make([]string, 0, len(deps))
	for id := range deps {
		ids = append(ids, id)
	}
	sort.Strings(ids) // the same plan names the same cycle
	for _, id := range ids {
		if mark[id] == unseen {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}

// CriticalPath is the number of nodes on the longest dependency chain.
func (p Plan) CriticalPath() int {
	depth := map[string]int{}
	var walk func(Node) int
	byID := map[string]Node{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
	}
	walk = func(n Node) int {
		if d, ok := depth[n.ID]; ok {
			return d
		}
		best := 0
		for _, d := range n.DependsOn {
			best = max(best, walk(byID[d]))
		}
		depth[n.ID] = best + 1
		return best + 1
	}
	longest := 0
	for _, n := range p.Nodes {
		longest = max(longest, walk(n))
	}
	return longest
}

// Planner turns a request into a plan. The orchestrator asks one per skill:
// the request's own plan (a data part), a playbook of the configuration, or
// later a model that plans from the request's text.
type Planner interface {
	Plan(request *a2a.Message) (Plan, error)
}

// FromRequest plans with the plan the request carries.
type FromRequest struct{}

// Plan reads the request's data part {"plan": {...}}.
func (FromRequest) Plan(m *a2a.Message) (Plan, error) {
	p, ok, err := FromMessage(m)
	if err != nil {
		return Plan{}, err
	}
	if !ok {
		return Plan{}, fmt.Errorf("message.parts: no data part {\"plan\": {...}}")
	}
	return p, nil
}

// Plan expands the playbook with the request's text.
func (pb Playbook) Plan(m *a2a.Message) (Plan, error) {
	var texts []string
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			texts = append(texts, string(t))
		}
	}
	return pb.Expand(strings.Join(texts, "\n")), nil
}
