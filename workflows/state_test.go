package workflows

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

var allStates = []a2a.TaskState{
	a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
	a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected,
}

func TestTerminalStatesAreFinal(t *testing.T) {
	for _, from := range allStates {
		if !from.Terminal() {
			continue
		}
		for _, to := range allStates {
			if CanTransition(from, to) {
				t.Errorf("%s -> %s is allowed; a terminal task must never change", from, to)
			}
		}
	}
}

func TestTransitions(t *testing.T) {
	allowed := [][2]a2a.TaskState{
		{a2a.TaskStateSubmitted, a2a.TaskStateWorking},
		{a2a.TaskStateWorking, a2a.TaskStateInputRequired},
		{a2a.TaskStateInputRequired, a2a.TaskStateWorking},
		{a2a.TaskStateAuthRequired, a2a.TaskStateCanceled},
		{a2a.TaskStateWorking, a2a.TaskStateCompleted},
	}
	for _, tr := range allowed {
		if !CanTransition(tr[0], tr[1]) {
			t.Errorf("%s -> %s refused", tr[0], tr[1])
		}
	}
	refused := [][2]a2a.TaskState{
		{a2a.TaskStateInputRequired, a2a.TaskStateCompleted}, // an answer must come first
		{a2a.TaskStateInputRequired, a2a.TaskStateInputRequired},
		{a2a.TaskStateSubmitted, a2a.TaskStateSubmitted},
	}
	for _, tr := range refused {
		if CanTransition(tr[0], tr[1]) {
			t.Errorf("%s -> %s allowed", tr[0], tr[1])
		}
	}
}

func TestEventLogKeepsItsTail(t *testing.T) {
	st := newTaskState(TaskInput{TaskID: "t", ContextID: "c"})
	for range maxEvents + 10 {
		st.log(&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c"})
	}
	if len(st.Events) != maxEvents || st.Events[0].Seq != 11 || st.lastSeq() != maxEvents+10 {
		t.Fatalf("log holds %d events from %d to %d", len(st.Events), st.Events[0].Seq, st.lastSeq())
	}
	v := st.eventsAfter(5, 100)
	if v.FirstSeq != 11 || v.Events[0].Seq != 11 {
		t.Errorf("a cursor before the tail: firstSeq %d, first event %d", v.FirstSeq, v.Events[0].Seq)
	}
	if v := st.eventsAfter(st.lastSeq(), 100); len(v.Events) != 0 {
		t.Errorf("%d events after the newest", len(v.Events))
	}
}
