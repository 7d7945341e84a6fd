package activities

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// BookName is the activity type of the trip agents' bookings.
const BookName = "Book"

// BookingRequest is one booking: a kind of thing (hotel, snowmobile tour)
// for a task, with what the request said.
type BookingRequest struct {
	Kind   string `json:"kind"`
	TaskID string `json:"taskId"`
	Detail string `json:"detail"`
}

// Bookings makes the trip agents' bookings. Each takes Delay (the agent's
// work time) and is applied once per task through the ledger.
type Bookings struct {
	Ledger Ledger
	Delay  time.Duration

	mu    sync.Mutex
	spans []Span
}

// Span is when one booking's work ran.
type Span struct {
	Kind       string
	Start, End time.Time
}

// Spans lists the bookings' work times, for tests that check what ran in
// parallel.
func (b *Bookings) Spans() []Span {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Span(nil), b.spans...)
}

// Register adds the activity to a worker.
func (b *Bookings) Register(r interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}) {
	r.RegisterActivityWithOptions(b.Book, activity.RegisterOptions{Name: BookName})
}

// Book waits the agent's work time, then records the booking once.
func (b *Bookings) Book(ctx context.Context, req BookingRequest) (string, error) {
	if strings.Contains(req.Detail, "REJECT") {
		return "", temporal.NewNonRetryableApplicationError("no availability", ErrTypeDownstream, nil)
	}
	start := time.Now()
	defer func() {
		b.mu.Lock()
		b.spans = append(b.spans, Span{Kind: req.Kind, Start: start, End: time.Now()})
		b.mu.Unlock()
	}()
	// Heartbeats let a dead worker's booking be retried within seconds.
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(b.Delay); time.Now().Before(end); {
		activity.RecordHeartbeat(ctx)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		case <-time.After(time.Until(end)):
		}
	}
	if _, err := b.Ledger.Apply(req.Kind + "-" + req.TaskID); err != nil {
		return "", err
	}
	code := strings.ToUpper(uuid.NewSHA1(uuid.NameSpaceOID, []byte(req.Kind+req.TaskID)).String()[:6])
	return fmt.Sprintf("%s booked (%s), confirmation %s.", titleCase(req.Kind), req.Detail, code), nil
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
