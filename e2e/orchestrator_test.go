package e2e

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durable-a2a/orchestrator/workflows"
)

func tripMsg(text string) *a2a.Message {
	m := userMsg(text, map[string]any{"skill": "trip"})
	m.ContextID = "trip-" + uuid.NewString()
	return m
}

func planMsg(planJSON map[string]any) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("run this plan"), a2a.NewDataPart(map[string]any{"plan": planJSON}))
	m.ContextID = "plan-" + uuid.NewString()
	return m
}

func nodes(ns ...map[string]any) map[string]any {
	list := make([]any, len(ns))
	for i, n := range ns {
		list[i] = n
	}
	return map[string]any{"nodes": list}
}

func summaryRows(t *testing.T, task *a2a.Task) map[string]map[string]any {
	t.Helper()
	for _, a := range task.Artifacts {
		if a.Name != "plan-summary" {
			continue
		}
		for _, p := range a.Parts {
			if d, ok := p.Content.(a2a.Data); ok {
				rows := map[string]map[string]any{}
				for _, r := range d.Value.(map[string]any)["nodes"].([]any) {
					row := r.(map[string]any)
					rows[row["node"].(string)] = row
				}
				return rows
			}
		}
	}
	t.Fatalf("no plan-summary artifact in %v", task.Artifacts)
	return nil
}

