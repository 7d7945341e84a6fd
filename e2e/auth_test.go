package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/durable-a2a/orchestrator/a2a/server"
)

type withKey struct {
	key  string
	next http.RoundTripper
}

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(server.APIKeyHeader, k.key)
	return k.next.RoundTrip(r)
}

func keyedClient(t *testing.T, base, key string, binding a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	hc := &http.Client{Transport: withKey{key: key, next: http.DefaultTransport}, Timeout: time.Minute}
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOwnersSeeOnlyTheirTasks: with API keys, every task belongs to the
// principal who made it; another principal's task answers exactly as a
// missing one, for every operation, and ListTasks shows only one's own.
func TestOwnersSeeOnlyTheirTasks(t *testing.T) {
	auth := &server.Auth{Keys: []server.APIKey{
		{Key: "alice-key-0123456789", Principal: "alice"},
		{Key: "bob-key-0123456789ab", Principal: "bob"},
	}}
	base, stop, err := env.AddFrontendWithAuth(auth)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	// The card stays public and declares the scheme; calls without a key get 401.
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("public card: %v %v", resp, err)
	}
	resp.Body.Close()
	for _, key := range []string{"", "wrong-key-0123456789"} {
		req, _ := http.NewRequest(http.MethodPost, base+"/jsonrpc", nil)
		if key != "" {
			req.Header.Set(server.APIKeyHeader, key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("key %q: HTTP %d, WWW-Authenticate %q", key, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}

	for _, b := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(b), func(t *testing.T) {
			alice := keyedClient(t, base, "alice-key-0123456789", b)
			bob := keyedClient(t, base, "bob-key-0123456789ab", b)
			ctxID := "owners-" + uuid.NewString()
			m := flightMsg("from Oulu", nil)
			m.ContextID = ctxID
			task := send(t, alice, &a2a.SendMessageRequest{Message: m})
			// Alice's own reply leaves the task's facts in the frontend's
			// memory; Bob must still not reach the task through them.
			task = send(t, alice, &a2a.SendMessageRequest{Message: reply(task, "to Kemi")})
			if task.Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("alice's task is %s, want INPUT_REQUIRED", task.Status.State)
			}
			unknown := a2a.TaskID(uuid.NewString())

			for _, id := range []a2a.TaskID{task.ID, unknown} {
				ctx := ctxT(t)
				if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob GetTask(%s): %v", id, err)
				}
				if _, err := bob.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob CancelTask: %v", err)
				}
				r := reply(&a2a.Task{ID: id, ContextID: ctxID}, "to Kemi")
				if _, err := bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: r}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob SendMessage to the task: %v", err)
				}
				for _, err := range bob.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
					if !errors.Is(err, a2a.ErrTaskNotFound) {
						t.Errorf("bob SubscribeToTask: %v", err)
					}
					break
				}
				if _, err := bob.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob ListTaskPushConfigs: %v", err)
				}
				if _, err := bob.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: id, URL: "http://127.0.0.1:9/hook"}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob CreateTaskPushConfig: %v", err)
				}
				ref := planMsg(nodes(map[string]any{"id": "x", "agent": "spa", "message": "go"}))
				ref.ReferenceTasks = []a2a.TaskID{id}
				if _, err := bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: ref}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob referenceTaskIds: %v", err)
				}
			}
			list, err := bob.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: ctxID})
			if err != nil || list.TotalSize != 0 {
				t.Errorf("bob lists %d of alice's tasks (%v)", list.TotalSize, err)
			}
			list, err = alice.ListTasks(ctxT(t), &a2a.ListTasksRequest{ContextID: ctxID})
			if err != nil || list.TotalSize != 1 {
				t.Errorf("alice lists %d tasks (%v)", list.TotalSize, err)
			}
			// Alice's task is untouched by all of that, and hers to finish.
			done := send(t, alice, &a2a.SendMessageRequest{Message: reply(task, "to Kemi on 2027-04-04")})
			expectState(t, done, a2a.TaskStateCompleted, "")
		})
	}
}

func TestExtendedCardAndRateLimit(t *testing.T) {
	auth := &server.Auth{Keys: []server.APIKey{{Key: "carol-key-0123456789", Principal: "carol"}}, RatePerSecond: 1, Burst: 5}
	base, stop, err := env.AddFrontendWithAuth(auth)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := keyedClient(t, base, "carol-key-0123456789", a2a.TransportProtocolJSONRPC)
	card, err := c.GetExtendedAgentCard(ctxT(t), &a2a.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(card.Description, "carol") || !card.Capabilities.ExtendedAgentCard || len(card.SecuritySchemes) == 0 {
		t.Errorf("extended card: %q caps %+v schemes %v", card.Description, card.Capabilities, card.SecuritySchemes)
	}
	// The burst is spent: the next calls are refused with 429 until the
	// bucket refills.
	limited := false
	for range 10 {
		if _, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: a2a.TaskID(uuid.NewString())}); err != nil && strings.Contains(err.Error(), "429") {
			limited = true
			break
		}
	}
	if !limited {
		t.Error("no call was rate limited")
	}
	// (The frontend without authentication has no extended card: -32004,
	// in TestUnbuiltOperationsAreRefused.)
}

