package server

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/sourcegraph/conc"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durable-a2a/orchestrator/workflows"
)

// Streams follow a task's event log in its workflow. They learn that the log
// may have grown by long-polling the workflow's Temporal history (any new
// history event wakes them), then read the new log entries with a query: no
// polling loop, and an event reaches the client a few milliseconds after the
// workflow records it.
//
// Stream policy: SendStreamingMessage ends when the task is terminal or
// interrupted (INPUT_REQUIRED, AUTH_REQUIRED: the agent waits for the
// client, who answers with a new message); SubscribeToTask follows the task
// through interrupted states until it is terminal.

// SendStreamingMessage starts a task (or delivers a message to one) and
// streams its events: the Task first, then status and artifact updates.
func (h *Handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if err := validateSend(req); err != nil {
			yield(nil, err)
			return
		}
		p := h.principal(ctx)
		p.Tenant = tenantOf(ctx, req.Tenant)
		reply, view, err := h.send(ctx, p, req.Message, true, pushConfigOf(req.Config))
		if err != nil {
			yield(nil, err)
			return
		}
		if reply != nil {
			yield(reply, nil)
			return
		}
		h.stream(ctx, view, view.Seq, true, yield)
	}
}

// SubscribeToTask streams a running task's events, from the client's
// Last-Event-ID when it reconnects.
func (h *Handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if req.ID == "" {
			yield(nil, a2a.NewError(a2a.ErrInvalidParams, "id is required"))
			return
		}
		cursor, hasCursor, err := lastEventID(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		p := h.principal(ctx)
		p.Tenant = tenantOf(ctx, req.Tenant)
		info, err := h.describe(ctx, p, req.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		if !info.running {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s is in a terminal state", req.ID)))
			return
		}
		view, err := h.getTask(ctx, p, req.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		if !hasCursor {
			cursor = view.Seq
		}
		h.stream(ctx, view, cursor, false, yield)
	}
}

// stream yields the task, then every event after cursor until the stream's
// end state.
func (h *Handler) stream(ctx context.Context, first *workflows.TaskView, cursor int64, endAtInterrupt bool, yield func(a2a.Event, error) bool) {
	if h.Streams != nil {
		h.Streams(1)
		defer h.Streams(-1)
	}
	id := first.Task.ID
	ended := func(s a2a.TaskState) bool { return s.Terminal() || endAtInterrupt && workflows.Interrupted(s) }

	setEventID(ctx, cursor)
	if !yield(first.Task, nil) || ended(first.Task.Status.State) && cursor >= first.Seq {
		return
	}

	ctx, cancel := context.WithCancel(ctx)
	changed := make(chan struct{}, 1)
	var wg conc.WaitGroup
	defer wg.Wait() // runs after cancel: the watcher ends with the stream
	defer cancel()
	wg.Go(func() { h.watch(ctx, id, changed) })

	for {
		v, err := h.queryEvents(ctx, id, cursor)
		if err != nil {
			if ctx.Err() == nil {
				yield(nil, err)
			}
			return
		}
		if v.FirstSeq > cursor+1 {
			// The log no longer holds the events after the cursor (it keeps
			// the newest ones): resynchronise with a fresh snapshot.
			view, err := h.queryTask(ctx, id)
			if err != nil {
				yield(nil, err)
				return
			}
			setEventID(ctx, view.Seq)
			if !yield(view.Task, nil) {
				return
			}
			cursor = view.Seq
			if ended(view.Task.Status.State) {
				return
			}
			continue
		}
		for _, e := range v.Events {
			setEventID(ctx, e.Seq)
			if !yield(e.Event.Event, nil) {
				return
			}
			cursor = e.Seq
			if su, ok := e.Event.Event.(*a2a.TaskStatusUpdateEvent); ok && ended(su.Status.State) {
				return
			}
		}
		if len(v.Events) == 500 {
			continue // more to read at once
		}
		select {
		case <-ctx.Done():
			return
		case <-h.draining:
			return // the frontend shuts down: the client resumes elsewhere
		case <-changed:
		}
	}
}

// watch signals changed whenever the task's workflow history grows, across
// continue-as-new, until the workflow closes or ctx ends.
func (h *Handler) watch(ctx context.Context, id a2a.TaskID, changed chan<- struct{}) {
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		resp, err := h.temporal.DescribeWorkflowExecution(ctx, string(id), "")
		if err != nil {
			signal() // the reader's query reports the error
			return
		}
		ex := resp.GetWorkflowExecutionInfo()
		it := h.temporal.GetWorkflowHistory(ctx, string(id), ex.GetExecution().GetRunId(), true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			if _, err := it.Next(); err != nil {
				break
			}
			signal()
		}
		signal()
		if ctx.Err() != nil {
			return
		}
		resp, err = h.temporal.DescribeWorkflowExecution(ctx, string(id), "")
		if err != nil || resp.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return // closed: the reader finds the terminal event
		}
	}
}

