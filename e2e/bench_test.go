package e2e

import (
	"sort"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// BenchmarkStreamLatency measures how long a status change takes to reach a
// subscribed client: from the status timestamp the workflow records to the
// moment the SSE event is decoded by an a2a-go client. Each iteration is one
// answer to a task waiting for input, which makes two status changes
// (WORKING, then INPUT_REQUIRED again).
//
//	go test ./e2e -run '^$' -bench StreamLatency -benchtime 200x
func BenchmarkStreamLatency(b *testing.B) {
	c := newClient(b, env.BaseURL, a2a.TransportProtocolJSONRPC)
	watcher := newClient(b, env.BaseURL, a2a.TransportProtocolJSONRPC)
	ctx := b.Context()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: flightMsg("from Savonlinna to Mikkeli", nil)})
	if err != nil {
		b.Fatal(err)
	}
	task := res.(*a2a.Task)

	lat := make(chan time.Duration, 2*b.N+2)
	ready := make(chan struct{})
	go func() {
		first := true
		for ev, err := range watcher.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				return
			}
			now := time.Now()
			if first {
				close(ready)
				first = false
				continue
			}
			if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.Timestamp != nil {
				lat <- now.Sub(*su.Status.Timestamp)
			}
		}
	}()
	<-ready

	b.ResetTimer()
	for range b.N {
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: reply(task, "not a date yet")}); err != nil {
			b.Fatal(err)
		}
	}
	var all []time.Duration
	for len(all) < 2*b.N {
		select {
		case d := <-lat:
			all = append(all, d)
		case <-time.After(30 * time.Second):
			b.Fatalf("received %d of %d events", len(all), 2*b.N)
		}
	}
	b.StopTimer()
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkGraphOverhead runs the trip's shape (a → {b → d, c}) on agents
// that each take D, and reports the wall time of the whole graph over its
// critical path (3·D), and the orchestration overhead per node.
//
//	go test ./e2e -run '^$' -bench GraphOverhead -benchtime 5x
func BenchmarkGraphOverhead(b *testing.B) {
	for _, d := range []time.Duration{50 * time.Millisecond, 500 * time.Millisecond} {
		b.Run(d.String(), func(b *testing.B) {
			old, oldSpa := env.Acts.Bookings.Delay, env.Trip.SpaExec.Delay
			env.Acts.Bookings.Delay, env.Trip.SpaExec.Delay = d, d
			defer func() { env.Acts.Bookings.Delay, env.Trip.SpaExec.Delay = old, oldSpa }()
			c := newClient(b, env.BaseURL, a2a.TransportProtocolJSONRPC)
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				m := planMsg(nodes(
					map[string]any{"id": "a", "agent": "hotel", "message": "first"},
					map[string]any{"id": "b", "agent": "hotel", "message": "second", "dependsOn": []any{"a"}},
					map[string]any{"id": "c", "agent": "snowmobile", "message": "parallel", "dependsOn": []any{"a"}},
					map[string]any{"id": "d", "agent": "spa", "message": "last", "dependsOn": []any{"b"}},
				))
				start := time.Now()
				res, err := c.SendMessage(b.Context(), &a2a.SendMessageRequest{Message: m})
				if err != nil {
					b.Fatal(err)
				}
				if task := res.(*a2a.Task); task.Status.State != a2a.TaskStateCompleted {
					b.Fatalf("graph ended %s", task.Status.State)
				}
				total += time.Since(start)
			}
			b.StopTimer()
			wall := total / time.Duration(b.N)
			b.ReportMetric(float64(wall)/float64(3*d), "wall/critical-path")
			b.ReportMetric(float64(wall-3*d)/float64(time.Millisecond)/4, "overhead-ms/node")
		})
	}
}