// Tenants (the REST /{tenant}/ routes, or the tenant field) never see each
// other's tasks.
func TestTenantsAreSeparate(t *testing.T) {
	body := `{"message":{"messageId":"` + uuid.NewString() + `","role":"ROLE_USER","parts":[{"text":"tenant work"}]}}`
	status, out := post(t, "/rest/acme/message:send", "application/a2a+json", body)
	if status != http.StatusOK {
		t.Fatalf("tenant send: HTTP %d %v", status, out)
	}
	id := out["task"].(map[string]any)["id"].(string)
	get := func(path string) int {
		resp, err := http.Get(env.BaseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/rest/acme/tasks/" + id); s != http.StatusOK {
		t.Errorf("own tenant: HTTP %d", s)
	}
	for _, other := range []string{"/rest/globex/tasks/" + id, "/rest/tasks/" + id} {
		if s := get(other); s != http.StatusNotFound {
			t.Errorf("%s: HTTP %d, want 404", other, s)
		}
	}
}

func TestVersionNegotiation(t *testing.T) {
	call := func(header, query string) float64 {
		req, _ := http.NewRequest(http.MethodPost, env.BaseURL+"/jsonrpc"+query,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+uuid.NewString()+`"}}`))
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set("A2A-Version", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out["error"].(map[string]any)["code"].(float64)
	}
	for _, tc := range []struct {
		header, query string
		want          float64
	}{
		{"1.0", "", -32001}, {"1.0.3", "", -32001}, {"", "", -32001},
		{"0.3", "", -32009}, {"2.0", "", -32009}, {"", "?A2A-Version=0.3", -32009},
	} {
		if got := call(tc.header, tc.query); got != tc.want {
			t.Errorf("A2A-Version %q%s: code %v, want %v", tc.header, tc.query, got, tc.want)
		}
	}
}

func TestHostileInputLimits(t *testing.T) {
	parts := strings.Repeat(`{"text":"x"},`, 65)
	status, out := post(t, "/jsonrpc", "application/json",
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[`+strings.TrimSuffix(parts, ",")+`]}}}`)
	if status != http.StatusOK || out["error"].(map[string]any)["code"] != float64(-32602) {
		t.Errorf("65 parts: HTTP %d %v", status, out)
	}
	big := strings.Repeat("a", 1<<20+10)
	status, out = post(t, "/jsonrpc", "application/json",
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"`+big+`"}]}}}`)
	if status != http.StatusOK || out["error"].(map[string]any)["code"] != float64(-32602) {
		t.Errorf("a 1 MiB message: HTTP %d", status)
	}
	huge := strings.Repeat("a", 3<<20)
	resp, err := http.Post(env.BaseURL+"/jsonrpc", "application/json", strings.NewReader(huge))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 3 MiB body: HTTP %d, want 413", resp.StatusCode)
	}
}

func TestBearerTokens(t *testing.T) {
	secret := []byte("a-shared-hmac-secret-of-32-bytes!!")
	auth := &server.Auth{JWT: &server.JWTVerifier{HMACSecret: secret, Issuer: "test-issuer"}}
	base, stop, err := env.AddFrontendWithAuth(auth)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	sign := func(claims jwt.MapClaims, key []byte) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := sign(jwt.MapClaims{"sub": "dave", "iss": "test-issuer", "exp": time.Now().Add(time.Hour).Unix()}, secret)
	call := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/jsonrpc",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+uuid.NewString()+`"}}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without a Bearer challenge: %q", resp.Header.Get("WWW-Authenticate"))
		}
		return resp.StatusCode
	}
	if s := call(good); s != http.StatusOK {
		t.Errorf("a good token: HTTP %d", s)
	}
	for name, tok := range map[string]string{
		"none":         "",
		"expired":      sign(jwt.MapClaims{"sub": "dave", "iss": "test-issuer", "exp": time.Now().Add(-time.Minute).Unix()}, secret),
		"no expiry":    sign(jwt.MapClaims{"sub": "dave", "iss": "test-issuer"}, secret),
		"wrong issuer": sign(jwt.MapClaims{"sub": "dave", "iss": "other", "exp": time.Now().Add(time.Hour).Unix()}, secret),
		"wrong key":    sign(jwt.MapClaims{"sub": "dave", "iss": "test-issuer", "exp": time.Now().Add(time.Hour).Unix()}, []byte("another-secret-another-secret-xx")),
		"not a token":  "abc.def.ghi",
		"alg none":     "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJkYXZlIn0.",
	} {
		if s := call(tok); s != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, s)
		}
	}

	// gRPC: no credentials is UNAUTHENTICATED; a token works.
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	var grpcAddr string
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == a2a.TransportProtocolGRPC {
			grpcAddr = i.URL
		}
	}
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gc := a2apb.NewA2AServiceClient(conn)
	_, err = gc.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: uuid.NewString()})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("gRPC without credentials: %v", err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+good)
	_, err = gc.GetTask(ctx, &a2apb.GetTaskRequest{Id: uuid.NewString()})
	if status.Code(err) != codes.NotFound {
		t.Errorf("gRPC with a token: %v, want NotFound for an unknown task", err)
	}
}

// With a certificate configured the frontend serves HTTPS (TLS 1.2+), and
// the card names https URLs.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)

	base, stop, err := env.AddFrontendTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("not TLS 1.2+: %+v", resp.TLS)
	}
	url := card["supportedInterfaces"].([]any)[0].(map[string]any)["url"].(string)
	if !strings.HasPrefix(url, "https://") {
		t.Errorf("card interface url %q is not https", url)
	}
	// Plain HTTP to the TLS port gets no A2A answer.
	if resp, err := http.Get(strings.Replace(base, "https://", "http://", 1) + "/.well-known/agent-card.json"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served the card on the TLS port")
		}
	}
	// A real A2A call over TLS.
	c, err := a2aclient.NewFromCard(context.Background(), mustResolve(t, hc, base), a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: a2a.TaskID(uuid.NewString())}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask over TLS: %v", err)
	}
}

func mustResolve(t *testing.T, hc *http.Client, base string) *a2a.AgentCard {
	card, err := agentcard.NewResolver(hc).Resolve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	return card
}
