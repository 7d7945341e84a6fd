package embedded_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"

	"github.com/durable-a2a/orchestrator/embedded"
)

// TestStorage: a new data directory gets the tasks' file and a visibility
// file of its own, both in WAL mode; a directory made with one file keeps
// using it; either way what was started is there, and listed, after a
// restart.
func TestStorage(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := map[bool]string{false: "new directory", true: "one-file directory"}[legacy]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if legacy {
				if err := sqlite.SetupSchema(&config.SQL{
					PluginName: sqliteplugin.PluginName, DatabaseName: filepath.Join(dir, "temporal.db"),
					ConnectAttributes: map[string]string{"mode": "rwc"},
				}); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			srv, c := start(t, dir)
			if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept", TaskQueue: "nobody"}, "Waits"); err != nil {
				t.Fatal(err)
			}
			awaitListed(ctx, t, c, "kept")
			exists := func(name string) bool {
				_, err := os.Stat(filepath.Join(dir, name))
				return !errors.Is(err, os.ErrNotExist)
			}
			if !exists("temporal.db-wal") {
				t.Error("temporal.db is not in WAL mode")
			}
			if legacy {
				if exists("visibility.db") {
					t.Error("a one-file directory got a visibility file: its tasks would vanish from ListTasks")
				}
			} else if !exists("visibility.db-wal") {
				t.Error("no visibility.db in WAL mode")
			}
			c.Close()
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}

			srv, c = start(t, dir)
			defer func() { c.Close(); _ = srv.Stop() }()
			if _, err := c.DescribeWorkflowExecution(ctx, "kept", ""); err != nil {
				t.Fatalf("the workflow is gone after a restart: %v", err)
			}
			awaitListed(ctx, t, c, "kept")
		})
	}
}

func start(t *testing.T, dir string) (*embedded.Server, client.Client) {
	t.Helper()
	srv, err := embedded.Start(embedded.Config{DataDir: dir, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: srv.HostPort(), Logger: nopLogger{}})
	if err != nil {
		_ = srv.Stop()
		t.Fatal(err)
	}
	return srv, c
}

// awaitListed waits until visibility lists the workflow (it is written a
// moment after the start).
func awaitListed(ctx context.Context, t *testing.T, c client.Client, id string) {
	t.Helper()
	for {
		resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: "WorkflowId = '" + id + "'"})
		if err == nil && resp.GetCount() == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("workflow %s never listed: %v", id, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type nopLogger struct{}

func (nopLogger) Debug(string, ...any) {}
func (nopLogger) Info(string, ...any)  {}
func (nopLogger) Warn(string, ...any)  {}
func (nopLogger) Error(string, ...any) {}
