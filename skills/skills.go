// Package skills is the catalog of what this agent can do: each skill's card
// entry, the check the frontend runs before a task starts, an optional quick
// reply that needs no task, and the workflow code that does the work.
package skills

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/plan"
	"github.com/durable-a2a/orchestrator/workflows"
)

// MetaSkill is the message metadata key that picks a skill.
const MetaSkill = "skill"

// Def is one skill.
type Def struct {
	Card a2a.AgentSkill
	// Validate rejects a first message the skill cannot take (-32602).
	Validate func(*a2a.Message) error
	// Prepare fixes the skill's arguments when the task starts (-32602 on
	// error); they travel in the task's workflow input.
	Prepare func(*a2a.Message) (json.RawMessage, error)
	// Reply, when it returns a message, answers at once with no task.
	Reply func(*a2a.Message) *a2a.Message
	Run   workflows.Skill
	// Internal skills run only as tasks this server makes (the
	// orchestrator's nodes): clients cannot ask for them.
	Internal bool
}

// Catalog holds the skills by ID, and which one a message gets by default.
type Catalog struct {
	Default string
	Defs    map[string]Def
	agents  []string
}

// Agents names the downstream agents the configuration offers.
func (c *Catalog) Agents() []string { return c.agents }

// New is the catalog of everything this server does: the demo skills, the
// trip agents' bookings, and the orchestrator with the configuration's
// playbooks, each one skill. Each A2A server offers a part of it (Only).
func New(cfg *config.Config) *Catalog {
	c := &Catalog{Default: "work", Defs: map[string]Def{}}
	c.Defs["work"] = workDef()
	c.Defs["book-flight"] = Def{Card: flightCard, Run: runFlight}
	c.Defs["book-hotel"] = bookingSkill("hotel", "Book a hotel", "Books a hotel; give it the destination and dates, or the flight booking it builds on.")
	c.Defs["book-snowmobile"] = bookingSkill("snowmobile", "Book a snowmobile tour", "Books a snowmobile tour at the destination.")
	c.Defs[SkillDelegate] = Def{Run: runDelegate, Internal: true}
	if cfg != nil {
		for _, a := range cfg.Agents {
			c.agents = append(c.agents, a.Name)
		}
		c.Defs["orchestrate"] = orchestrateDef(cfg)
		for _, pb := range cfg.Playbooks {
			c.Defs[pb.Name] = playbookDef(cfg, pb)
		}
	}
	return c
}

// Only keeps the given skills (the first is the default) for an A2A server
// that offers just those.
func (c *Catalog) Only(ids ...string) *Catalog {
	out := &Catalog{Default: ids[0], Defs: map[string]Def{}}
	for _, id := range ids {
		out.Defs[id] = c.Defs[id]
	}
	return out
}

// workDef is the demo skill: durable work on the text it is sent.
func workDef() Def {
	return Def{
		Card: a2a.AgentSkill{
			ID:          "work",
			Name:        "Durable work",
			Description: "Processes the text it is sent in a durable activity and returns the result as an artifact. Set message metadata \"delay\" (a Go duration such as \"30s\") to make it take that long, so it can be watched and canceled, and \"chunks\" (1 to 100000) to stream the result in that many pieces over the delay. Send \"help\" for a quick reply without a task.",
			Tags:        []string{"demo", "durable"},
			Examples:    []string{"count the words in this sentence", "help"},
			InputModes:  []string{"text/plain"},
			OutputModes: []string{"text/plain"},
		},
		Validate: func(m *a2a.Message) error {
			if _, err := delayOf(m); err != nil {
				return err
			}
			_, err := chunksOf(m)
			return err
		},
		Reply: func(m *a2a.Message) *a2a.Message {
			if !strings.EqualFold(strings.TrimSpace(TextOf(m)), "help") {
				return nil
			}
			return a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(
				"Send any text and I will process it as a durable task; add metadata {\"delay\":\"30s\"} to make it slow."))
		},
		Run: runWork,
	}
}

// Workflows returns the run functions for the task workflow.
func (c *Catalog) Workflows() workflows.Skills {
	out := workflows.Skills{}
	for id, d := range c.Defs {
		out[id] = d.Run
	}
	return out
}

