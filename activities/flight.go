package activities

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
)

// BookFlightName is the activity type of the flight booking.
const BookFlightName = "BookFlight"

// Booking is what the flight skill books.
type Booking struct {
	TaskID string `json:"taskId"`
	From   string `json:"from"`
	To     string `json:"to"`
	Date   string `json:"date"`
}

// Flights books flights for the demo flight skill. Each booking is applied
// through the ledger under the task's ID: a retry after a crash finds it
// there and books nothing more. Attempts counts every call.
type Flights struct {
	Ledger   Ledger
	Attempts atomic.Int64
}

// Register adds the activity to a worker.
func (f *Flights) Register(r interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}) {
	r.RegisterActivityWithOptions(f.Book, activity.RegisterOptions{Name: BookFlightName})
}

// Book books the flight once and returns its confirmation code, the same on
// every retry.
func (f *Flights) Book(ctx context.Context, b Booking) (string, error) {
	f.Attempts.Add(1)
	if _, err := f.Ledger.Apply("flight-" + b.TaskID); err != nil {
		return "", err
	}
	code := strings.ToUpper(uuid.NewSHA1(uuid.NameSpaceOID, []byte(b.TaskID)).String()[:6])
	return fmt.Sprintf("Booked %s -> %s on %s, confirmation %s.", b.From, b.To, b.Date, code), nil
}
