package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-a2a/orchestrator/workflows"
)

// ListTasks pages are read from Temporal's visibility store: every task
// workflow carries its context, owner, tenant, state and status time as
// search attributes. Context, owner and tenant are stored hashed, so that
// any string a client sends is safe in a visibility query.

const (
	defaultPageSize = 50
	maxPageSize     = 100
	// maxListed bounds how many matches one ListTasks call sorts.
	maxListed = 10000
)

var saKey = workflows.SAKey

type pageToken struct {
	Filter string `json:"f"`
	Time   int64  `json:"t"`
	ID     string `json:"i"`
}

type listed struct {
	id   string
	time time.Time
}

// ListTasks lists the caller's tasks, newest status first.
func (h *Handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	pageSize := req.PageSize
	if pageSize == 0 {
		pageSize = defaultPageSize
	}
	if pageSize < 1 || pageSize > maxPageSize {
		return nil, invalid("pageSize must be between 1 and %d", maxPageSize)
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, invalid("historyLength must not be negative")
	}
	p := h.principal(ctx)
	p.Tenant = tenantOf(ctx, req.Tenant)

	query := []string{
		fmt.Sprintf("WorkflowType = '%s'", workflows.TaskWorkflowName),
		"ExecutionStatus != 'ContinuedAsNew'",
		fmt.Sprintf("%s = '%s'", workflows.SAOwner.GetName(), saKey("owner", p.Owner)),
		fmt.Sprintf("%s = '%s'", workflows.SATenant.GetName(), saKey("tenant", p.Tenant)),
	}
	if req.ContextID != "" {
		query = append(query, fmt.Sprintf("%s = '%s'", workflows.SAContextID.GetName(), saKey("context", req.ContextID)))
	}
	if req.Status != a2a.TaskStateUnspecified {
		if !knownState(req.Status) {
			return nil, invalid("status: unknown task state %q", req.Status)
		}
		query = append(query, fmt.Sprintf("%s = '%s'", workflows.SAState.GetName(), req.Status))
	}
	if req.StatusTimestampAfter != nil {
		query = append(query, fmt.Sprintf("%s >= '%s'", workflows.SAStatusTime.GetName(), req.StatusTimestampAfter.UTC().Format(time.RFC3339Nano)))
	}
	filter := saKey("filter", strings.Join(query, " AND "))

	var after *pageToken
	if req.PageToken != "" {
		t, err := decodeToken(req.PageToken)
		if err != nil || t.Filter != filter {
			return nil, invalid("pageToken is not one this server gave for this filter")
		}
		after = t
	}

	all, err := h.listAll(ctx, strings.Join(query, " AND "))
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].time.Equal(all[j].time) {
			return all[i].time.After(all[j].time)
		}
		return all[i].id < all[j].id
	})
	start := 0
	if after != nil {
		at := time.Unix(0, after.Time)
		start = sort.Search(len(all), func(i int) bool {
			return all[i].time.Before(at) || all[i].time.Equal(at) && all[i].id > after.ID
		})
	}
	end := min(start+pageSize, len(all))
	resp := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, TotalSize: len(all), PageSize: pageSize}
	for _, it := range all[start:end] {
		view, err := h.getTask(ctx, p, a2a.TaskID(it.id))
		if err != nil {
			return nil, err
		}
		task := trimHistory(view.Task, req.HistoryLength)
		if !req.IncludeArtifacts {
			task.Artifacts = nil
		}
		resp.Tasks = append(resp.Tasks, task)
	}
	if end < len(all) {
		last := all[end-1]
		resp.NextPageToken = encodeToken(pageToken{Filter: filter, Time: last.time.UnixNano(), ID: last.id})
	}
	return resp, nil
}

func (h *Handler) listAll(ctx context.Context, query string) ([]listed, error) {
	var out []listed
	var next []byte
	for {
		resp, err := h.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: query, PageSize: 1000, NextPageToken: next,
		})
		if err != nil {
			return nil, h.mapError(ctx, err, "list tasks")
		}
		for _, ex := range resp.GetExecutions() {
			var ts time.Time
			if p, ok := ex.GetSearchAttributes().GetIndexedFields()[workflows.SAStatusTime.GetName()]; ok {
				_ = converter.GetDefaultDataConverter().FromPayload(p, &ts)
			}
			out = append(out, listed{id: ex.GetExecution().GetWorkflowId(), time: ts})
		}
		if len(out) > maxListed {
			return nil, invalid("more than %d tasks match: narrow the filter (contextId, status, statusTimestampAfter)", maxListed)
		}
		next = resp.GetNextPageToken()
		if len(next) == 0 {
			return out, nil
		}
	}
}

func encodeToken(t pageToken) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s string) (*pageToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	var t pageToken
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

func knownState(s a2a.TaskState) bool {
	switch s {
	case a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
		a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected:
		return true
	}
	return false
}

// awaitListed waits, within a bound, until a new task shows in ListTasks:
// Temporal's visibility store is written just after the workflow starts, and
// a client's next ListTasks must see the task it just made.
func (h *Handler) awaitListed(ctx context.Context, id a2a.TaskID) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// The first look comes after the usual visibility lag: each look spends
	// the namespace's visibility rate limit.
	for wait := 5 * time.Millisecond; ; wait = min(wait*3/2, 50*time.Millisecond) {
		select {
		case <-ctx.Done():
			h.log.WarnContext(ctx, "new task not yet visible to ListTasks", "taskId", id)
			return
		case <-time.After(wait):
		}
		resp, err := h.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s'", id),
		})
		if err == nil && resp.GetCount() > 0 {
			return
		}
	}
}
