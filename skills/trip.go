package skills

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/workflows"
)

// bookingSkill is a trip agent's skill: one booking of kind, built on what
// the request and the tasks it builds on (data parts) say.
func bookingSkill(kind, name, description string) Def {
	return Def{
		Card: a2a.AgentSkill{
			ID: "book-" + kind, Name: name, Description: description,
			Tags: []string{"travel"}, InputModes: []string{"text/plain", "application/json"}, OutputModes: []string{"text/plain", "application/json"},
		},
		Run: func(s *workflows.Session) error {
			if err := s.Working("booking the " + kind); err != nil {
				return err
			}
			detail := bookingDetail(s.Input().Message)
			ctx := workflow.WithActivityOptions(s.Ctx(), workflow.ActivityOptions{
				StartToCloseTimeout: 5 * time.Minute,
				HeartbeatTimeout:    3 * time.Second,
				RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
			})
			var confirmation string
			if err := workflow.ExecuteActivity(ctx, activities.BookName, activities.BookingRequest{
				Kind: kind, TaskID: string(s.TaskID()), Detail: detail,
			}).Get(ctx, &confirmation); err != nil {
				var appErr *temporal.ApplicationError
				if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeDownstream {
					return s.Reject(appErr.Message())
				}
				return err
			}
			if err := s.Artifact(kind, a2a.NewTextPart(confirmation), a2a.NewDataPart(map[string]any{kind: detail})); err != nil {
				return err
			}
			return s.Complete("")
		},
	}
}

// bookingDetail says where and when: from a flight booking among the data
// the request carries, else from its text.
func bookingDetail(m *a2a.Message) string {
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if obj, ok := d.Value.(map[string]any); ok {
				if to, ok := obj["to"].(string); ok {
					date, _ := obj["date"].(string)
					return fmt.Sprintf("in %s from %s", to, date)
				}
				for _, v := range []string{"hotel", "snowmobile"} {
					if earlier, ok := obj[v].(string); ok {
						return earlier // a follow-up on an earlier booking
					}
				}
			}
		}
	}
	text := strings.TrimSpace(TextOf(m))
	if len(text) > 80 {
		text = text[:80] + "..."
	}
	return text
}