// TestTripPlaybook runs the shipped trip: the flight agent asks for what
// it lacks, the question travels up to the trip task, one answer is sent to
// the trip task and one to the flight node task, and the graph goes on:
// hotel and snowmobile at the same time, the spa after the hotel.
func TestTripPlaybook(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	spaBefore := env.Trip.SpaExec.Total()
	m := tripMsg("a trip to Rovaniemi")
	trip := send(t, c, &a2a.SendMessageRequest{Message: m})
	expectState(t, trip, a2a.TaskStateInputRequired, "from")
	if !strings.Contains(question(trip), "[flight via flight]") {
		t.Errorf("the question does not say which node asks: %q", question(trip))
	}

	// The graph's tasks are listed in the request's context while it runs.
	list, err := c.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: m.ContextID})
	if err != nil {
		t.Fatal(err)
	}
	if list.TotalSize != 2 {
		t.Fatalf("%d tasks in the context while the flight asks, want the trip and its flight node", list.TotalSize)
	}
	var flightNode *a2a.Task
	for _, lt := range list.Tasks {
		if lt.ID != trip.ID {
			flightNode = lt
		}
	}
	expectState(t, flightNode, a2a.TaskStateInputRequired, "from")

	// Answer through the trip task: forwarded to the flight agent.
	trip = send(t, c, &a2a.SendMessageRequest{Message: reply(trip, "Helsinki")})
	expectState(t, trip, a2a.TaskStateInputRequired, "date")
	// Answer the flight node task directly this time.
	done := send(t, c, &a2a.SendMessageRequest{Message: reply(flightNode, "2026-12-20")})
	expectState(t, done, a2a.TaskStateCompleted, "")

	final := waitTask(t, c, trip.ID, a2a.TaskStateCompleted)
	rows := summaryRows(t, final)
	for _, n := range []string{"flight", "hotel", "snowmobile", "spa"} {
		if rows[n]["state"] != string(a2a.TaskStateCompleted) || rows[n]["result"] == nil || rows[n]["downstreamTaskId"] == nil {
			t.Errorf("node %s: %v", n, rows[n])
		}
	}
	if !strings.Contains(rows["hotel"]["result"].(string), "Rovaniemi") {
		t.Errorf("the hotel did not get the flight's destination: %v", rows["hotel"]["result"])
	}

	// Follow-up tasks in the context, each naming the tasks it builds on.
	list, err = c.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: m.ContextID, HistoryLength: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if list.TotalSize != 5 {
		t.Fatalf("%d tasks in the context, want 5", list.TotalSize)
	}
	taskOf := map[string]a2a.TaskID{}
	refsOf := map[string][]a2a.TaskID{}
	for _, lt := range list.Tasks {
		if lt.ID == trip.ID {
			continue
		}
		node, _ := lt.History[0].Metadata["node"].(string)
		taskOf[node] = lt.ID
		refsOf[node] = lt.History[0].ReferenceTasks
		if lt.Status.State != a2a.TaskStateCompleted {
			t.Errorf("node %s is %s", node, lt.Status.State)
		}
	}
	want := map[string][]string{"flight": nil, "hotel": {"flight"}, "snowmobile": {"flight"}, "spa": {"hotel"}}
	for n, deps := range want {
		var wantRefs []a2a.TaskID
		for _, d := range deps {
			wantRefs = append(wantRefs, taskOf[d])
		}
		if len(refsOf[n]) != len(wantRefs) || (len(wantRefs) > 0 && refsOf[n][0] != wantRefs[0]) {
			t.Errorf("node %s references %v, want %v", n, refsOf[n], wantRefs)
		}
	}

	// Hotel and snowmobile ran at the same time.
	var hotel, snow *struct{ s, e int64 }
	for _, sp := range env.Acts.Bookings.Spans() {
		v := &struct{ s, e int64 }{sp.Start.UnixNano(), sp.End.UnixNano()}
		switch sp.Kind {
		case "hotel":
			hotel = v
		case "snowmobile":
			snow = v
		}
	}
	if hotel == nil || snow == nil || hotel.s >= snow.e || snow.s >= hotel.e {
		t.Errorf("hotel and snowmobile did not overlap: %v %v", hotel, snow)
	}
	if n := env.Trip.SpaExec.Total() - spaBefore; n != 1 {
		t.Errorf("the spa agent got %d messages, want 1", n)
	}

	// A follow-up in the same context builds on the hotel booking: a new
	// task referencing it, whose refined artifact keeps the name "hotel"
	// with a new artifactId.
	follow := planMsg(nodes(map[string]any{"id": "upgrade", "agent": "hotel", "message": "upgrade the hotel booking to a suite"}))
	follow.ContextID = m.ContextID
	follow.ReferenceTasks = []a2a.TaskID{taskOf["hotel"]}
	up := send(t, c, &a2a.SendMessageRequest{Message: follow})
	expectState(t, up, a2a.TaskStateCompleted, "")
	if up.ID == trip.ID {
		t.Fatal("the follow-up reused the finished task")
	}
	list, err = c.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: m.ContextID, HistoryLength: ptr(1), IncludeArtifacts: true})
	if err != nil || list.TotalSize != 7 {
		t.Fatalf("%d tasks in the context after the follow-up, want 7 (%v)", list.TotalSize, err)
	}
	hotelTask, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: taskOf["hotel"]})
	if err != nil {
		t.Fatal(err)
	}
	var upgradeNode *a2a.Task
	for _, lt := range list.Tasks {
		full, _ := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: lt.ID})
		if n, _ := full.History[0].Metadata["node"].(string); n == "upgrade" {
			upgradeNode = full
		}
	}
	if upgradeNode == nil {
		t.Fatal("no node task for the follow-up")
	}
	if refs := upgradeNode.History[0].ReferenceTasks; len(refs) != 1 || refs[0] != taskOf["hotel"] {
		t.Errorf("the follow-up node references %v, want the hotel task", refs)
	}
	if len(upgradeNode.Artifacts) == 0 || upgradeNode.Artifacts[0].Name != "hotel" || upgradeNode.Artifacts[0].ID == hotelTask.Artifacts[0].ID {
		t.Errorf("refined artifact: %+v, earlier %+v", upgradeNode.Artifacts, hotelTask.Artifacts)
	}
	if !strings.Contains(artifactText(upgradeNode, "hotel"), "Rovaniemi") {
		t.Errorf("the follow-up did not build on the hotel booking: %q", artifactText(upgradeNode, "hotel"))
	}

	// A reference to a task that is not the caller's is refused as missing.
	bad := planMsg(nodes(map[string]any{"id": "x", "agent": "spa", "message": "go"}))
	bad.ReferenceTasks = []a2a.TaskID{a2a.TaskID(uuid.NewString())}
	if _, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: bad}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("unknown reference: %v, want TaskNotFoundError", err)
	}
}

