package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/skills"
	"github.com/durable-a2a/orchestrator/workflows"
)

// TestReplayRecordedHistories replays histories recorded from real runs
// (testdata/histories, made by internal/recordhistories) with the current
// workflow code. A change to workflow code that would break tasks already
// running fails here: such a change needs workflow.GetVersion, and new
// histories recorded next to the old ones.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	cfg := config.Local("http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3", "http://127.0.0.1:4")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			(&workflows.Tasks{Skills: skills.New(cfg).Workflows()}).Register(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join("testdata", "histories", "trip.json")); err != nil {
		t.Error("the orchestrator's history is missing")
	}
}
