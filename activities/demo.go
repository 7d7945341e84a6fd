// Package activities holds the side effects of task workflows: the demo
// skill's work today, calls to downstream agents and push delivery later.
package activities

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
)

// DemoWorkName is the activity type of the demo skill's work.
const DemoWorkName = "DemoWork"

// WorkInput is what the demo work is given.
type WorkInput struct {
	Text  string        `json:"text"`
	Delay time.Duration `json:"delay"`
}

// Demo is the demo skill's activity. Its counters let tests see how often the
// work really ran to the end and how often it was stopped by a cancel; the
// ledger records each task's finished work once, across processes.
type Demo struct {
	Ledger    Ledger
	Completed atomic.Int64
	Canceled  atomic.Int64
}

// Register adds the activities to a worker.
func (d *Demo) Register(r interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}) {
	r.RegisterActivityWithOptions(d.Work, activity.RegisterOptions{Name: DemoWorkName})
}

// Work waits for the requested delay, heartbeating so that a cancel reaches
// it, then produces its result.
func (d *Demo) Work(ctx context.Context, in WorkInput) (string, error) {
	deadline := time.Now().Add(in.Delay)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		activity.RecordHeartbeat(ctx)
		select {
		case <-ctx.Done():
			d.Canceled.Add(1)
			return "", ctx.Err() // reported to the workflow as a cancellation, not a failure
		case <-tick.C:
		}
	}
	if _, err := d.Ledger.Apply("work-" + activity.GetInfo(ctx).WorkflowExecution.ID); err != nil {
		return "", err
	}
	d.Completed.Add(1)
	words := len(strings.Fields(in.Text))
	return fmt.Sprintf("Processed %q: %d words, %d characters.", in.Text, words, len([]rune(in.Text))), nil
}
