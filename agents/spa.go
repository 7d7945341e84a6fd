// Package agents runs the trip's downstream agents for the single command
// and the tests. The flight, hotel and snowmobile agents are A2A servers of
// this project (durable tasks on Temporal, one skill each); the spa agent is
// built on a2a-go's stock in-memory request handler, to prove the
// orchestrator works with agents it did not make.
package agents

import (
	"context"
	"fmt"
	"iter"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Spa is the spa agent's executor: each task takes Delay, then completes
// with a booking. It counts the messages it gets by messageId.
type Spa struct {
	Delay time.Duration

	mu       sync.Mutex
	received map[string]int
}

var _ a2asrv.AgentExecutor = (*Spa)(nil)

// Received is how many times a message with this ID arrived.
func (s *Spa) Received(messageID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received[messageID]
}

// Total is how many messages arrived.
func (s *Spa) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.received {
		n += c
	}
	return n
}

// Execute books a spa visit.
func (s *Spa) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	s.mu.Lock()
	if s.received == nil {
		s.received = map[string]int{}
	}
	s.received[ec.Message.ID]++
	s.mu.Unlock()
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		select {
		case <-ctx.Done():
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
			return
		case <-time.After(s.Delay):
		}
		art := a2a.NewArtifactEvent(ec, a2a.NewTextPart("Spa visit booked: sauna and massage, the evening after arrival."))
		art.Artifact.Name = "spa"
		if !yield(art, nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

// Cancel stops a spa booking.
func (s *Spa) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// ServeSpa serves the spa agent on ln until ctx ends.
func ServeSpa(ctx context.Context, ln net.Listener, spa *Spa) error {
	base := "http://" + ln.Addr().String()
	card := &a2a.AgentCard{
		Name:        "Spa agent",
		Description: "Books spa visits (a2a-go stock request handler, in memory).",
		Version:     "0.1.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(base+"/jsonrpc", a2a.TransportProtocolJSONRPC),
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{
			ID: "book-spa", Name: "Book a spa visit", Description: "Books a spa visit.", Tags: []string{"travel"},
		}},
	}
	h := a2asrv.NewHandler(spa, a2asrv.WithCapabilityChecks(&card.Capabilities))
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return fmt.Errorf("spa agent: %w", err)
	}
	return nil
}
