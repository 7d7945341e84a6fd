// Package e2e tests the product as a client sees it: real A2A clients over
// HTTP and gRPC on 127.0.0.1, against the frontend, a worker and a real
// embedded Temporal server keeping its data in a file.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/durable-a2a/orchestrator/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "a2a-e2e-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env, err = testenv.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start test stack:", err)
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// bindings are the transports every protocol test runs over.
var bindings = []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC}

// newClient resolves the Agent Card and connects over the given binding.
func newClient(t testing.TB, baseURL string, binding a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatalf("client for %s: %v", binding, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func userMsg(text string, meta map[string]any) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.Metadata = meta
	return m
}

// send makes a SendMessage call that must answer with a Task.
func send(t *testing.T, c *a2aclient.Client, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctxT(t), req)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want a Task", res)
	}
	return task
}

func artifactText(task *a2a.Task, name string) string {
	for _, a := range task.Artifacts {
		if a.Name == name {
			for _, p := range a.Parts {
				if s, ok := p.Content.(a2a.Text); ok {
					return string(s)
				}
			}
		}
	}
	return ""
}
