package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/uuid"

	"github.com/durable-a2a/orchestrator/a2a/server"
)

type withKey struct {
	key  string
	next http.RoundTripper
}

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(server.APIKeyHeader, k.key)
	return k.next.RoundTrip(r)
}

func keyedClient(t *testing.T, base, key string, binding a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	hc := &http.Client{Transport: withKey{key: key, next: http.DefaultTransport}, Timeout: time.Minute}
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOwnersSeeOnlyTheirTasks: with API keys, every task belongs to the
// principal who made it; another principal's task answers exactly as a
// missing one, for every operation, and ListTasks shows only one's own.
func TestOwnersSeeOnlyTheirTasks(t *testing.T) {
	auth := &server.Auth{Keys: []server.APIKey{
		{Key: "alice-key-0123456789", Principal: "alice"},
		{Key: "bob-key-0123456789ab", Principal: "bob"},
	}}
	base, stop, err := env.AddFrontendWithAuth(auth)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	// The card stays public and declares the scheme; calls without a key get 401.
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("public card: %v %v", resp, err)
	}
	resp.Body.Close()
	for _, key := range []string{"", "wrong-key-0123456789"} {
		req, _ := http.NewRequest(http.MethodPost, base+"/jsonrpc", nil)
		if key != "" {
			req.Header.Set(server.APIKeyHeader, key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("key %q: HTTP %d, WWW-Authenticate %q", key, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}

	for _, b := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(b), func(t *testing.T) {
			alice := keyedClient(t, base, "alice-key-0123456789", b)
			bob := keyedClient(t, base, "bob-key-0123456789ab", b)
			ctxID := "owners-" + uuid.NewString()
			m := flightMsg("from Oulu", nil)
			m.ContextID = ctxID
			task := send(t, alice, &a2a.SendMessageRequest{Message: m})
			unknown := a2a.TaskID(uuid.NewString())

			for _, id := range []a2a.TaskID{task.ID, unknown} {
				ctx := ctxT(t)
				if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob GetTask(%s): %v", id, err)
				}
				if _, err := bob.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob CancelTask: %v", err)
				}
				r := reply(&a2a.Task{ID: id, ContextID: ctxID}, "to Kemi")
				if _, err := bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: r}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob SendMessage to the task: %v", err)
				}
				for _, err := range bob.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
					if !errors.Is(err, a2a.ErrTaskNotFound) {
						t.Errorf("bob SubscribeToTask: %v", err)
					}
					break
				}
				if _, err := bob.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob ListTaskPushConfigs: %v", err)
				}
				if _, err := bob.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: id, URL: "http://127.0.0.1:9/hook"}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob CreateTaskPushConfig: %v", err)
				}
				ref := planMsg(nodes(map[string]any{"id": "x", "agent": "spa", "message": "go"}))
				ref.ReferenceTasks = []a2a.TaskID{id}
				if _, err := bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: ref}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob referenceTaskIds: %v", err)
				}
			}
			list, err := bob.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: ctxID})
			if err != nil || list.TotalSize != 0 {
				t.Errorf("bob lists %d of alice's tasks (%v)", list.TotalSize, err)
			}
			list, err = alice.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: ctxID})
			if err != nil || list.TotalSize != 1 {
				t.Errorf("alice lists %d tasks (%v)", list.TotalSize, err)
			}
			// Alice's task is untouched by all of that, and hers to finish.
			done := send(t, alice, &a2a.SendMessageRequest{Message: reply(task, "to Kemi on 2027-04-04")})
			expectState(t, done, a2a.TaskStateCompleted, "")
		})
	}
}
