package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-a2a/orchestrator/workflows"
)

// Push notification configs live in their task's workflow: they survive
// every crash, go with the task's owner, and end with the task.

const maxPushURL = 2048

// checkPush validates a config and its URL (the SSRF guard: the worker
// checks the address again when it sends).
func (h *Handler) checkPush(ctx context.Context, cfg *a2a.PushConfig, field string) error {
	switch {
	case cfg.URL == "":
		return invalid("%s.url is required", field)
	case len(cfg.URL) > maxPushURL:
		return invalid("%s.url is longer than %d characters", field, maxPushURL)
	case cfg.Auth != nil && cfg.Auth.Scheme == "":
		return invalid("%s.authentication.scheme is required with authentication", field)
	}
	if err := h.Webhooks.Check(ctx, cfg.URL); err != nil {
		return invalid("%s.url: %v", field, err)
	}
	if cfg.ID == "" {
		cfg.ID = uuid.NewString()
	}
	return nil
}

func (h *Handler) inlinePush(ctx context.Context, cfg *a2a.PushConfig) (*a2a.PushConfig, error) {
	if cfg == nil {
		return nil, nil
	}
	c := *cfg
	if err := h.checkPush(ctx, &c, "configuration.taskPushNotificationConfig"); err != nil {
		return nil, err
	}
	return &c, nil
}

// CreateTaskPushConfig adds a webhook to a task.
func (h *Handler) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	if req.TaskID == "" {
		return nil, invalid("taskId is required")
	}
	p := h.principal(ctx)
	p.Tenant = tenantOf(ctx, req.Tenant)
	return h.createPush(ctx, p, req)
}

func (h *Handler) createPush(ctx context.Context, p Principal, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	info, err := h.describe(ctx, p, req.TaskID)
	if err != nil {
		return nil, err
	}
	cfg := *req
	if err := h.checkPush(ctx, &cfg, "config"); err != nil {
		return nil, err
	}
	if !info.running {
		return nil, a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s is in a terminal state: it sends no more notifications", req.TaskID))
	}
	handle, err := h.temporal.UpdateWorkflow(ctx, updateOptions(req.TaskID, workflows.UpdatePushCreate, cfg))
	if err == nil {
		var out a2a.PushConfig
		if err = handle.Get(ctx, &out); err == nil {
			return &out, nil
		}
	}
	if h.closedMeanwhile(ctx, req.TaskID, err) {
		return nil, a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s is in a terminal state: it sends no more notifications", req.TaskID))
	}
	return nil, h.mapError(ctx, err, "create push config")
}

// GetTaskPushConfig returns one of a task's configs.
func (h *Handler) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	cfgs, err := h.pushConfigs(ctx, req.Tenant, req.TaskID)
	if err != nil {
		return nil, err
	}
	for _, c := range cfgs {
		if c.ID == req.ID {
			return c, nil
		}
	}
	return nil, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s has no push config %q", req.TaskID, req.ID))
}

// ListTaskPushConfigs lists a task's configs.
func (h *Handler) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	cfgs, err := h.pushConfigs(ctx, req.Tenant, req.TaskID)
	if err != nil {
		return nil, err
	}
	return &a2a.ListTaskPushConfigResponse{Configs: cfgs}, nil
}

func (h *Handler) pushConfigs(ctx context.Context, tenant string, id a2a.TaskID) ([]*a2a.PushConfig, error) {
	if id == "" {
		return nil, invalid("taskId is required")
	}
	p := h.principal(ctx)
	p.Tenant = tenantOf(ctx, tenant)
	if _, err := h.describe(ctx, p, id); err != nil {
		return nil, err
	}
	v, err := h.temporal.QueryWorkflow(ctx, string(id), "", workflows.QueryPushConfigs)
	if err != nil {
		return nil, h.mapError(ctx, err, "read push configs")
	}
	var cfgs []a2a.PushConfig
	if err := v.Get(&cfgs); err != nil {
		return nil, fmt.Errorf("decode push configs: %w", err)
	}
	out := make([]*a2a.PushConfig, len(cfgs))
	for i := range cfgs {
		out[i] = &cfgs[i]
	}
	return out, nil
}

// DeleteTaskPushConfig removes a config; nothing more is sent to it. A
// repeated delete, or one on a finished task, succeeds.
func (h *Handler) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	if req.TaskID == "" {
		return invalid("taskId is required")
	}
	p := h.principal(ctx)
	p.Tenant = tenantOf(ctx, req.Tenant)
	info, err := h.describe(ctx, p, req.TaskID)
	if err != nil {
		return err
	}
	if !info.running {
		return nil
	}
	handle, err := h.temporal.UpdateWorkflow(ctx, updateOptions(req.TaskID, workflows.UpdatePushDelete, req.ID))
	if err == nil {
		if err = handle.Get(ctx, nil); err == nil {
			return nil
		}
	}
	if h.closedMeanwhile(ctx, req.TaskID, err) {
		return nil
	}
	return h.mapError(ctx, err, "delete push config")
}

// ServeWebhook receives a downstream agent's push notification for a node
// task (POST /webhooks/tasks/{id}) and wakes the node's workflow; the
// node then reads the downstream task itself. The notification token, which
// only that node and the downstream agent know, authenticates the call.
func (h *Handler) ServeWebhook(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	token := r.Header.Get("X-A2A-Notification-Token")
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	if _, err := uuid.Parse(id); err != nil || token == "" {
		http.Error(w, "unknown task or missing token", http.StatusUnauthorized)
		return
	}
	handle, err := h.temporal.UpdateWorkflow(r.Context(), updateOptions(a2a.TaskID(id), workflows.UpdateWake, token))
	if err == nil {
		err = handle.Get(r.Context(), nil)
	}
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &appErr) || isCompleted(err):
		// A wrong token and an unknown task look the same.
		http.Error(w, "unknown task or bad token", http.StatusUnauthorized)
	default:
		h.log.WarnContext(r.Context(), "webhook: could not wake task", "taskId", id, "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable)
	}
}
