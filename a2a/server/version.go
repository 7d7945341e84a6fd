package server

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Version negotiation. This server speaks A2A 1.0. A request naming another
// version in A2A-Version (header, gRPC metadata, or the query parameter)
// gets VersionNotSupportedError (-32009); a patch number is ignored ("1.0.2"
// is 1.0). A request with no version at all is served as 1.0: the spec reads
// a missing header as 0.3, which a 1.0-only server would refuse, but plain
// curl users and many clients omit it, and 0.3 requests use other method
// names, which get -32601 anyway.

// SupportedVersion is the protocol version served.
const SupportedVersion = "1.0"

func checkVersion(ctx context.Context) error {
	cc, ok := a2asrv.CallContextFrom(ctx)
	if !ok {
		return nil
	}
	vals, ok := cc.ServiceParams().Get(a2a.SvcParamVersion)
	if !ok || len(vals) == 0 {
		return nil
	}
	for _, v := range strings.Split(vals[0], ",") {
		v = strings.TrimSpace(v)
		if v == "" || v == SupportedVersion || strings.HasPrefix(v, SupportedVersion+".") {
			return nil
		}
	}
	return a2a.NewError(a2a.ErrVersionNotSupported, "A2A-Version "+vals[0]+" is not supported; this server speaks "+SupportedVersion)
}

// versionQuery lets a client name the version as ?A2A-Version=, as the spec allows.
func versionQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get(a2a.SvcParamVersion); v != "" && r.Header.Get(a2a.SvcParamVersion) == "" {
			r.Header.Set(a2a.SvcParamVersion, v)
		}
		next.ServeHTTP(w, r)
	})
}

// Versioned wraps a handler with the version check and a structured log
// line per call (the HTTP routes do it themselves; gRPC servers use this).
func Versioned(h *Handler) a2asrv.RequestHandler { return versioned{h: h, log: h.log} }

// versioned checks the version before any method runs, and logs each call
// with its taskId and contextId (never credentials or message content).
type versioned struct {
	h   a2asrv.RequestHandler
	log *slog.Logger
}

func (v versioned) done(ctx context.Context, method string, start time.Time, taskID a2a.TaskID, contextID string, err error) {
	if v.log == nil {
		return
	}
	attrs := []any{"method", method, "taskId", string(taskID), "contextId", contextID,
		"owner", principalFrom(ctx).Owner, "ms", time.Since(start).Milliseconds()}
	if err != nil {
		v.log.InfoContext(ctx, "a2a call failed", append(attrs, "err", err.Error())...)
		return
	}
	v.log.DebugContext(ctx, "a2a call", attrs...)
}

var _ a2asrv.RequestHandler = versioned{}

func (v versioned) GetTask(ctx context.Context, r *a2a.GetTaskRequest) (t *a2a.Task, err error) {
	start := time.Now()
	defer func() { v.done(ctx, "GetTask", start, r.ID, ctxOf(t), err) }()
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.GetTask(ctx, r)
}

func ctxOf(t *a2a.Task) string {
	if t == nil {
		return ""
	}
	return t.ContextID
}

func (v versioned) ListTasks(ctx context.Context, r *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.ListTasks(ctx, r)
}

func (v versioned) CancelTask(ctx context.Context, r *a2a.CancelTaskRequest) (t *a2a.Task, err error) {
	start := time.Now()
	defer func() { v.done(ctx, "CancelTask", start, r.ID, ctxOf(t), err) }()
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.CancelTask(ctx, r)
}

func (v versioned) SendMessage(ctx context.Context, r *a2a.SendMessageRequest) (res a2a.SendMessageResult, err error) {
	start := time.Now()
	defer func() {
		var id a2a.TaskID
		var cid string
		switch x := res.(type) {
		case *a2a.Task:
			id, cid = x.ID, x.ContextID
		case *a2a.Message:
			cid = x.ContextID
		}
		if id == "" && r != nil && r.Message != nil {
			id = r.Message.TaskID
		}
		v.done(ctx, "SendMessage", start, id, cid, err)
	}()
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.SendMessage(ctx, r)
}

func refused(err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, err) }
}

func (v versioned) SubscribeToTask(ctx context.Context, r *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	if err := checkVersion(ctx); err != nil {
		return refused(err)
	}
	return v.h.SubscribeToTask(ctx, r)
}

func (v versioned) SendStreamingMessage(ctx context.Context, r *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	if err := checkVersion(ctx); err != nil {
		return refused(err)
	}
	return v.h.SendStreamingMessage(ctx, r)
}

func (v versioned) GetTaskPushConfig(ctx context.Context, r *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.GetTaskPushConfig(ctx, r)
}

func (v versioned) ListTaskPushConfigs(ctx context.Context, r *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.ListTaskPushConfigs(ctx, r)
}

func (v versioned) CreateTaskPushConfig(ctx context.Context, r *a2a.PushConfig) (*a2a.PushConfig, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.CreateTaskPushConfig(ctx, r)
}

func (v versioned) DeleteTaskPushConfig(ctx context.Context, r *a2a.DeleteTaskPushConfigRequest) error {
	if err := checkVersion(ctx); err != nil {
		return err
	}
	return v.h.DeleteTaskPushConfig(ctx, r)
}

func (v versioned) GetExtendedAgentCard(ctx context.Context, r *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return v.h.GetExtendedAgentCard(ctx, r)
}