func ptr(n int) *int { return &n }

// waitTask waits until a task reaches a state, as a subscribed watcher.
func waitTask(t *testing.T, c *a2aclient.Client, id a2a.TaskID, want a2a.TaskState) *a2a.Task {
	t.Helper()
	task, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State == want {
		return task
	}
	for ev, err := range c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: id}) {
		if err != nil {
			break // the task ended between the read and the subscription
		}
		if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State.Terminal() {
			break
		}
	}
	task, err = c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != want {
		t.Fatalf("task %s ended %s (%q), want %s", id, task.Status.State, question(task), want)
	}
	return task
}

func TestBadPlansAreRefusedBeforeAnyCall(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	spaBefore := env.Trip.SpaExec.Total()
	cases := map[string]struct {
		plan map[string]any
		want string
	}{
		"empty":         {nodes(), "no nodes"},
		"unknown agent": {nodes(map[string]any{"id": "a", "agent": "taxi", "message": "go"}), `unknown agent "taxi"`},
		"unknown dep":   {nodes(map[string]any{"id": "a", "agent": "spa", "message": "go", "dependsOn": []any{"zz"}}), `unknown node "zz"`},
		"cycle": {nodes(
			map[string]any{"id": "a", "agent": "spa", "message": "x", "dependsOn": []any{"b"}},
			map[string]any{"id": "b", "agent": "spa", "message": "y", "dependsOn": []any{"a"}},
		), "cycle"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := planMsg(tc.plan)
			_, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: m})
			if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want -32602 saying %q", err, tc.want)
			}
			list, err := c.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: m.ContextID})
			if err != nil || list.TotalSize != 0 {
				t.Fatalf("a refused plan made tasks: %v %v", list, err)
			}
		})
	}
	if env.Trip.SpaExec.Total() != spaBefore {
		t.Error("a refused plan called a downstream agent")
	}
}

// A rejected node fails the nodes that depend on it; an independent branch
// finishes; the parent ends FAILED with the whole picture.
func TestFailedNodeFailsItsDependants(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: planMsg(nodes(
		map[string]any{"id": "hotel", "agent": "hotel", "message": "REJECT: the hotel is full"},
		map[string]any{"id": "snow", "agent": "snowmobile", "message": "a tour"},
		map[string]any{"id": "spa", "agent": "spa", "message": "a spa visit", "dependsOn": []any{"hotel"}},
	))})
	expectState(t, task, a2a.TaskStateFailed, "did not complete")
	rows := summaryRows(t, task)
	if rows["hotel"]["state"] != string(a2a.TaskStateFailed) || !strings.Contains(rows["hotel"]["reason"].(string), "no availability") {
		t.Errorf("hotel: %v", rows["hotel"])
	}
	if rows["snow"]["state"] != string(a2a.TaskStateCompleted) {
		t.Errorf("the independent branch: %v", rows["snow"])
	}
	if rows["spa"]["state"] != string(a2a.TaskStateFailed) || rows["spa"]["taskId"] == nil || !strings.Contains(rows["spa"]["reason"].(string), "not started") {
		t.Errorf("spa: %v", rows["spa"])
	}
}