// Cards lists the skills for the Agent Card, in a stable order.
func (c *Catalog) Cards() []a2a.AgentSkill {
	out := make([]a2a.AgentSkill, 0, len(c.Defs))
	for _, d := range c.Defs {
		if !d.Internal {
			out = append(out, d.Card)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Pick returns the skill a message asks for: metadata.skill, else the
// orchestrator for a message that carries a plan, else the default.
func (c *Catalog) Pick(m *a2a.Message) (string, Def, error) {
	id := c.Default
	if _, ok := c.Defs["orchestrate"]; ok {
		if _, hasPlan, _ := plan.FromMessage(m); hasPlan {
			id = "orchestrate"
		}
	}
	if v, ok := m.Metadata[MetaSkill]; ok {
		s, isString := v.(string)
		if !isString {
			return "", Def{}, fmt.Errorf("message.metadata.skill must be a string")
		}
		id = s
	}
	d, ok := c.Defs[id]
	if !ok || d.Internal {
		return "", Def{}, fmt.Errorf("message.metadata.skill: unknown skill %q (known: %s)", id, strings.Join(c.ids(), ", "))
	}
	return id, d, nil
}

func (c *Catalog) ids() []string {
	ids := make([]string, 0, len(c.Defs))
	for id, d := range c.Defs {
		if !d.Internal {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// TextOf joins the text parts of a message.
func TextOf(m *a2a.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(string(t))
		}
	}
	return b.String()
}

const maxDelay = 24 * time.Hour

func delayOf(m *a2a.Message) (time.Duration, error) {
	v, ok := m.Metadata["delay"]
	if !ok {
		return 0, nil
	}
	s, isString := v.(string)
	if !isString {
		return 0, fmt.Errorf("message.metadata.delay must be a duration string such as \"30s\"")
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxDelay {
		return 0, fmt.Errorf("message.metadata.delay: %q is not a duration between 0 and %s", s, maxDelay)
	}
	return d, nil
}

const (
	maxChunks = 100000
	// chunksPerTick is how many chunks go out per durable timer tick.
	chunksPerTick = 100
)

func chunksOf(m *a2a.Message) (int, error) {
	v, ok := m.Metadata["chunks"]
	if !ok {
		return 0, nil
	}
	f, isNumber := v.(float64)
	if !isNumber || f != float64(int(f)) || f < 1 || f > maxChunks {
		return 0, fmt.Errorf("message.metadata.chunks must be a whole number from 1 to %d", maxChunks)
	}
	return int(f), nil
}

// runWork is the demo skill: one activity, its result as an artifact
// (streamed in chunks when asked).
func runWork(s *workflows.Session) error {
	msg := s.Input().Message
	delay, err := delayOf(msg)
	if err != nil {
		return s.Reject(err.Error())
	}
	chunks, err := chunksOf(msg)
	if err != nil {
		return s.Reject(err.Error())
	}
	if chunks > 0 {
		return streamWork(s, delay, chunks)
	}
	if err := s.Working("working on it"); err != nil {
		return err
	}
	in := activities.WorkInput{Text: TextOf(msg), Delay: delay}
	var out string
	if delay == 0 {
		// Quick work runs as a local activity: no round trip through
		// Temporal's task queue, and still recorded, so never done twice
		// once it has completed.
		lctx := workflow.WithLocalActivityOptions(s.Ctx(), workflow.LocalActivityOptions{
			StartToCloseTimeout: 10 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: 10 * time.Second},
		})
		if err := workflow.ExecuteLocalActivity(lctx, activities.DemoWorkName, in).Get(lctx, &out); err != nil {
			return err
		}
	} else {
		ctx := workflow.WithActivityOptions(s.Ctx(), workflow.ActivityOptions{
			StartToCloseTimeout: delay + time.Minute,
			HeartbeatTimeout:    2 * time.Second,
			// A cancel returns only once the work has really stopped.
			WaitForCancellation: true,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
		})
		if err := workflow.ExecuteActivity(ctx, activities.DemoWorkName, in).Get(ctx, &out); err != nil {
			return err
		}
	}
	if err := s.Artifact("result", a2a.NewTextPart(out)); err != nil {
		return err
	}
	return s.Complete("")
}

// streamWork produces the result in chunks paced over the delay (up to
// chunksPerTick chunks per durable timer tick). It checkpoints after every
// tick, so a long stream continues as new and resumes where it was.
func streamWork(s *workflows.Session, delay time.Duration, chunks int) error {
	var cp struct {
		Next     int            `json:"next"`
		Artifact a2a.ArtifactID `json:"artifact"`
	}
	resumed, err := s.Restore(&cp)
	if err != nil {
		return err
	}
	if !resumed {
		if err := s.Working("streaming the result"); err != nil {
			return err
		}
	}
	ticks := (chunks + chunksPerTick - 1) / chunksPerTick
	pause := delay / time.Duration(ticks)
	if chunks <= chunksPerTick {
		ticks, pause = chunks, delay/time.Duration(chunks) // small streams: one chunk per tick
	}
	perTick := (chunks + ticks - 1) / ticks
	for cp.Next < chunks {
		if pause > 0 {
			if err := workflow.Sleep(s.Ctx(), pause); err != nil {
				return err
			}
		}
		for end := min(cp.Next+perTick, chunks); cp.Next < end; cp.Next++ {
			cp.Artifact = s.ArtifactChunk(cp.Artifact, "result", cp.Next > 0, cp.Next == chunks-1,
				a2a.NewTextPart(fmt.Sprintf("chunk %d of %d\n", cp.Next+1, chunks)))
		}
		if err := s.Checkpoint(cp); err != nil {
			return err
		}
		if err := s.ContinueIfLong(); err != nil {
			return err
		}
	}
	return s.Complete("")
}
