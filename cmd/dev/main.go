// Command dev runs the whole product in one process: an embedded Temporal
// server keeping its data on disk, a worker and the A2A frontend.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/durable-a2a/orchestrator/embedded"
	"github.com/durable-a2a/orchestrator/stack"
)

func main() {
	var fl stack.FrontendFlags
	flag.StringVar(&fl.Addr, "addr", "127.0.0.1:8080", "A2A HTTP listen address (JSON-RPC, HTTP+JSON, Agent Card)")
	flag.StringVar(&fl.GRPCAddr, "grpc-addr", "127.0.0.1:8081", "A2A gRPC listen address (empty: no gRPC)")
	flag.StringVar(&fl.PublicURL, "public-url", "", "base URL written in the Agent Card (default http://<addr>)")
	flag.BoolVar(&fl.Insecure, "insecure", false, "serve on a non-loopback address without authentication")
	dataDir := flag.String("data-dir", "./a2a-data", "directory of the embedded Temporal server's SQLite file")
	temporalPort := flag.Int("temporal-port", 7233, "port of the embedded Temporal server (0: any free port)")
	flag.Parse()

	log := stack.Logger()
	if err := run(*dataDir, *temporalPort, fl); err != nil {
		log.Error("dev stack failed", "err", err)
		os.Exit(1)
	}
}

func run(dataDir string, temporalPort int, fl stack.FrontendFlags) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := stack.Logger()

	srv, err := embedded.Start(embedded.Config{
		DataDir: dataDir, FrontendPort: temporalPort, Namespace: "default", SearchAttributes: stack.SearchAttributes,
	})
	if err != nil {
		return fmt.Errorf("embedded Temporal: %w", err)
	}
	defer func() { _ = srv.Stop() }()

	c, _, err := stack.Dial(ctx, srv.HostPort(), log)
	if err != nil {
		return err
	}
	defer c.Close()

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return stack.RunWorker(ctx, c, "default") })
	g.Go(func() error {
		return stack.RunFrontend(ctx, c, "default", fl, log, func(cardURL string) {
			fmt.Printf("Temporal:   %s (namespace default, data in %s)\n", srv.HostPort(), dataDir)
			fmt.Printf("Agent Card: %s\n", cardURL)
			if fl.Addr != "" {
				fmt.Printf("Ready. No authentication: serving on loopback only. Ctrl-C to stop.\n")
			}
		})
	})
	return g.Wait()
}
