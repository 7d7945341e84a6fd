package workflows

import (
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Handlers of a task's push notification configs, which live in its workflow.
const (
	UpdatePushCreate = "a2a.CreatePushConfig"
	UpdatePushDelete = "a2a.DeletePushConfig"
	QueryPushConfigs = "a2a.PushConfigs"
	// PushDeliverActivity is the activity that POSTs one event.
	PushDeliverActivity = "PushDeliver"
)

// pushSub is one push config and how far its deliveries got.
type pushSub struct {
	Config a2a.PushConfig `json:"config"`
	// Cursor is the sequence number of the last event delivered or given up.
	Cursor  int64 `json:"cursor"`
	Deleted bool  `json:"deleted,omitempty"`
	Done    bool  `json:"done,omitempty"`
}

// pushDelivery mirrors activities.PushDelivery (workflows do not import
// activities).
type pushDelivery struct {
	Config a2a.PushConfig     `json:"config"`
	Seq    int64              `json:"seq"`
	Event  a2a.StreamResponse `json:"event"`
}

const maxPushConfigs = 10

// addPush registers (or replaces, by ID) a config; deliveries start with
// the next event.
func (s *taskState) addPush(cfg a2a.PushConfig) (*pushSub, bool) {
	for _, p := range s.Push {
		if p.Config.ID == cfg.ID && !p.Deleted {
			p.Config = cfg
			return p, false
		}
	}
	p := &pushSub{Config: cfg, Cursor: s.lastSeq()}
	s.Push = append(s.Push, p)
	return p, true
}

func (s *taskState) pushConfigs() []a2a.PushConfig {
	out := []a2a.PushConfig{}
	for _, p := range s.Push {
		if !p.Deleted {
			out = append(out, p.Config)
		}
	}
	return out
}

// deliverPush sends a config's events in order, one at a time: event N+1
// goes only after N was delivered or given up (after giveUp of retries).
func (t *Tasks) deliverPush(ctx workflow.Context, st *taskState, p *pushSub) {
	giveUp := t.PushGiveUp
	if giveUp == 0 {
		giveUp = time.Hour
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    15 * time.Second,
		ScheduleToCloseTimeout: giveUp,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{"WebhookRefused"},
		},
	})
	for !p.Deleted && !p.Done {
		if err := workflow.Await(ctx, func() bool { return p.Deleted || st.lastSeq() > p.Cursor }); err != nil || p.Deleted {
			return
		}
		var next *LoggedEvent
		for i := range st.Events {
			if st.Events[i].Seq > p.Cursor {
				next = &st.Events[i]
				break
			}
		}
		if next == nil {
			return
		}
		err := workflow.ExecuteActivity(actx, PushDeliverActivity, pushDelivery{Config: p.Config, Seq: next.Seq, Event: next.Event}).Get(actx, nil)
		if err != nil {
			workflow.GetLogger(ctx).Warn("push notification given up", "config", p.Config.ID, "seq", next.Seq)
		}
		p.Cursor = next.Seq
		if su, ok := next.Event.Event.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State.Terminal() {
			p.Done = true
		}
	}
}

// pushHandlers registers the config handlers and starts delivering for the
// configs the task already has.
func (t *Tasks) pushHandlers(ctx workflow.Context, st *taskState) error {
	// Deliveries run on a context a cancel does not stop: the cancel itself
	// is an event to deliver.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	start := func(p *pushSub) { workflow.Go(dctx, func(c workflow.Context) { t.deliverPush(c, st, p) }) }
	for _, p := range st.Push {
		if !p.Deleted && !p.Done {
			start(p)
		}
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdatePushCreate,
		func(ctx workflow.Context, cfg a2a.PushConfig) (a2a.PushConfig, error) {
			if p, isNew := st.addPush(cfg); isNew {
				start(p)
			}
			return cfg, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, cfg a2a.PushConfig) error {
			if st.Task.Status.State.Terminal() {
				return temporal.NewApplicationError(fmt.Sprintf("task %s is %s: it sends no more notifications", st.Task.ID, st.Task.Status.State), ErrTypeUnsupported)
			}
			if len(st.pushConfigs()) >= maxPushConfigs {
				return temporal.NewApplicationError(fmt.Sprintf("a task has at most %d push configs", maxPushConfigs), ErrTypeInvalidParams)
			}
			return nil
		}}); err != nil {
		return fmt.Errorf("set push create handler: %w", err)
	}
	if err := workflow.SetUpdateHandler(ctx, UpdatePushDelete, func(ctx workflow.Context, id string) error {
		for _, p := range st.Push {
			if p.Config.ID == id {
				p.Deleted = true
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("set push delete handler: %w", err)
	}
	return workflow.SetQueryHandler(ctx, QueryPushConfigs, func() ([]a2a.PushConfig, error) { return st.pushConfigs(), nil })
}

// pushSettled: every config has delivered (or given up) the final event.
func (s *taskState) pushSettled() bool {
	for _, p := range s.Push {
		if !p.Deleted && !p.Done {
			return false
		}
	}
	return true
}
