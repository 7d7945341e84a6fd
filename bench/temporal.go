package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/durable-a2a/orchestrator/embedded"
	"github.com/durable-a2a/orchestrator/stack"
)

// The benchmark runs the Temporal server in a process of its own (its own
// binary, started again with this variable naming the data directory), so
// that memory and CPU are reported for the server and for this server's
// frontend and worker apart, as they run in production.
const childEnv = "A2A_BENCH_TEMPORAL_DIR"

const hostPortPrefix = "temporal at "

// profileEnv names the file the Temporal process writes its CPU profile to.
const profileEnv = "A2A_BENCH_TEMPORAL_CPUPROFILE"

// ServeTemporalIfChild serves Temporal and exits when this process is the
// benchmark's Temporal process; otherwise it returns at once. Call it first
// in main (and TestMain).
func ServeTemporalIfChild() {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return
	}
	if path := os.Getenv(profileEnv); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench temporal:", err)
			os.Exit(1)
		}
	}
	srv, err := embedded.Start(embedded.Config{DataDir: dir, SearchAttributes: stack.SearchAttributes, LogLevel: "fatal"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench temporal:", err)
		os.Exit(1)
	}
	fmt.Println(hostPortPrefix + srv.HostPort())
	// Serve until the parent closes stdin (it is done, or it died).
	_, _ = io.Copy(io.Discard, os.Stdin)
	pprof.StopCPUProfile()
	_ = srv.Stop()
	os.Exit(0)
}

// temporalProc is the benchmark's Temporal server process.
type temporalProc struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	exited   chan struct{}
	hostPort string
}

func startTemporal(dir, profile string) (*temporalProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench temporal: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	if profile != "" {
		cmd.Env = append(cmd.Env, profileEnv+"="+profile)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench temporal: %w", err)
	}
	t := &temporalProc{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if hp, ok := strings.CutPrefix(sc.Text(), hostPortPrefix); ok {
				found <- hp
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(t.exited) }()
	select {
	case t.hostPort = <-found:
		return t, nil
	case <-t.exited:
		return nil, errors.New("bench temporal: the server process exited at start")
	case <-time.After(2 * time.Minute):
		t.stop()
		return nil, errors.New("bench temporal: the server did not start within 2 minutes")
	}
}

func (t *temporalProc) stop() {
	_ = t.stdin.Close()
	select {
	case <-t.exited:
	case <-time.After(30 * time.Second):
		_ = t.cmd.Process.Kill()
		<-t.exited
	}
}

// rss is the server process's resident memory.
func (t *temporalProc) rss() uint64 { return rssOf(strconv.Itoa(t.cmd.Process.Pid)) }

// cpu is the CPU time (user+sys) the server process has used.
func (t *temporalProc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces): utime and
	// stime are the 12th and 13th, in clock ticks (100 per second on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// rssOf reads a process's resident memory ("self" for this one).
func rssOf(pid string) uint64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb uint64
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}
