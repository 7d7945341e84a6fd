// Package config reads the orchestrator's configuration file: the registry
// of downstream agents and the playbooks (named plans).
package config

import (
	"fmt"
	"net/url"
	"os"

	"github.com/BurntSushi/toml"

	"github.com/durable-a2a/orchestrator/plan"
)

// Agent is a downstream A2A agent the orchestrator may call.
type Agent struct {
	Name string `toml:"name"`
	// CardURL is the agent's base URL; its card is at
	// /.well-known/agent-card.json below it.
	CardURL string `toml:"cardUrl"`
	// Credentials sent with every call: an API key header, or a bearer token.
	APIKeyHeader string `toml:"apiKeyHeader"`
	APIKey       string `toml:"apiKey"`
	BearerToken  string `toml:"bearerToken"`
}

// Config is the whole file.
type Config struct {
	// WebhookBaseURL is how downstream agents reach this server's
	// frontends (such as https://a2a.example.com): a node waiting on a long
	// downstream task registers a push webhook below it. Empty: no push
	// waits (streaming and polling only).
	WebhookBaseURL string          `toml:"webhookBaseUrl"`
	Agents         []Agent         `toml:"agents"`
	Playbooks      []plan.Playbook `toml:"playbooks"`
	// APIKeys authenticate callers: with any configured, every A2A call
	// needs one (header X-API-Key); the principal owns the tasks it makes.
	APIKeys []APIKey `toml:"apiKeys"`
	// RateLimit bounds each principal's calls (unset: no limit).
	RateLimit RateLimit `toml:"rateLimit"`
	// JWT accepts bearer tokens (unset: none).
	JWT *JWT `toml:"jwt"`
}

// JWT says how bearer tokens are checked: an HS256 secret, or a PEM public
// key file (RS256/ES256); issuer and audience when set.
type JWT struct {
	HMACSecret    string `toml:"hmacSecret"`
	PublicKeyFile string `toml:"publicKeyFile"`
	Issuer        string `toml:"issuer"`
	Audience      string `toml:"audience"`
}

// RateLimit is a token bucket per principal.
type RateLimit struct {
	PerSecond float64 `toml:"perSecond"`
	Burst     int     `toml:"burst"`
}

// APIKey is one caller's secret key.
type APIKey struct {
	Principal string `toml:"principal"`
	Key       string `toml:"key"`
}

// Load reads and checks a configuration file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var c Config
	md, err := toml.Decode(string(b), &c)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return nil, fmt.Errorf("config %s: unknown field %q", path, undecoded[0].String())
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return &c, nil
}

// Validate names the first field that is wrong.
func (c *Config) Validate() error {
	if c.WebhookBaseURL != "" {
		if u, err := url.Parse(c.WebhookBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("webhookBaseUrl %q is not an http(s) URL", c.WebhookBaseURL)
		}
	}
	names := map[string]bool{}
	for i, a := range c.Agents {
		switch {
		case a.Name == "":
			return fmt.Errorf("agents[%d].name is empty", i)
		case names[a.Name]:
			return fmt.Errorf("agents[%d].name %q is used twice", i, a.Name)
		}
		u, err := url.Parse(a.CardURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("agents[%d].cardUrl %q is not an http(s) URL", i, a.CardURL)
		}
		if a.APIKey != "" && a.APIKeyHeader == "" {
			return fmt.Errorf("agents[%d].apiKeyHeader is needed with apiKey", i)
		}
		names[a.Name] = true
	}
	if c.RateLimit.PerSecond < 0 || c.RateLimit.Burst < 0 {
		return fmt.Errorf("rateLimit.perSecond and rateLimit.burst must not be negative")
	}
	if c.JWT != nil {
		switch {
		case c.JWT.HMACSecret == "" && c.JWT.PublicKeyFile == "":
			return fmt.Errorf("jwt needs hmacSecret or publicKeyFile")
		case c.JWT.HMACSecret != "" && len(c.JWT.HMACSecret) < 32:
			return fmt.Errorf("jwt.hmacSecret is shorter than 32 characters")
		}
	}
	keys := map[string]bool{}
	for i, k := range c.APIKeys {
		switch {
		case k.Principal == "":
			return fmt.Errorf("apiKeys[%d].principal is empty", i)
		case len(k.Key) < 16:
			return fmt.Errorf("apiKeys[%d].key is shorter than 16 characters", i)
		case keys[k.Key]:
			return fmt.Errorf("apiKeys[%d].key is used twice", i)
		}
		keys[k.Key] = true
	}
	seen := map[string]bool{}
	for i, pb := range c.Playbooks {
		if pb.Name == "" {
			return fmt.Errorf("playbooks[%d].name is empty", i)
		}
		if seen[pb.Name] {
			return fmt.Errorf("playbooks[%d].name %q is used twice", i, pb.Name)
		}
		seen[pb.Name] = true
		if err := pb.Expand("").Validate(func(a string) bool { return names[a] }); err != nil {
			return fmt.Errorf("playbooks[%d] (%s): %w", i, pb.Name, err)
		}
	}
	return nil
}

// Agent finds an agent by name.
func (c *Config) Agent(name string) (Agent, bool) {
	for _, a := range c.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// TripPlaybook is the shipped example: a flight, then a hotel and a
// snowmobile tour in parallel, and a spa visit once the hotel is booked.
func TripPlaybook() plan.Playbook {
	return plan.Playbook{
		Name:        "trip",
		Description: "Plans a trip: books the flight first (it asks for what it lacks), then the hotel and a snowmobile tour at the same time, and a spa visit once the hotel is booked.",
		Nodes: []plan.Node{
			{ID: "flight", Agent: "flight", Message: "Book a flight for this trip: {{request}}"},
			{ID: "hotel", Agent: "hotel", Message: "Book a hotel at the destination for this trip: {{request}}", DependsOn: []string{"flight"}},
			{ID: "snowmobile", Agent: "snowmobile", Message: "Book a snowmobile tour for this trip: {{request}}", DependsOn: []string{"flight"}},
			{ID: "spa", Agent: "spa", Message: "Book a spa visit at the hotel for this trip: {{request}}", DependsOn: []string{"hotel"}},
		},
	}
}

// Local is the configuration of the single command: the trip agents it
// starts itself, at the given base URLs, and the trip playbook.
func Local(flight, hotel, snowmobile, spa string) *Config {
	return &Config{
		Agents: []Agent{
			{Name: "flight", CardURL: flight},
			{Name: "hotel", CardURL: hotel},
			{Name: "snowmobile", CardURL: snowmobile},
			{Name: "spa", CardURL: spa},
		},
		Playbooks: []plan.Playbook{TripPlaybook()},
	}
}
