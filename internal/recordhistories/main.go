// Command recordhistories runs representative tasks on a fresh stack and
// writes their workflow histories to a directory, for the replay test that
// keeps later code compatible with tasks already running:
//
//	go run ./internal/recordhistories -out workflows/testdata/histories -suffix -v2
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/durable-a2a/orchestrator/internal/testenv"
)

func main() {
	out := flag.String("out", "workflows/testdata/histories", "directory for the histories")
	suffix := flag.String("suffix", "", "added to each file name (a new code version's histories go next to the old ones, never instead)")
	flag.Parse()
	if err := run(*out, *suffix); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(out, suffix string) error {
	dir, err := os.MkdirTemp("", "record-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env, err := testenv.StartWith(dir, testenv.Options{HistoryLimit: testenv.HistoryLimit, Quiet: true})
	if err != nil {
		return err
	}
	defer env.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, env.BaseURL)
	if err != nil {
		return err
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		return err
	}
	send := func(m *a2a.Message) (*a2a.Task, error) {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
		if err != nil {
			return nil, err
		}
		return res.(*a2a.Task), nil
	}
	msg := func(text string, meta map[string]any) *a2a.Message {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		m.Metadata = meta
		return m
	}
	reply := func(t *a2a.Task, text string) *a2a.Message {
		m := msg(text, nil)
		m.TaskID, m.ContextID = t.ID, t.ContextID
		return m
	}

	tasks := map[string]a2a.TaskID{}
	work, err := send(msg("hello durable world", nil))
	if err != nil {
		return err
	}
	tasks["work"] = work.ID
	stream, err := send(msg("a streamed result", map[string]any{"delay": "200ms", "chunks": 4}))
	if err != nil {
		return err
	}
	tasks["work-chunks"] = stream.ID
	flight, err := send(msg("I need a flight", map[string]any{"skill": "book-flight"}))
	if err != nil {
		return err
	}
	for _, a := range []string{"from Helsinki", "to Oulu", "2027-01-01"} {
		if flight, err = send(reply(flight, a)); err != nil {
			return err
		}
	}
	tasks["flight"] = flight.ID
	trip, err := send(msg("a trip to Rovaniemi", map[string]any{"skill": "trip"}))
	if err != nil {
		return err
	}
	if trip, err = send(reply(trip, "from Helsinki on 2027-02-02")); err != nil {
		return err
	}
	if trip.Status.State != a2a.TaskStateCompleted {
		return fmt.Errorf("trip ended %s", trip.Status.State)
	}
	tasks["trip"] = trip.ID
	for _, a := range trip.Artifacts {
		for _, p := range a.Parts {
			if d, ok := p.Content.(a2a.Data); ok {
				for _, r := range d.Value.(map[string]any)["nodes"].([]any) {
					row := r.(map[string]any)
					if n := row["node"].(string); n == "flight" || n == "spa" {
						tasks["trip-node-"+n] = a2a.TaskID(row["taskId"].(string))
					}
				}
			}
		}
	}

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, id := range tasks {
		it := env.Client.GetWorkflowHistory(ctx, string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var h historypb.History
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return err
			}
			h.Events = append(h.Events, ev)
		}
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&h)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name+suffix+".json"), b, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d events\n", name, len(h.Events))
	}
	return nil
}
