package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-a2a/orchestrator/config"
	"github.com/durable-a2a/orchestrator/skills"
)

// fuzzHandler is the real HTTP stack over a Temporal client that reaches
// no server: whatever passes validation fails fast, as when Temporal is down.
func fuzzHandler(t testing.TB) http.Handler {
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	log := slog.New(slog.DiscardHandler)
	h := NewHandler(c, "default", skills.New(&config.Config{}), log)
	card := NewCard(CardOptions{Name: "fuzz", Description: "fuzz", Version: "1", BaseURL: "http://127.0.0.1"})
	mux, err := NewHTTPHandler(h, card, nil, time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	return mux
}

// serve runs one request and checks what any request must get: no panic, no
// 5xx, an answer within the request's deadline, and JSON for non-streams.
func serve(t *testing.T, h http.Handler, method, path string, body []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	// A 5xx is right only for what the fuzz setup causes on purpose:
	// Temporal unreachable, or the request's own deadline. Anything else
	// (a panic, an unexpected internal error) fails.
	if rec.Code >= 500 && !strings.Contains(rec.Body.String(), "task engine is unavailable") && rec.Code != http.StatusGatewayTimeout {
		t.Fatalf("%s %s %q: HTTP %d %s", method, path, body, rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), `"code":-32603`) && !strings.Contains(rec.Body.String(), "task engine is unavailable") && !strings.Contains(rec.Body.String(), "deadline") {
		t.Fatalf("%s %s %q: internal error %s", method, path, body, rec.Body.String())
	}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && rec.Body.Len() > 0 {
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %s %q: response is not JSON: %s", method, path, body, rec.Body.String())
		}
	}
}

var jsonrpcSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello durable world"}]}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"slow"}],"metadata":{"delay":"60s","chunks":3}},"configuration":{"returnImmediately":true,"historyLength":0}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"c50186e7-3b98-5622-b69a-9d3b96248a0b","historyLength":1}}`,
	`{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"c50186e7-3b98-5622-b69a-9d3b96248a0b"}}`,
	`{"jsonrpc":"2.0","id":5,"method":"ListTasks","params":{"contextId":"c","status":"TASK_STATE_WORKING","pageSize":10}}`,
	`{"jsonrpc":"2.0","id":6,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-3","role":"ROLE_USER","parts":[{"data":{"plan":{"nodes":[{"id":"a","agent":"x","message":"go"}]}}}]}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":"c50186e7-3b98-5622-b69a-9d3b96248a0b"}}`,
	`{"jsonrpc":"2.0","id":8,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","url":"http://10.0.0.1/hook"}}`,
	`{"jsonrpc":"2.0","id":9,"method":"GetExtendedAgentCard","params":{}}`,
	`{"jsonrpc":"2.0","id":10,"method":"message/send","params":{}}`,
	`{"jsonrpc":"2.0","id":`, `[]`, `null`, `{"jsonrpc":"1.0"}`,
}

func FuzzJSONRPC(f *testing.F) {
	for _, s := range jsonrpcSeeds {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		serve(t, h, http.MethodPost, JSONRPCPath, body)
	})
}

func FuzzREST(f *testing.F) {
	seeds := []struct{ method, path, body string }{
		{"POST", "/rest/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
		{"POST", "/rest/acme/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"text/plain"}]}}`},
		{"GET", "/rest/tasks/c50186e7-3b98-5622-b69a-9d3b96248a0b?historyLength=2", ``},
		{"GET", "/rest/tasks?contextId=x&pageSize=200&pageToken=zzz", ``},
		{"POST", "/rest/tasks/abc:cancel", `{}`},
		{"POST", "/rest/tasks/abc:subscribe", ``},
		{"POST", "/rest/tasks/abc/pushNotificationConfigs", `{"url":"http://169.254.169.254/"}`},
		{"DELETE", "/rest/tasks/abc/pushNotificationConfigs/x", ``},
		{"GET", "/rest/extendedAgentCard", ``},
		{"POST", "/webhooks/tasks/abc", `{}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, []byte(s.body))
	}
	h := fuzzHandler(f)
	methods := map[string]bool{"GET": true, "POST": true, "DELETE": true, "PUT": true}
	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		if _, err := url.ParseRequestURI(path); err != nil || !methods[method] || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t\r\n#") {
			return // not an HTTP request line a client can send
		}
		serve(t, h, method, path, body)
	})
}

// /readyz is 503 while Temporal cannot be reached; /healthz stays 200.
func TestReadiness(t *testing.T) {
	h := fuzzHandler(t)
	for path, want := range map[string]int{"/readyz": http.StatusServiceUnavailable, "/healthz": http.StatusOK} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("%s: HTTP %d, want %d", path, rec.Code, want)
		}
	}
}
