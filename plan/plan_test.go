package plan

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func known(a string) bool { return a == "flight" || a == "hotel" || a == "spa" }

func TestValidateNamesTheProblem(t *testing.T) {
	cases := []struct {
		name string
		plan string
		want string
	}{
		{"empty", `{"nodes":[]}`, "no nodes"},
		{"unknown agent", `{"nodes":[{"id":"a","agent":"taxi","message":"go"}]}`, `unknown agent "taxi"`},
		{"unknown dependency", `{"nodes":[{"id":"a","agent":"flight","message":"go","dependsOn":["b"]}]}`, `unknown node "b"`},
		{"duplicate", `{"nodes":[{"id":"a","agent":"flight","message":"x"},{"id":"a","agent":"hotel","message":"y"}]}`, "used twice"},
		{"self", `{"nodes":[{"id":"a","agent":"flight","message":"x","dependsOn":["a"]}]}`, "depends on itself"},
		{"cycle", `{"nodes":[{"id":"a","agent":"flight","message":"x","dependsOn":["c"]},{"id":"b","agent":"hotel","message":"y","dependsOn":["a"]},{"id":"c","agent":"spa","message":"z","dependsOn":["b"]}]}`, "cycle: a -> c -> b -> a"},
		{"no message", `{"nodes":[{"id":"a","agent":"flight","message":" "}]}`, "no message"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.plan))
			if err != nil {
				t.Fatal(err)
			}
			err = p.Validate(known)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestParseRefusesUnknownFields(t *testing.T) {
	if _, err := Parse([]byte(`{"nodes":[{"id":"a","agent":"flight","message":"x","depends_on":["b"]}]}`)); err == nil {
		t.Fatal("a misspelt field was accepted")
	}
}

func TestTripPlaybook(t *testing.T) {
	pb := Playbook{Name: "trip", Nodes: []Node{
		{ID: "flight", Agent: "flight", Message: "Book a flight: {{request}}"},
		{ID: "hotel", Agent: "hotel", Message: "Hotel", DependsOn: []string{"flight"}},
		{ID: "spa", Agent: "spa", Message: "Spa", DependsOn: []string{"hotel"}},
		{ID: "snow", Agent: "flight", Message: "Snowmobile", DependsOn: []string{"flight"}},
	}}
	p := pb.Expand("Rovaniemi in December")
	if err := p.Validate(known); err != nil {
		t.Fatal(err)
	}
	if p.Nodes[0].Message != "Book a flight: Rovaniemi in December" || pb.Nodes[0].Message != "Book a flight: {{request}}" {
		t.Errorf("expand: %q (playbook now %q)", p.Nodes[0].Message, pb.Nodes[0].Message)
	}
	if got := p.CriticalPath(); got != 3 {
		t.Errorf("critical path = %d, want 3", got)
	}
}

func TestFromMessage(t *testing.T) {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("plan this"),
		a2a.NewDataPart(map[string]any{"plan": map[string]any{"nodes": []any{map[string]any{"id": "a", "agent": "flight", "message": "go"}}}}))
	p, ok, err := FromMessage(m)
	if err != nil || !ok || len(p.Nodes) != 1 || p.Nodes[0].Agent != "flight" {
		t.Fatalf("FromMessage = %+v %v %v", p, ok, err)
	}
	if _, ok, _ := FromMessage(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("no plan"))); ok {
		t.Error("found a plan in a text message")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"nodes":[{"id":"flight","agent":"flight","message":"go"},{"id":"hotel","agent":"hotel","message":"h","dependsOn":["flight"]}]}`))
	f.Add([]byte(`{"nodes":[{"id":"a","agent":"flight","message":"x","dependsOn":["a"]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		if p.Validate(known) == nil {
			_ = p.CriticalPath() // a valid plan is acyclic: this terminates
		}
	})
}
