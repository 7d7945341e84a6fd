package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Limits on what a client may send, so that no request can make the server
// grow without bound.
const (
	MaxParts        = 64
	MaxMessageBytes = 1 << 20
)

func invalid(format string, args ...any) error {
	return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
}

// validateSend checks what the spec requires of a SendMessage request and
// names the field that is wrong.
func validateSend(req *a2a.SendMessageRequest) error {
	if req == nil || req.Message == nil {
		return invalid("message is required")
	}
	m := req.Message
	if m.ID == "" {
		return invalid("message.messageId is required")
	}
	if m.Role != a2a.MessageRoleUser {
		return invalid("message.role must be ROLE_USER")
	}
	if len(m.Parts) == 0 {
		return invalid("message.parts must have at least one part")
	}
	if len(m.Parts) > MaxParts {
		return invalid("message.parts has %d parts; at most %d are allowed", len(m.Parts), MaxParts)
	}
	if b, err := json.Marshal(m); err != nil || len(b) > MaxMessageBytes {
		return invalid("message is larger than %d bytes", MaxMessageBytes)
	}
	for i, p := range m.Parts {
		if p == nil || p.Content == nil {
			return invalid("message.parts[%d] must have one of text, raw, url or data", i)
		}
	}
	if req.Config != nil && req.Config.HistoryLength != nil && *req.Config.HistoryLength < 0 {
		return invalid("configuration.historyLength must not be negative")
	}
	return nil
}

func historyLength(c *a2a.SendMessageConfig) *int {
	if c == nil {
		return nil
	}
	return c.HistoryLength
}

// trimHistory applies historyLength: unset keeps all, 0 omits the history,
// N keeps the N most recent messages.
func trimHistory(t *a2a.Task, n *int) *a2a.Task {
	if n == nil || t == nil {
		return t
	}
	if *n == 0 {
		t.History = nil
	} else if len(t.History) > *n {
		t.History = t.History[len(t.History)-*n:]
	}
	return t
}

// tenantOf is the request's tenant: the field in the body, or the REST path's.
func tenantOf(ctx context.Context, field string) string {
	if field != "" {
		return field
	}
	if cc, ok := a2asrv.CallContextFrom(ctx); ok {
		return cc.Tenant()
	}
	return ""
}

func pushConfigOf(c *a2a.SendMessageConfig) *a2a.PushConfig {
	if c == nil {
		return nil
	}
	return c.PushConfig
}
