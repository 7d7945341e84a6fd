package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// PushDeliverName is the activity type of one push notification.
const PushDeliverName = "PushDeliver"

// ErrTypeWebhookRefused marks a webhook this server will not call.
const ErrTypeWebhookRefused = "WebhookRefused"

// PushDelivery is one event for one push config. The same delivery (the
// same payload) is retried until it succeeds or the workflow gives up.
type PushDelivery struct {
	Config a2a.PushConfig     `json:"config"`
	Seq    int64              `json:"seq"`
	Event  a2a.StreamResponse `json:"event"`
}

// WebhookPolicy says which addresses webhooks may resolve to.
type WebhookPolicy struct {
	// AllowLoopback admits 127.0.0.0/8 and ::1 (a local setup, the tests).
	AllowLoopback bool
	// AllowPrivate admits private and link-local addresses.
	AllowPrivate bool
}

// Check refuses a URL that is not http(s), or whose host resolves to an
// address the policy does not admit (loopback, private, link-local, the
// cloud metadata address, unspecified or multicast).
func (p WebhookPolicy) Check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("url must be an absolute http(s) URL")
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, u.Hostname())
	if err != nil {
		return fmt.Errorf("url host %q does not resolve", u.Hostname())
	}
	for _, ip := range ips {
		if err := p.checkIP(ip.IP); err != nil {
			return err
		}
	}
	return nil
}

func (p WebhookPolicy) checkIP(ip net.IP) error {
	switch {
	case ip.IsLoopback():
		if !p.AllowLoopback {
			return fmt.Errorf("url resolves to a loopback address, which webhooks may not use")
		}
	case ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		if !p.AllowPrivate {
			return fmt.Errorf("url resolves to a private or link-local address (such as a metadata service), which webhooks may not use")
		}
	case ip.IsUnspecified() || ip.IsMulticast():
		return fmt.Errorf("url resolves to an address webhooks may not use")
	}
	return nil
}

// Push delivers push notifications.
type Push struct {
	Policy WebhookPolicy
	client *http.Client
}

// NewPush makes the delivery activity. Its HTTP client checks every address
// it connects to, so a name that resolves differently at send time than at
// create time is refused too.
func NewPush(policy WebhookPolicy) *Push {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("not an IP address: %s", host)
		}
		return policy.checkIP(ip)
	}}
	tr := &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConnsPerHost: 4}
	return &Push{Policy: policy, client: &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Register adds the activity to a worker.
func (p *Push) Register(r interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}) {
	r.RegisterActivityWithOptions(p.Deliver, activity.RegisterOptions{Name: PushDeliverName})
}

// Deliver POSTs the event as a StreamResponse, with the config's
// credentials and token; any 2xx is success.
func (p *Push) Deliver(ctx context.Context, d PushDelivery) (err error) {
	defer func() {
		result := "delivered"
		if err != nil {
			result = "failed"
		}
		activity.GetMetricsHandler(ctx).WithTags(map[string]string{"result": result}).Counter("a2a_push_deliveries").Inc(1)
	}()
	if err := p.Policy.Check(ctx, d.Config.URL); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeWebhookRefused, nil)
	}
	body, err := json.Marshal(d.Event)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("encode event: "+err.Error(), ErrTypeWebhookRefused, nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Config.URL, bytes.NewReader(body))
	if err != nil {
		return temporal.NewNonRetryableApplicationError("bad webhook url", ErrTypeWebhookRefused, nil)
	}
	req.Header.Set("Content-Type", "application/a2a+json")
	req.Header.Set("A2A-Notification-Seq", fmt.Sprint(d.Seq))
	if d.Config.Auth != nil && d.Config.Auth.Scheme != "" {
		req.Header.Set("Authorization", d.Config.Auth.Scheme+" "+d.Config.Auth.Credentials)
	}
	if d.Config.Token != "" {
		req.Header.Set("X-A2A-Notification-Token", d.Config.Token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		// The URL is not in the error: it may carry secrets.
		return fmt.Errorf("webhook of push config %s unreachable", d.Config.ID)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook of push config %s answered HTTP %d", d.Config.ID, resp.StatusCode)
	}
	return nil
}
