package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The example file in the repository loads, and says what cmd/dev runs.
func TestExampleFile(t *testing.T) {
	c, err := Load(filepath.Join("..", "a2a.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	local := Local("http://127.0.0.1:8091", "http://127.0.0.1:8092", "http://127.0.0.1:8093", "http://127.0.0.1:8094")
	local.WebhookBaseURL = "http://127.0.0.1:8080" // cmd/dev: its own frontend
	if !reflect.DeepEqual(c, local) {
		t.Errorf("the example file and cmd/dev's configuration differ:\n%+v\n%+v", c, local)
	}
}

func TestInvalidConfigNamesTheField(t *testing.T) {
	cases := map[string]string{
		"[[agents]]\nname = \"a\"\ncardUrl = \"ftp://x\"\n":                                           "agents[0].cardUrl",
		"[[agents]]\nname = \"\"\ncardUrl = \"http://x\"\n":                                           "agents[0].name",
		"[[agents]]\nname = \"a\"\ncardUrl = \"http://x\"\napiKey = \"k\"\n":                          "agents[0].apiKeyHeader",
		"[[agents]]\nname = \"a\"\ncardUrl = \"http://x\"\nurl = \"typo\"\n":                          "unknown field",
		"[[playbooks]]\nname = \"p\"\n[[playbooks.nodes]]\nid=\"x\"\nagent=\"nope\"\nmessage=\"m\"\n": "playbooks[0] (p): node \"x\" names unknown agent",
	}
	for body, want := range cases {
		path := filepath.Join(t.TempDir(), "c.toml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want it to name %q", body, err, want)
		}
	}
}
