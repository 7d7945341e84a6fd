// Command bench measures what durability costs, next to baselines in the
// same run: a2a-go's in-memory server and bare Temporal workflows.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/durable-a2a/orchestrator/bench"
)

func main() {
	bench.ServeTemporalIfChild()
	o := bench.Defaults()
	flag.IntVar(&o.Latency, "latency", o.Latency, "sequential tasks per variant")
	flag.IntVar(&o.Throughput, "throughput", o.Throughput, "tasks per variant for throughput")
	flag.IntVar(&o.Clients, "clients", o.Clients, "concurrent clients for throughput")
	flag.IntVar(&o.Resume, "resume", o.Resume, "answers to a waiting task")
	flag.IntVar(&o.Stream, "stream", o.Stream, "streamed rounds")
	flag.IntVar(&o.GraphRuns, "graph", o.GraphRuns, "graph runs per D")
	flag.IntVar(&o.CacheSize, "workflow-cache", 0, "tasks the worker keeps in memory (0: the default, as A2A_WORKFLOW_CACHE)")
	flag.IntVar(&o.Idle, "idle", o.Idle, "tasks parked in INPUT_REQUIRED (0: skip)")
	only := flag.String("only", "", "comma-separated measurements to run (latency,throughput,resume,stream,graph,idle); empty: all")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file (frontend, worker, clients), and the Temporal server's to <file>.temporal")
	flag.Parse()
	if *cpuprofile != "" {
		o.ServerProfile = *cpuprofile + ".temporal"
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *only != "" {
		o.Only = strings.Split(*only, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Printf("# %s, %d CPUs, %s\n", time.Now().UTC().Format(time.DateOnly), runtime.NumCPU(), runtime.Version())
	if _, err := bench.Run(ctx, o, os.Stdout); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
