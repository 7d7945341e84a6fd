package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// receiver is a webhook on 127.0.0.1 that fails its first deliveries,
// can go down and come back on the same address, and records what arrives.
type receiver struct {
	t        *testing.T
	addr     string
	failLeft int

	mu       sync.Mutex
	srv      *http.Server
	got      []delivery
	attempts int
}

type delivery struct {
	seq   int64
	body  string
	auth  string
	token string
	ctype string
}

func newReceiver(t *testing.T, failFirst int) *receiver {
	r := &receiver{t: t, addr: freeAddr(t), failLeft: failFirst}
	r.up()
	t.Cleanup(r.down)
	return r
}

func (r *receiver) url() string { return "http://" + r.addr + "/hook" }

func (r *receiver) up() {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.attempts++
		if r.failLeft > 0 {
			r.failLeft--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		seq, _ := strconv.ParseInt(req.Header.Get("A2A-Notification-Seq"), 10, 64)
		r.got = append(r.got, delivery{seq: seq, body: string(body), auth: req.Header.Get("Authorization"),
			token: req.Header.Get("X-A2A-Notification-Token"), ctype: req.Header.Get("Content-Type")})
		w.WriteHeader(http.StatusNoContent)
	})}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// states decodes the status updates delivered, in order, without repeats
// (delivery is at least once: a repeat carries the same payload).
func (r *receiver) states(t *testing.T) []string {
	t.Helper()
	var out []string
	bySeq := map[int64]string{}
	for _, d := range r.deliveries() {
		if prev, ok := bySeq[d.seq]; ok {
			if prev != d.body {
				t.Fatalf("event %d was delivered twice with different payloads", d.seq)
			}
			continue
		}
		bySeq[d.seq] = d.body
		var sr map[string]any
		if err := json.Unmarshal([]byte(d.body), &sr); err != nil {
			t.Fatalf("payload is not JSON: %s", d.body)
		}
		switch {
		case sr["statusUpdate"] != nil:
			out = append(out, sr["statusUpdate"].(map[string]any)["status"].(map[string]any)["state"].(string))
		case sr["artifactUpdate"] != nil:
			out = append(out, "artifact")
		default:
			t.Fatalf("payload is not a StreamResponse: %s", d.body)
		}
	}
	return out
}

func TestPushNotificationsAreDeliveredInOrderThroughFailures(t *testing.T) {
	rcv := newReceiver(t, 2) // the first two deliveries fail
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{
		Message: flightMsg("from Pori", nil),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{
			URL: rcv.url(), Token: "tok-123", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret-1"},
		}},
	})
	expectState(t, task, a2a.TaskStateInputRequired, "to")
	waitFor(t, func() bool { return len(rcv.deliveries()) >= 3 }, "the first notifications")

	// The webhook goes down for a while; events keep happening.
	rcv.down()
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "to Oulu")})
	task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "2027-02-02")})
	expectState(t, task, a2a.TaskStateCompleted, "")
	rcv.up()

	want := "TASK_STATE_SUBMITTED TASK_STATE_WORKING TASK_STATE_INPUT_REQUIRED TASK_STATE_WORKING TASK_STATE_INPUT_REQUIRED TASK_STATE_WORKING artifact TASK_STATE_COMPLETED"
	waitFor(t, func() bool { return strings.Join(rcv.states(t), " ") == want }, "every event, in order")
	for _, d := range rcv.deliveries() {
		if d.auth != "Bearer secret-1" || d.token != "tok-123" || d.ctype != "application/a2a+json" {
			t.Fatalf("headers: auth %q token %q content-type %q", d.auth, d.token, d.ctype)
		}
	}
	if rcv.attempts <= len(rcv.deliveries()) {
		t.Errorf("no failed attempt was retried (%d attempts, %d deliveries)", rcv.attempts, len(rcv.deliveries()))
	}
}

func TestPushConfigOperations(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			rcv := newReceiver(t, 0)
			c := newClient(t, env.BaseURL, b)
			task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Vaasa", nil)})
			cfg, err := c.CreateTaskPushConfig(ctxT(t), &a2a.PushConfig{TaskID: task.ID, ID: "mine", URL: rcv.url(), Token: "t"})
			if err != nil || cfg.ID != "mine" {
				t.Fatalf("create: %v %v", cfg, err)
			}
			auto, err := c.CreateTaskPushConfig(ctxT(t), &a2a.PushConfig{TaskID: task.ID, URL: rcv.url()})
			if err != nil || auto.ID == "" {
				t.Fatalf("create without id: %v %v", auto, err)
			}
			got, err := c.GetTaskPushConfig(ctxT(t), &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "mine"})
			if err != nil || got.URL != rcv.url() {
				t.Fatalf("get: %v %v", got, err)
			}
			list, err := c.ListTaskPushConfigs(ctxT(t), &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
			if err != nil || len(list) != 2 {
				t.Fatalf("list: %d %v", len(list), err)
			}
			if _, err := c.GetTaskPushConfig(ctxT(t), &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("unknown config: %v", err)
			}
			if _, err := c.GetTaskPushConfig(ctxT(t), &a2a.GetTaskPushConfigRequest{TaskID: "0b9a5a9e-51b5-4b8e-9a52-2b3b1c6f0000", ID: "mine"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("unknown task: %v", err)
			}
			for range 2 { // a repeated delete succeeds
				if err := c.DeleteTaskPushConfig(ctxT(t), &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "mine"}); err != nil {
					t.Fatalf("delete: %v", err)
				}
			}
			if err := c.DeleteTaskPushConfig(ctxT(t), &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: auto.ID}); err != nil {
				t.Fatal(err)
			}
			before := len(rcv.deliveries())
			task = send(t, c, &a2a.SendMessageRequest{Message: reply(task, "to Kemi on 2027-03-03")})
			expectState(t, task, a2a.TaskStateCompleted, "")
			// Nothing more is sent after delete: the task completed (its
			// workflow waits for pending deliveries before it ends).
			waitTask(t, c, task.ID, a2a.TaskStateCompleted)
			if n := len(rcv.deliveries()); n != before {
				t.Errorf("%d notifications after delete", n-before)
			}
		})
	}
}

func TestWebhookSSRFGuard(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: flightMsg("from Lahti", nil)})
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data", // cloud metadata
		"http://10.0.0.7/hook",                    // private
		"http://192.168.1.1/hook",
		"http://[fe80::1]/hook", // link-local
		"ftp://127.0.0.1/hook",
		"not a url",
	} {
		if _, err := c.CreateTaskPushConfig(ctxT(t), &a2a.PushConfig{TaskID: task.ID, URL: u}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("%s: %v, want InvalidParams", u, err)
		}
		_, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: userMsg("x", nil), Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: u}}})
		if !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("inline %s: %v, want InvalidParams", u, err)
		}
	}
}

// A worker stopped while a delivery is failing picks it up after restart.
func TestPushSurvivesWorkerRestart(t *testing.T) {
	rcv := newReceiver(t, 0)
	rcv.down()
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{
		Message: userMsg("notify me", nil),
		Config:  &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: rcv.url()}},
	})
	expectState(t, task, a2a.TaskStateCompleted, "")
	env.StopWorker()
	rcv.up()
	if err := env.StartWorker(); err != nil {
		t.Fatal(err)
	}
	want := "TASK_STATE_SUBMITTED TASK_STATE_WORKING artifact TASK_STATE_COMPLETED"
	waitFor(t, func() bool { return strings.Join(rcv.states(t), " ") == want }, "every event after the restart")
}