func (h *Handler) queryEvents(ctx context.Context, id a2a.TaskID, after int64) (*workflows.EventsView, error) {
	v, err := h.temporal.QueryWorkflow(ctx, string(id), "", workflows.QueryEvents, after)
	if err != nil {
		return nil, h.mapError(ctx, err, "read task events")
	}
	var out workflows.EventsView
	if err := v.Get(&out); err != nil {
		return nil, fmt.Errorf("decode task events: %w", err)
	}
	return &out, nil
}

func (h *Handler) queryTask(ctx context.Context, id a2a.TaskID) (*workflows.TaskView, error) {
	v, err := h.temporal.QueryWorkflow(ctx, string(id), "", workflows.QueryTask)
	if err != nil {
		return nil, h.mapError(ctx, err, "read task")
	}
	var out workflows.TaskView
	if err := v.Get(&out); err != nil {
		return nil, fmt.Errorf("decode task: %w", err)
	}
	return &out, nil
}

// lastEventID reads the SSE Last-Event-ID (a header, or gRPC metadata) of a
// reconnecting client.
func lastEventID(ctx context.Context) (int64, bool, error) {
	cc, ok := a2asrv.CallContextFrom(ctx)
	if !ok {
		return 0, false, nil
	}
	vals, ok := cc.ServiceParams().Get("Last-Event-ID")
	if !ok || len(vals) == 0 || vals[0] == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(vals[0], 10, 64)
	if err != nil || n < 0 {
		return 0, false, a2a.NewError(a2a.ErrInvalidParams, "Last-Event-ID must be an event sequence number this server sent")
	}
	return n, true, nil
}

// SSE event IDs. a2a-go's SSE writer gives every event a random ID; the
// frontend wraps the response so that each event carries its sequence
// number in the task's log instead, which is what Last-Event-ID resumes from.

type eventIDsKey struct{}

// eventIDs passes sequence numbers from the stream to the response writer,
// in the order the events are written.
type eventIDs struct {
	mu  sync.Mutex
	ids []int64
}

func setEventID(ctx context.Context, seq int64) {
	if q, ok := ctx.Value(eventIDsKey{}).(*eventIDs); ok {
		q.mu.Lock()
		q.ids = append(q.ids, seq)
		q.mu.Unlock()
	}
}

func (q *eventIDs) next() (int64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ids) == 0 {
		return 0, false
	}
	id := q.ids[0]
	q.ids = q.ids[1:]
	return id, true
}

// sseIDs rewrites the "id:" line of each SSE event the transport writes.
func sseIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := &eventIDs{}
		next.ServeHTTP(&idWriter{ResponseWriter: w, ids: q}, r.WithContext(context.WithValue(r.Context(), eventIDsKey{}, q)))
	})
}

type idWriter struct {
	http.ResponseWriter
	ids *eventIDs
}

var idPrefix = []byte("id:")

func (w *idWriter) Write(p []byte) (int, error) {
	if !bytes.HasPrefix(p, idPrefix) {
		return w.ResponseWriter.Write(p)
	}
	if seq, ok := w.ids.next(); ok {
		if _, err := fmt.Fprintf(w.ResponseWriter, "id: %d\n", seq); err != nil {
			return 0, err
		}
	}
	// An event without a sequence number (an error) gets no ID.
	return len(p), nil
}

func (w *idWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
