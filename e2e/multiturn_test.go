package e2e

import (
	"errors"
	"go.temporal.io/api/workflowservice/v1"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

func flightMsg(text string, meta map[string]any) *a2a.Message {
	m := map[string]any{"skill": "book-flight"}
	for k, v := range meta {
		m[k] = v
	}
	return userMsg(text, m)
}

func reply(task *a2a.Task, text string) *a2a.Message {
	m := userMsg(text, nil)
	m.TaskID = task.ID
	m.ContextID = task.ContextID
	return m
}

func question(task *a2a.Task) string {
	if task.Status.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range task.Status.Message.Parts {
		if s, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(s))
		}
	}
	return b.String()
}

func expectState(t *testing.T, task *a2a.Task, want a2a.TaskState, asks string) {
	t.Helper()
	if task.Status.State != want {
		t.Fatalf("state = %s (%q), want %s", task.Status.State, question(task), want)
	}
	if asks != "" && !strings.Contains(strings.ToLower(question(task)), asks) {
		t.Fatalf("status message %q does not ask about %q", question(task), asks)
	}
}

func TestFlightAsksForWhatItLacks(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, env.BaseURL, b)
			booked, _ := env.Acts.Flights.Ledger.Count("flight-")

			task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("I need a flight", nil)})
			expectState(t, task, a2a.TaskStateInputRequired, "from")

			task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "Helsinki")})
			expectState(t, task, a2a.TaskStateInputRequired, "to")

			last := reply(task, "to Rovaniemi on 2026-12-20")
			task = send(t, c, &a2a.SendMessageRequest{Message: last})
			expectState(t, task, a2a.TaskStateCompleted, "")
			if got := artifactText(task, "booking"); !strings.Contains(got, "Helsinki -> Rovaniemi on 2026-12-20") {
				t.Errorf("booking = %q", got)
			}
			if n, _ := env.Acts.Flights.Ledger.Count("flight-"); n != booked+1 {
				t.Errorf("%d bookings made, want 1", n-booked)
			}
			// Resending the last answer (a client retry) returns the task and
			// applies nothing twice.
			again := send(t, c, &a2a.SendMessageRequest{Message: last})
			if again.ID != task.ID || len(again.History) != len(task.History) {
				t.Errorf("resent reply changed the task: %d messages, was %d", len(again.History), len(task.History))
			}
		})
	}
}

func TestAuthRequiredRound(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Oulu to Ivalo on 2026-12-24", map[string]any{"requirePayment": true})})
	expectState(t, task, a2a.TaskStateAuthRequired, "authoriz")
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "authorize")})
	expectState(t, task, a2a.TaskStateCompleted, "")

	// Refusing the payment ends the task REJECTED, with nothing booked.
	booked, _ := env.Acts.Flights.Ledger.Count("flight-")
	task = send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Oulu to Ivalo on 2026-12-25", map[string]any{"requirePayment": true})})
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "no thanks")})
	expectState(t, task, a2a.TaskStateRejected, "not authorized")
	if n, _ := env.Acts.Flights.Ledger.Count("flight-"); n != booked {
		t.Error("a rejected payment booked a flight")
	}
}

func TestReturnImmediatelyOnReply(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolHTTPJSON)
	task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("flight from Turku to Kittila", nil)})
	expectState(t, task, a2a.TaskStateInputRequired, "date")
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "2026-12-30"), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if task.Status.State != a2a.TaskStateWorking && task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s, want WORKING (or already COMPLETED)", task.Status.State)
	}
}

// Two answers sent at once to one question: exactly one is applied, the
// other is refused with UnsupportedOperationError.
func TestConcurrentRepliesOneWins(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	for round := range 5 {
		task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Vaasa to Kemi", nil)})
		expectState(t, task, a2a.TaskStateInputRequired, "date")
		answers := []*a2a.Message{reply(task, "2027-01-0"+string(rune('1'+round))), reply(task, "2027-02-0"+string(rune('1'+round)))}
		results := make([]error, 2)
		var wg sync.WaitGroup
		for i, m := range answers {
			wg.Go(func() {
				_, results[i] = c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: m})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range results {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, a2a.ErrUnsupportedOperation):
				t.Fatalf("round %d: loser got %v, want UnsupportedOperationError", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d replies applied, want exactly 1 (%v)", round, ok, results)
		}
		final, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		users := 0
		for _, m := range final.History {
			if m.Role == a2a.MessageRoleUser {
				users++
			}
		}
		if final.Status.State != a2a.TaskStateCompleted || users != 2 {
			t.Fatalf("round %d: %s with %d user messages, want COMPLETED with 2", round, final.Status.State, users)
		}
	}
}

// A cancel racing a reply ends in one consistent state: CANCELED, or the
// reply won and the task completed before the cancel could apply.
func TestCancelRacingReply(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	for round := range 5 {
		task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Pori to Salla", nil)})
		var (
			wg        sync.WaitGroup
			replyErr  error
			cancelErr error
			canceled  *a2a.Task
		)
		wg.Go(func() {
			_, replyErr = c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: reply(task, "2027-03-0"+string(rune('1'+round)))})
		})
		wg.Go(func() { canceled, cancelErr = c.CancelTask(ctxT(t), &a2a.CancelTaskRequest{ID: task.ID}) })
		wg.Wait()
		final, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		switch final.Status.State {
		case a2a.TaskStateCanceled:
			if cancelErr != nil || canceled.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("round %d: task CANCELED but CancelTask said %v %v", round, cancelErr, canceled)
			}
			if replyErr != nil && !errors.Is(replyErr, a2a.ErrUnsupportedOperation) {
				t.Fatalf("round %d: reply got %v", round, replyErr)
			}
		case a2a.TaskStateCompleted:
			if replyErr != nil || !errors.Is(cancelErr, a2a.ErrTaskNotCancelable) && (cancelErr != nil || canceled.Status.State != a2a.TaskStateCompleted) {
				t.Fatalf("round %d: COMPLETED but reply %v, cancel %v", round, replyErr, cancelErr)
			}
		default:
			t.Fatalf("round %d: final state %s", round, final.Status.State)
		}
	}
}

var _ = a2aclient.Config{}

// TestManyRounds takes one task through 500 question-and-answer rounds: the
// workflow continues as new many times (the test worker does so every few
// rounds), and the task keeps its whole A2A history and its identity.
func TestManyRounds(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Lahti to Kuopio", nil)})
	const rounds = 500
	for i := range rounds {
		expectState(t, task, a2a.TaskStateInputRequired, "date")
		task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "not a date, try again"+strings.Repeat("!", i%3))})
	}
	expectState(t, task, a2a.TaskStateInputRequired, "date")
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "2027-07-07")})
	expectState(t, task, a2a.TaskStateCompleted, "")

	full, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, m := range full.History {
		if m.Role == a2a.MessageRoleUser {
			users++
		}
	}
	if users != rounds+2 {
		t.Errorf("history has %d user messages, want %d", users, rounds+2)
	}
	ten := 10
	last, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &ten})
	if err != nil || len(last.History) != 10 {
		t.Fatalf("historyLength 10: %d messages, %v", len(last.History), err)
	}
	runs := 0
	it, err := env.Client.ListWorkflow(ctxT(t), &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowId = '" + string(task.ID) + "'",
	})
	if err != nil {
		t.Fatal(err)
	}
	runs = len(it.GetExecutions())
	if runs < 10 {
		t.Errorf("the task ran in %d workflow runs; it should have continued as new many times", runs)
	}
}
