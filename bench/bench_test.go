package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	ServeTemporalIfChild() // the benchmark's Temporal process is this binary
	os.Exit(m.Run())
}

// TestSmoke runs every measurement with tiny counts, so that the harness
// keeps working; it asserts that each produced a row, not how fast it was.
func TestSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rows, err := Run(ctx, Options{Latency: 3, Throughput: 8, Clients: 4, Resume: 3, Stream: 3, GraphRuns: 1, Idle: 5}, &out)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	for _, want := range []string{"task latency p50 vs bare", "throughput", "CPU per task", "resume", "stream latency p50", "trip graph wall", "park 5 tasks", "RSS"} {
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r.Metric, want)
		}
		if !found {
			t.Errorf("no %q row in:\n%s", want, out.String())
		}
	}
}
