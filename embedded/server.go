// Package embedded runs a single-process Temporal server whose state lives in
// a SQLite file, so that the whole product runs from one command and survives
// restarts.
package embedded

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	tlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

const clusterName = "active"

// Config says where the embedded server keeps its data and what it creates.
type Config struct {
	// DataDir holds the SQLite file. Empty means in memory (tests only).
	DataDir string
	// IP to bind the Temporal frontend to; defaults to 127.0.0.1.
	IP string
	// FrontendPort for the Temporal gRPC frontend; 0 picks a free port.
	FrontendPort int
	// Namespace created on first start.
	Namespace string
	// SearchAttributes created with the namespace on first start.
	SearchAttributes map[string]enumspb.IndexedValueType
	// LogLevel of the server's own logs, written to stdout; default "error"
	// (its warnings are too chatty for a development console).
	LogLevel string
}

// Server is a running embedded Temporal server.
type Server struct {
	srv      temporal.Server
	hostPort string
}

// HostPort is the address of the Temporal frontend (gRPC).
func (s *Server) HostPort() string { return s.hostPort }

// Stop shuts the server down.
func (s *Server) Stop() error { return s.srv.Stop() }

// DynamicConfig holds the tuning the embedded server ships with. A one-shard
// server reads its transfer, timer and visibility queues 20 times a second by
// default, which puts up to 50 ms on every workflow step and on a new task's
// appearance in ListTasks; timers fire up to a second late (max time shift);
// several task-queue partitions leave bursts of first workflow tasks
// unpicked on a small machine. The history cache keeps the state of up to
// 128,000 workflows for an hour by default: thousands of tasks waiting for
// days would hold the server's memory (about 55 KB each) for nothing.
func DynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   1000,
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      1000,
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): 1000,
		// One caller's ListTasks and new tasks' visibility checks must not
		// queue behind a limit of 10 visibility calls a second.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 1000,
		dynamicconfig.TimerProcessorMaxTimeShift.Key():                   10 * time.Millisecond,
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():           1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key():          1,
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 2000,
	}
}

// Start creates (on first start) and starts the server.
func Start(cfg Config) (*Server, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.IP == "" {
		cfg.IP = "127.0.0.1"
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "error"
	}
	if cfg.FrontendPort == 0 {
		p, err := FreePortBase(cfg.IP)
		if err != nil {
			return nil, err
		}
		cfg.FrontendPort = p
	}
	metricsPort, err := freePort(cfg.IP)
	if err != nil {
		return nil, err
	}
	// The four services listen on fixed offsets from the frontend port, so a
	// restart after a crash rejoins the cluster under the same addresses; new
	// addresses would leave the dead process's members in the ring, and task
	// queues routed to them stall for most of a minute.
	port := func(off int) int { return cfg.FrontendPort + off }

	sqlCfg := &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		ConnectAttributes: map[string]string{},
	}
	visCfg := sqlCfg
	if cfg.DataDir == "" {
		sqlCfg.ConnectAttributes["mode"] = "memory"
		sqlCfg.ConnectAttributes["cache"] = "shared" // the plugin sets up the schema of an in-memory database itself
		sqlCfg.DatabaseName = "mem" + strconv.Itoa(cfg.FrontendPort)
	} else {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		file := func(name string) *config.SQL {
			return &config.SQL{
				PluginName:   sqliteplugin.PluginName,
				DatabaseName: filepath.Join(cfg.DataDir, name),
				// Keys other than the DSN's own parameters go to SQLite as
				// pragmas, by their plain names (unknown ones are ignored).
				ConnectAttributes: map[string]string{
					"mode":         "rwc",
					"journal_mode": "wal",
					"synchronous":  "2", // FULL: nothing acknowledged is lost, even to a power cut
				},
			}
		}
		sqlCfg = file("temporal.db")
		_, err := os.Stat(sqlCfg.DatabaseName)
		fresh := errors.Is(err, os.ErrNotExist)
		// Visibility (what ListTasks reads) has a file of its own, so that
		// its writes do not queue behind the tasks' own on one connection.
		// A data directory made before keeps it in temporal.db.
		visCfg = file("visibility.db")
		if _, err := os.Stat(visCfg.DatabaseName); !fresh && errors.Is(err, os.ErrNotExist) {
			visCfg = sqlCfg
		}
		for _, c := range []*config.SQL{sqlCfg, visCfg} {
			if _, err := os.Stat(c.DatabaseName); errors.Is(err, os.ErrNotExist) {
				if err := sqlite.SetupSchema(c); err != nil {
					return nil, fmt.Errorf("set up schema of %s: %w", c.DatabaseName, err)
				}
			}
		}
	}
	ns, err := sqlite.NewNamespaceConfig(clusterName, cfg.Namespace, false, cfg.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("namespace config: %w", err)
	}
	if err := sqlite.CreateNamespaces(sqlCfg, ns); err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}

	hostPort := net.JoinHostPort(cfg.IP, strconv.Itoa(cfg.FrontendPort))
	svc := func(grpcPort, membershipPort int) config.Service {
		return config.Service{RPC: config.RPC{
			GRPCPort: grpcPort, MembershipPort: membershipPort, BindOnIP: cfg.IP,
		}}
	}
	sc := &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: cfg.IP},
			Metrics: &metrics.Config{Prometheus: &metrics.PrometheusConfig{
				ListenAddress: net.JoinHostPort(cfg.IP, strconv.Itoa(metricsPort)), HandlerPath: "/metrics",
			}},
		},
		Persistence: config.Persistence{
			DefaultStore:     "default",
			VisibilityStore:  "visibility",
			NumHistoryShards: 1,
			DataStores:       map[string]config.DataStore{"default": {SQL: sqlCfg}, "visibility": {SQL: visCfg}},
		},
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: hostPort},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			"frontend": svc(port(0), port(portSpan/2)),
			"history":  svc(port(1), port(portSpan/2+1)),
			"matching": svc(port(2), port(portSpan/2+2)),
			"worker":   svc(port(3), port(portSpan/2+3)),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
			Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		PublicClient: config.PublicClient{HostPort: hostPort},
	}

	srv, err := temporal.NewServer(
		temporal.WithConfig(sc),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(tlog.NewZapLogger(tlog.BuildZapLogger(tlog.Config{Stdout: true, Level: cfg.LogLevel}))),
		temporal.WithDynamicConfigClient(DynamicConfig()),
	)
	if err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	return &Server{srv: srv, hostPort: hostPort}, nil
}

// portSpan is how many ports from the frontend port the server uses:
// gRPC of the four services at +0..+3, their membership ports at +10..+13.
const portSpan = 20

// FreePortBase finds a frontend port whose whole span of ports is free.
func FreePortBase(ip string) (int, error) {
	for range 50 {
		base, err := freePort(ip)
		if err != nil {
			return 0, err
		}
		if base+portSpan > 65535 {
			continue
		}
		if spanFree(ip, base) {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no free block of %d ports on %s", portSpan, ip)
}

func spanFree(ip string, base int) bool {
	for _, off := range []int{0, 1, 2, 3, portSpan / 2, portSpan/2 + 1, portSpan/2 + 2, portSpan/2 + 3} {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(base+off)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}

func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
