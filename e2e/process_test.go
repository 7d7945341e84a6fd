package e2e

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/durable-a2a/orchestrator/embedded"
	"github.com/durable-a2a/orchestrator/stack"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds the product's commands once per test run.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "a2a-bin-*")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir, "./cmd/dev", "./cmd/frontend", "./cmd/worker")
		cmd.Dir = ".."
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = &buildError{err: err, out: out.String()}
		}
	})
	if buildErr != nil {
		t.Fatalf("build commands: %v", buildErr)
	}
	return binDir
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// proc is a running command whose output is shown if the test fails.
type proc struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

func startProc(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(filepath.Join(binaries(t), name), args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{cmd: cmd, out: &out}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, out.String())
		}
	})
	return p
}

// kill ends the process the hard way, as a crash would.
func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitReady polls the Agent Card until the frontend answers.
func waitReady(t *testing.T, baseURL string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(baseURL + "/.well-known/agent-card.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, bounded by the deadline
	}
	t.Fatalf("frontend at %s not ready", baseURL)
}

// TestSeparateProcesses runs the frontend and the worker as their own
// processes against one Temporal server: they share nothing but Temporal.
func TestSeparateProcesses(t *testing.T) {
	srv, err := embedded.Start(embedded.Config{SearchAttributes: stack.SearchAttributes, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	tenv := []string{"TEMPORAL_ADDRESS=" + srv.HostPort(), "TEMPORAL_NAMESPACE=default"}
	addr := freeAddr(t)
	startProc(t, "worker", tenv)
	startProc(t, "frontend", tenv, "-addr", addr)
	base := "http://" + addr
	waitReady(t, base)

	c := newClient(t, base, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: userMsg("across processes", nil)})
	if task.Status.State != a2a.TaskStateCompleted || artifactText(task, "result") == "" {
		t.Fatalf("task = %s with result %q, want COMPLETED with a result", task.Status.State, artifactText(task, "result"))
	}
}

// TestDevStackSurvivesKill9 runs the single command, kills it with SIGKILL
// while a task is working and another waits for input, starts it again on
// the same data directory, and sees both carry on to completion.
func TestDevStackSurvivesKill9(t *testing.T) {
	dataDir := t.TempDir()
	addr := freeAddr(t)
	tport, err := embedded.FreePortBase("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-addr", addr, "-grpc-addr", "", "-data-dir", dataDir, "-temporal-port", strconv.Itoa(tport)}
	dev := startProc(t, "dev", nil, args...)
	base := "http://" + addr
	waitReady(t, base)

	c := newClient(t, base, a2a.TransportProtocolJSONRPC)
	done := send(t, c, &a2a.SendMessageRequest{Message: userMsg("before the crash", nil)})
	waiting := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Inari to Enontekio", nil)})
	expectState(t, waiting, a2a.TaskStateInputRequired, "date")
	working := send(t, c, &a2a.SendMessageRequest{
		Message: userMsg("through the crash", map[string]any{"delay": "3s"}),
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})
	dev.kill()

	t0 := time.Now()
	startProc(t, "dev", nil, args...)
	waitReady(t, base)
	t.Logf("restarted in %v", time.Since(t0))
	c = newClient(t, base, a2a.TransportProtocolJSONRPC)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: done.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || artifactText(got, "result") != artifactText(done, "result") {
		t.Fatalf("finished task after restart: %v %v, want it unchanged", got, err)
	}
	t.Logf("finished task read at %v", time.Since(t0))
	// A blocking resend of the same message waits for the task it made.
	again := send(t, c, &a2a.SendMessageRequest{Message: working.History[0]})
	t.Logf("working task completed at %v", time.Since(t0))
	// The task that was waiting for input still waits, and takes the answer.
	answered := send(t, c, &a2a.SendMessageRequest{Message: reply(waiting, "2027-06-01")})
	expectState(t, answered, a2a.TaskStateCompleted, "")
	if again.ID != working.ID || again.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("working task after restart: %s %s, want %s COMPLETED", again.ID, again.Status.State, working.ID)
	}
}
