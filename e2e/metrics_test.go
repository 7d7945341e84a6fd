package e2e

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestMetrics: tasks by state, transitions, downstream calls, push
// deliveries, open streams, and the Temporal SDK's own metrics.
func TestMetrics(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	rcv := newReceiver(t, 0)
	send(t, c, &a2a.SendMessageRequest{Message: userMsg("measured", nil), Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: rcv.url()}}})
	trip := send(t, c, &a2a.SendMessageRequest{Message: planMsg(nodes(map[string]any{"id": "s", "agent": "spa", "message": "go"}))})
	expectState(t, trip, a2a.TaskStateCompleted, "")
	waitFor(t, func() bool { return len(rcv.deliveries()) >= 4 }, "the push deliveries")

	scrape := func() string {
		rec := httptest.NewRecorder()
		env.Metrics.HTTP().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	out := scrape()
	for _, want := range []string{
		`a2a_tasks{state="TASK_STATE_COMPLETED"}`,
		`a2a_task_transitions_total{`,
		`state="TASK_STATE_COMPLETED"`,
		`a2a_downstream_call_latency_seconds_count{`,
		`agent="spa"`,
		`a2a_push_deliveries_total{`,
		`a2a_stream_clients`,
		`temporal_workflow_completed_total`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
