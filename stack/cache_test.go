package stack_test

import (
	"context"
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/durable-a2a/orchestrator/internal/testenv"
)

// TestSmallWorkflowCache: with room for only two tasks in the worker's
// memory, waiting tasks are evicted (the worker's memory stays bounded
// however many wait) and still resume correctly, replayed from their
// histories, across rounds of questions.
func TestSmallWorkflowCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := testenv.StartWith(t.TempDir(), testenv.Options{HistoryLimit: testenv.HistoryLimit, Quiet: true, CacheSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	card, err := agentcard.DefaultResolver.Resolve(ctx, env.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	send := func(m *a2a.Message, want a2a.TaskState) *a2a.Task {
		t.Helper()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != want {
			t.Fatalf("got %#v, want a task in %s", res, want)
		}
		return task
	}
	const n = 6
	var tasks []*a2a.Task
	for range n {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("from Inari to Salla"))
		m.Metadata = map[string]any{"skill": "book-flight"}
		tasks = append(tasks, send(m, a2a.TaskStateInputRequired))
	}
	if ev := metric(t, env, "temporal_sticky_cache_total_forced_eviction"); ev < n-2 {
		t.Fatalf("%v tasks evicted from a cache of 2 after %d waiting tasks, want at least %d", ev, n, n-2)
	}
	reply := func(task *a2a.Task, text string, want a2a.TaskState) *a2a.Task {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		m.TaskID, m.ContextID = task.ID, task.ContextID
		return send(m, want)
	}
	for _, task := range tasks {
		reply(task, "not a date yet", a2a.TaskStateInputRequired)
	}
	// The answered tasks were not in memory: they were replayed.
	if miss := metric(t, env, "temporal_sticky_cache_miss"); miss < n-2 {
		t.Errorf("%v cache misses answering %d evicted tasks, want at least %d", miss, n, n-2)
	}
	for _, task := range tasks {
		done := reply(task, "2027-09-09", a2a.TaskStateCompleted)
		if len(done.Artifacts) == 0 {
			t.Errorf("task %s completed without its booking", done.ID)
		}
		// Every message of the three rounds (and each answer) is there.
		users := 0
		for _, m := range done.History {
			if m.Role == a2a.MessageRoleUser {
				users++
			}
		}
		if users != 3 {
			t.Errorf("task %s has %d user messages in its history, want 3", done.ID, users)
		}
	}
}

// metric reads one of the worker's metrics (the sum over its labels;
// counters carry the _total suffix).
func metric(t *testing.T, env *testenv.Env, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	env.Metrics.HTTP().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	sum := 0.0
	for _, m := range regexp.MustCompile(`(?m)^`+name+`(?:_total)?(?:\{[^}]*\})? (\S+)$`).FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum
}
