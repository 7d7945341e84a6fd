// Command worker runs the task workflows and their activities against the
// Temporal cluster named by the TEMPORAL_* settings. Run as many as you like.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/durable-a2a/orchestrator/stack"
)

func main() {
	configPath := flag.String("config", "", "configuration file (agents, playbooks); default $A2A_CONFIG")
	flag.Parse()
	log := stack.Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, ns, err := stack.Dial(ctx, "", log)
	if err != nil {
		log.Error("worker failed", "err", err)
		os.Exit(1)
	}
	defer c.Close()
	cfg, err := stack.LoadConfig(*configPath)
	if err != nil {
		log.Error("worker failed", "err", err)
		os.Exit(1)
	}
	fmt.Println("Worker started.")
	if err := stack.RunWorker(ctx, c, ns, cfg, log); err != nil {
		log.Error("worker failed", "err", err)
		os.Exit(1)
	}
}
