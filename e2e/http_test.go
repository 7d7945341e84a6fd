package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends a raw body, as a client with a broken serializer would.
func post(t *testing.T, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(env.BaseURL+path, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST %s: response is not JSON (%v): %s", path, err, raw)
	}
	return resp.StatusCode, out
}

func TestJSONRPCErrors(t *testing.T) {
	cases := []struct {
		name, body string
		code       float64
		mention    string
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, -32700, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, -32601, ""},
		{"missing message", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, -32602, "message"},
		{"missing messageId", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}}`, -32602, "messageId"},
		{"no parts", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"a","role":"ROLE_USER","parts":[]}}}`, -32602, "parts"},
		{"wrong type", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":"hello"}}`, -32602, "message"},
		{"bad delay", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"b","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"delay":"soon"}}}}`, -32602, "delay"},
		{"unknown skill", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"c","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"skill":"nope"}}}}`, -32602, "skill"},
		{"negative historyLength", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":-1}}`, -32602, "historyLength"},
		{"GetTask without id", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, -32602, "id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := post(t, "/jsonrpc", "application/json", tc.body)
			if status != http.StatusOK {
				t.Errorf("HTTP status %d, want 200 with a JSON-RPC error", status)
			}
			e, ok := out["error"].(map[string]any)
			if !ok {
				t.Fatalf("no error in %v", out)
			}
			if e["code"] != tc.code {
				t.Errorf("code = %v, want %v (%v)", e["code"], tc.code, e["message"])
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.mention) {
				t.Errorf("message %q does not name %q", msg, tc.mention)
			}
		})
	}
}

func TestRESTErrors(t *testing.T) {
	status, out := post(t, "/rest/message:send", "application/a2a+json", `{"message":`)
	if status != http.StatusBadRequest {
		t.Errorf("malformed body: HTTP %d, want 400 (%v)", status, out)
	}
	status, out = post(t, "/rest/message:send", "application/a2a+json", `{"message":{"messageId":"r","role":"ROLE_USER","parts":[]}}`)
	if status != http.StatusBadRequest || !strings.Contains(out["error"].(map[string]any)["message"].(string), "parts") {
		t.Errorf("no parts: HTTP %d %v, want 400 naming parts", status, out)
	}
	resp, err := http.Get(env.BaseURL + "/rest/tasks/0b9a5a9e-51b5-4b8e-9a52-2b3b1c6f0000")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown task: HTTP %d, want 404", resp.StatusCode)
	}
}

func TestAgentCard(t *testing.T) {
	resp, err := http.Get(env.BaseURL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
		t.Errorf("Cache-Control = %q, want a max-age", cc)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Error("no ETag")
	}
	var card map[string]any
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"name", "description", "version", "supportedInterfaces", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		if _, ok := card[f]; !ok {
			t.Errorf("card lacks %s", f)
		}
	}
	for _, f := range []string{"url", "protocolVersion", "preferredTransport", "additionalInterfaces"} {
		if _, ok := card[f]; ok {
			t.Errorf("card has the v0.3 field %s", f)
		}
	}
	bindings := map[string]bool{}
	for _, i := range card["supportedInterfaces"].([]any) {
		iface := i.(map[string]any)
		if iface["protocolVersion"] != "1.0" {
			t.Errorf("interface %v: protocolVersion %v, want 1.0", iface["protocolBinding"], iface["protocolVersion"])
		}
		bindings[iface["protocolBinding"].(string)] = true
	}
	for _, b := range []string{"JSONRPC", "HTTP+JSON", "GRPC"} {
		if !bindings[b] {
			t.Errorf("card does not declare %s", b)
		}
	}
	// Streaming and push are built; nothing is claimed that is not.
	caps := card["capabilities"].(map[string]any)
	if caps["streaming"] != true || caps["pushNotifications"] != true {
		t.Errorf("capabilities %v: streaming and pushNotifications are built", caps)
	}
	if caps["extendedAgentCard"] == true {
		t.Error("capabilities.extendedAgentCard is claimed")
	}

	req, _ := http.NewRequest(http.MethodGet, env.BaseURL+"/.well-known/agent-card.json", nil)
	req.Header.Set("If-None-Match", etag)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: HTTP %d, want 304", resp.StatusCode)
	}
}

func TestUnbuiltOperationsAreRefused(t *testing.T) {
	status, out := post(t, "/jsonrpc", "application/json",
		`{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"x","url":"http://127.0.0.1:1/hook"}}`)
	if status != http.StatusOK || out["error"].(map[string]any)["code"] != float64(-32001) {
		t.Errorf("push config for an unknown task: HTTP %d %v, want -32001", status, out)
	}
	status, out = post(t, "/jsonrpc", "application/json", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`)
	if status != http.StatusOK || out["error"].(map[string]any)["code"] != float64(-32004) {
		t.Errorf("extended card: HTTP %d %v, want -32004", status, out)
	}
}

func TestReadyWhenTemporalAnswers(t *testing.T) {
	resp, err := http.Get(env.BaseURL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: HTTP %d", resp.StatusCode)
	}
}
