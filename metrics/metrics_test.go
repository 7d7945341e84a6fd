package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHandler: the SDK's metrics land under Prometheus names, with the
// handler's tags as labels, one series per tag set.
func TestHandler(t *testing.T) {
	r := New()
	h := r.Handler().WithTags(map[string]string{"task-queue": "q", "workflow.type": "A2ATask"})
	h.Counter("temporal.workflow_completed").Inc(2)
	h.Counter("temporal.workflow_completed").Inc(1)
	h.WithTags(map[string]string{"task-queue": "other"}).Counter("temporal.workflow_completed").Inc(5)
	h.Gauge("temporal.sticky_cache_size").Update(7)
	h.Timer("temporal.request_latency").Record(3 * time.Millisecond)

	rec := httptest.NewRecorder()
	r.HTTP().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	out := string(b)
	for _, want := range []string{
		`temporal_workflow_completed_total{task_queue="q",workflow_type="A2ATask"} 3`,
		`temporal_workflow_completed_total{task_queue="other",workflow_type="A2ATask"} 5`,
		`temporal_sticky_cache_size{task_queue="q",workflow_type="A2ATask"} 7`,
		`temporal_request_latency_seconds_count{task_queue="q",workflow_type="A2ATask"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}

// BenchmarkCounter is the cost of one SDK counter recording through a
// tagged handler (the SDK makes several per workflow task).
func BenchmarkCounter(b *testing.B) {
	h := New().Handler().WithTags(map[string]string{"namespace": "default", "task_queue": "a2a-tasks", "workflow_type": "A2ATask"})
	b.ReportAllocs()
	for b.Loop() {
		h.Counter("temporal_workflow_task_queue_poll_succeed").Inc(1)
	}
}