// Cancelling the parent cancels its running nodes and their downstream
// tasks; nothing new starts after.
func TestCancelParentCancelsTheGraph(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	flightAgent := newClient(t, env.Trip.Flight, a2a.TransportProtocolJSONRPC)
	m := tripMsg("a trip somewhere")
	trip := send(t, c, &a2a.SendMessageRequest{Message: m})
	expectState(t, trip, a2a.TaskStateInputRequired, "from")
	list, err := c.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: m.ContextID})
	if err != nil {
		t.Fatal(err)
	}
	var node *a2a.Task
	for _, lt := range list.Tasks {
		if lt.ID != trip.ID {
			node = lt
		}
	}
	remote, _ := node.Metadata["downstreamTaskId"].(string)
	if remote == "" {
		t.Fatalf("the node does not name its downstream task: %v", node.Metadata)
	}

	canceled, err := c.CancelTask(ctxT(t), &a2a.CancelTaskRequest{ID: trip.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %v", canceled, err)
	}
	node, err = c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: node.ID})
	if err != nil || node.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("node after cancel: %v %v", node.Status.State, err)
	}
	down, err := flightAgent.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: a2a.TaskID(remote)})
	if err != nil || down.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("downstream task after cancel: %v %v", down.Status.State, err)
	}
	list, err = c.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: m.ContextID})
	if err != nil || list.TotalSize != 2 {
		t.Fatalf("tasks started after the cancel: %d", list.TotalSize)
	}
}

// A node waiting on a long downstream task registers this server's webhook
// with the agent and sleeps until the agent's push wakes it.
func TestLongDownstreamTaskWakesItsNodeByPush(t *testing.T) {
	oldWatch, oldDelay := env.Acts.Downstream.WatchFor, env.Acts.Bookings.Delay
	env.Acts.Downstream.WatchFor, env.Acts.Bookings.Delay = 100*time.Millisecond, 1500*time.Millisecond
	defer func() { env.Acts.Downstream.WatchFor, env.Acts.Bookings.Delay = oldWatch, oldDelay }()

	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	m := planMsg(nodes(map[string]any{"id": "slow", "agent": "hotel", "message": "a slow hotel booking"}))
	task := send(t, c, &a2a.SendMessageRequest{Message: m})
	expectState(t, task, a2a.TaskStateCompleted, "")
	row := summaryRows(t, task)["slow"]
	nodeID := row["taskId"].(string)

	wakes := 0
	it := env.Client.GetWorkflowHistory(ctxT(t), nodeID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil && a.GetAcceptedRequest().GetInput().GetName() == workflows.UpdateWake {
			wakes++
		}
	}
	if wakes == 0 {
		t.Fatal("the node was not woken by a push from the downstream agent")
	}

	// The webhook refuses a wrong token, exactly as an unknown task.
	for _, id := range []string{nodeID, uuid.NewString()} {
		req, _ := http.NewRequest(http.MethodPost, env.BaseURL+"/webhooks/tasks/"+id, strings.NewReader("{}"))
		req.Header.Set("X-A2A-Notification-Token", "forged")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("forged webhook call: HTTP %d, want 401", resp.StatusCode)
		}
	}
}

// An unreachable agent is retried with backoff, then its node fails with a
// clear reason (the test worker tries 3 times).
func TestUnreachableAgentFailsItsNode(t *testing.T) {
	c := newClient(t, env.BaseURL, a2a.TransportProtocolJSONRPC)
	task := send(t, c, &a2a.SendMessageRequest{Message: planMsg(nodes(
		map[string]any{"id": "lost", "agent": "ghost", "message": "anyone there?"},
		map[string]any{"id": "fine", "agent": "snowmobile", "message": "a tour"},
	))})
	expectState(t, task, a2a.TaskStateFailed, "did not complete")
	rows := summaryRows(t, task)
	if rows["lost"]["state"] != string(a2a.TaskStateFailed) || !strings.Contains(rows["lost"]["reason"].(string), "ghost") {
		t.Errorf("lost: %v", rows["lost"])
	}
	if rows["fine"]["state"] != string(a2a.TaskStateCompleted) {
		t.Errorf("fine: %v", rows["fine"])
	}
}
