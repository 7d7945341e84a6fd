// Package deploy checks the production layout files: docker-compose.yml,
// the Dockerfile and the compose configuration. No Docker engine runs here,
// so the compose file is loaded with the real Compose parser (compose-go)
// and checked against what the code builds, reads and serves.
package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/durable-a2a/orchestrator/config"
)

func load(t *testing.T) *types.Project {
	t.Helper()
	root, _ := filepath.Abs("..")
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		Environment: map[string]string{},
	}, func(o *loader.Options) { o.SetProjectName("a2a-orchestrator", true) })
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

// built lists the binaries the Dockerfile builds: name -> ./cmd/name.
func built(t *testing.T) (map[string]string, string) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`-o /out/(\w+) (\./cmd/\w+)`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out, string(b)
}

// flagsOf lists the flags a command defines, from its source.
func flagsOf(t *testing.T, cmdDir string) map[string]bool {
	b, err := os.ReadFile(filepath.Join("..", cmdDir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`flag\.\w+\((?:&[\w.]+, )?"([\w-]+)"`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	return out
}

// envRead lists the A2A_* variables the code reads.
func envRead(t *testing.T) map[string]bool {
	out := map[string]bool{}
	re := regexp.MustCompile(`Getenv\("(A2A_\w+)"\)`)
	_ = filepath.Walk("..", func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	return out
}

// The standard Temporal client settings envconfig reads.
var temporalEnv = map[string]bool{
	"TEMPORAL_ADDRESS": true, "TEMPORAL_NAMESPACE": true, "TEMPORAL_API_KEY": true, "TEMPORAL_PROFILE": true,
	"TEMPORAL_CONFIG_FILE": true, "TEMPORAL_TLS": true, "TEMPORAL_TLS_CLIENT_CERT_PATH": true,
	"TEMPORAL_TLS_CLIENT_KEY_PATH": true, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": true, "TEMPORAL_TLS_SERVER_NAME": true,
}

func TestComposeFile(t *testing.T) {
	p := load(t)
	bins, dockerfile := built(t)
	a2aEnv := envRead(t)
	for _, name := range []string{"postgresql", "temporal", "temporal-ui", "worker", "frontend", "agents"} {
		if _, err := p.GetService(name); err != nil {
			t.Errorf("no %s service", name)
		}
	}
	ours := 0
	for _, s := range p.Services {
		if s.Build == nil {
			if s.Image == "" {
				t.Errorf("%s: neither image nor build", s.Name)
			}
			continue
		}
		ours++
		if len(s.Command) == 0 {
			t.Fatalf("%s: no command", s.Name)
		}
		bin := filepath.Base(s.Command[0])
		dir, ok := bins[bin]
		if !ok || s.Command[0] != "/usr/local/bin/"+bin {
			t.Errorf("%s runs %s, which the Dockerfile does not build (it builds %v)", s.Name, s.Command[0], bins)
			continue
		}
		flags := flagsOf(t, dir)
		for _, arg := range s.Command[1:] {
			if strings.HasPrefix(arg, "-") && !flags[strings.TrimLeft(arg, "-")] {
				t.Errorf("%s: %s has no flag %s", s.Name, bin, arg)
			}
		}
		for k := range s.Environment {
			if !temporalEnv[k] && !a2aEnv[k] {
				t.Errorf("%s: environment %s is read by nothing", s.Name, k)
			}
		}
		if s.Environment["TEMPORAL_ADDRESS"] == nil || *s.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
			t.Errorf("%s: TEMPORAL_ADDRESS does not name the temporal service", s.Name)
		}
		if d, ok := s.DependsOn["temporal"]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("%s: does not wait for a healthy temporal", s.Name)
		}
		for i, arg := range s.Command {
			if arg == "-config" && (i+1 >= len(s.Command) || !strings.Contains(dockerfile, s.Command[i+1])) {
				t.Errorf("%s: its config file is not in the image", s.Name)
			}
		}
	}
	if ours != 3 {
		t.Errorf("%d services built from this project, want worker, frontend, agents", ours)
	}
	w, _ := p.GetService("worker")
	if w.Deploy == nil || w.Deploy.Replicas == nil || *w.Deploy.Replicas != 2 {
		t.Error("the worker does not run 2 replicas")
	}
	tmp, _ := p.GetService("temporal")
	if d, ok := tmp.DependsOn["postgresql"]; !ok || d.Condition != types.ServiceConditionHealthy {
		t.Error("temporal does not wait for a healthy PostgreSQL")
	}
	for _, name := range []string{"postgresql", "temporal", "frontend"} {
		s, _ := p.GetService(name)
		if s.HealthCheck == nil || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s has no health check", name)
		}
	}
	fe, _ := p.GetService("frontend")
	if !strings.Contains(strings.Join(fe.HealthCheck.Test, " "), "-probe http://127.0.0.1:8080/readyz") {
		t.Errorf("the frontend's health check does not probe /readyz: %v", fe.HealthCheck.Test)
	}
	published := map[string]bool{}
	for _, port := range fe.Ports {
		published[fmt.Sprint(port.Target)] = true
	}
	if !published["8080"] || !strings.Contains(strings.Join(fe.Command, " "), "0.0.0.0:8080") {
		t.Errorf("the frontend's port 8080 is not both listened on and published: %v %v", fe.Command, fe.Ports)
	}
}

func TestDockerfile(t *testing.T) {
	bins, dockerfile := built(t)
	if strings.Count(dockerfile, "\nFROM ") < 1 || !strings.HasPrefix(dockerfile, "#") && !strings.HasPrefix(dockerfile, "FROM") {
		t.Error("not a Dockerfile")
	}
	if n := len(regexp.MustCompile(`(?m)^FROM `).FindAllString(dockerfile, -1)); n < 2 {
		t.Errorf("%d stages, want a multi-stage build", n)
	}
	if !regexp.MustCompile(`(?m)^USER nonroot`).MatchString(dockerfile) {
		t.Error("the image does not run as a non-root user")
	}
	for bin, dir := range bins {
		if _, err := os.Stat(filepath.Join("..", dir, "main.go")); err != nil {
			t.Errorf("the Dockerfile builds %s from %s, which does not exist", bin, dir)
		}
	}
	for _, want := range []string{"frontend", "worker", "agents"} {
		if bins[want] == "" {
			t.Errorf("the Dockerfile does not build %s", want)
		}
	}
}

// The configuration the image carries loads, and names the agents where
// the compose file runs them.
func TestComposeConfig(t *testing.T) {
	c, err := config.Load("../a2a.compose.toml")
	if err != nil {
		t.Fatal(err)
	}
	p := load(t)
	ag, _ := p.GetService("agents")
	cmd := strings.Join(ag.Command, " ")
	for i, a := range c.Agents {
		want := fmt.Sprintf("http://agents:%d", 8091+i)
		if a.CardURL != want || !strings.Contains(cmd, "-port 8091") {
			t.Errorf("agent %s at %s, want %s (agents run %s)", a.Name, a.CardURL, want, cmd)
		}
	}
	if len(c.APIKeys) == 0 {
		t.Error("the compose frontend listens on all interfaces: it needs API keys")
	}
}
