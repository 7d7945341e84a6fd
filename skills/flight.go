package skills

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-a2a/orchestrator/activities"
	"github.com/durable-a2a/orchestrator/workflows"
)

var flightCard = a2a.AgentSkill{
	ID:   "book-flight",
	Name: "Book a flight",
	Description: "Books a flight. Asks for what it lacks (origin, destination, date) and waits for the answers as long as it takes (TASK_STATE_INPUT_REQUIRED). " +
		"With message metadata {\"requirePayment\": true} it also waits for a payment authorization (TASK_STATE_AUTH_REQUIRED).",
	Tags:        []string{"travel", "multi-turn"},
	Examples:    []string{"Book a flight from Helsinki to Rovaniemi on 2026-12-20", "I need a flight"},
	InputModes:  []string{"text/plain", "application/json"},
	OutputModes: []string{"text/plain", "application/json"},
}

// flightSlots is what a booking needs; answers fill it over several turns.
type flightSlots struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Date string `json:"date,omitempty"`
}

var (
	reFrom = regexp.MustCompile(`(?i)\bfrom\s+(\p{L}[\p{L} .'-]*?)(?:\s+(?:to|on)\b|[,.;!?]|$)`)
	reTo   = regexp.MustCompile(`(?i)\bto\s+(\p{L}[\p{L} .'-]*?)(?:\s+(?:from|on)\b|[,.;!?]|$)`)
	reDate = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})\b`)
)

// fill takes what a message says; asked is the slot the last question was
// about, which a bare answer ("Oulu") fills.
func (f *flightSlots) fill(m *a2a.Message, asked string) {
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if obj, ok := d.Value.(map[string]any); ok {
				for _, slot := range []struct {
					key string
					dst *string
				}{{"from", &f.From}, {"to", &f.To}, {"date", &f.Date}} {
					if v, ok := obj[slot.key].(string); ok && v != "" {
						*slot.dst = v
					}
				}
			}
		}
	}
	text := strings.TrimSpace(TextOf(m))
	filled := false
	if g := reFrom.FindStringSubmatch(text); g != nil {
		f.From, filled = strings.TrimSpace(g[1]), true
	}
	if g := reTo.FindStringSubmatch(text); g != nil {
		f.To, filled = strings.TrimSpace(g[1]), true
	}
	if g := reDate.FindStringSubmatch(text); g != nil && validDate(g[1]) {
		f.Date, filled = g[1], true
	}
	if filled || text == "" {
		return
	}
	switch asked {
	case "from":
		f.From = text
	case "to":
		f.To = text
	}
}

func validDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// next is the first missing slot and the question that asks for it.
func (f *flightSlots) next() (slot, question string) {
	switch {
	case f.From == "":
		return "from", "Where are you flying from?"
	case f.To == "":
		return "to", "Where would you like to fly to?"
	case f.Date == "":
		return "date", "On which date do you want to fly (YYYY-MM-DD)?"
	}
	return "", ""
}

// runFlight is the flight skill: a durable conversation, then one booking.
func runFlight(s *workflows.Session) error {
	// The checkpoint lets the conversation resume where it was after the
	// task continues as new, however many rounds it takes.
	var slots flightSlots
	resumed, err := s.Restore(&slots)
	if err != nil {
		return err
	}
	if !resumed {
		slots.fill(s.Input().Message, "")
		if err := s.Working("checking your request"); err != nil {
			return err
		}
	}
	for {
		slot, question := slots.next()
		if slot == "" {
			break
		}
		if err := s.Checkpoint(slots); err != nil {
			return err
		}
		answer, err := s.Ask(a2a.TaskStateInputRequired, question)
		if err != nil {
			return err
		}
		slots.fill(answer, slot)
	}
	if pay, _ := s.Input().Message.Metadata["requirePayment"].(bool); pay {
		if err := s.Checkpoint(slots); err != nil {
			return err
		}
		answer, err := s.Ask(a2a.TaskStateAuthRequired,
			"This booking needs a payment authorization. Reply \"authorize\" to approve the charge (the demo takes it in-band).")
		if err != nil {
			return err
		}
		if !strings.Contains(strings.ToLower(TextOf(answer)), "authorize") {
			return s.Reject("payment was not authorized; nothing was booked")
		}
		if err := s.Working("payment authorized"); err != nil {
			return err
		}
	}
	ctx := workflow.WithActivityOptions(s.Ctx(), workflow.ActivityOptions{
		// The booking is quick: a dead worker's attempt is retried soon.
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
	})
	var confirmation string
	if err := workflow.ExecuteActivity(ctx, activities.BookFlightName, activities.Booking{
		TaskID: string(s.TaskID()), From: slots.From, To: slots.To, Date: slots.Date,
	}).Get(ctx, &confirmation); err != nil {
		return fmt.Errorf("booking failed: %w", err)
	}
	if err := s.Artifact("booking", a2a.NewTextPart(confirmation),
		a2a.NewDataPart(map[string]any{"from": slots.From, "to": slots.To, "date": slots.Date})); err != nil {
		return err
	}
	return s.Complete("")
}
