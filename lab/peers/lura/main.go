// The `lura` model of `weft lab system-a`: the same aggregation built on lura, the engine of KrakenD CE
// (github.com/luraproject/lura), as a KrakenD user would configure it: one endpoint GET /a/{id} whose three
// backends B, C and D are called at once and whose answers are merged, each under its group name, so the
// answer is {"b":...,"c":...,"d":...} like every other model's. lura's own gin router and default proxy
// stack; no KrakenD CE middlewares (rate limits, metrics, logging), which would only add work per request.
//
// Usage: system-a-lura B_URL C_URL D_URL MAX_CONNECTIONS
// Prints "READY <url>" once it serves; exits when its standard input closes.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	ginlib "github.com/gin-gonic/gin"
	"github.com/luraproject/lura/v2/config"
	"github.com/luraproject/lura/v2/logging"
	"github.com/luraproject/lura/v2/proxy"
	router "github.com/luraproject/lura/v2/router/gin"
	"github.com/luraproject/lura/v2/transport/http/server"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: system-a-lura B_URL C_URL D_URL MAX_CONNECTIONS")
		os.Exit(2)
	}
	maxConns, err := strconv.Atoi(os.Args[4])
	if err != nil || maxConns < 1 {
		fmt.Fprintln(os.Stderr, "MAX_CONNECTIONS must be a positive integer")
		os.Exit(2)
	}
	port, err := freePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	names := []string{"b", "c", "d"}
	var backends []map[string]any
	for i, name := range names {
		backends = append(backends, map[string]any{
			"host":        []string{os.Args[1+i]},
			"url_pattern": "/" + name + "/{id}",
			"group":       name,
			"encoding":    "json",
			// lura forwards only the query strings listed; each backend gets ?latency=L like the other models send
			"input_query_strings": []string{"latency"},
		})
	}
	// The same bounds the other models get: room for every request in flight and its three calls, connections
	// kept (lura's default of 250 idle connections per host would close and reopen them under this load).
	service := map[string]any{
		"version":                        3,
		"name":                           "weft-lab-system-a",
		"listen_ip":                      "127.0.0.1",
		"port":                           port,
		"timeout":                        "50s",
		"cache_ttl":                      "0s",
		"output_encoding":                "json",
		"max_idle_connections":           3 * maxConns,
		"max_idle_connections_per_host":  maxConns,
		"idle_connection_timeout":        "30s",
		"read_header_timeout":            "10s",
		"disable_rest":                   false,
		"endpoints": []map[string]any{{
			"endpoint":            "/a/{id}",
			"method":              "GET",
			"timeout":             "50s",
			"input_query_strings": []string{"latency"},
			"backend":             backends,
		}},
	}
	file, err := os.CreateTemp("", "weft-lab-lura-*.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.Remove(file.Name())
	if err := json.NewEncoder(file).Encode(service); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	file.Close()
	cfg, err := config.NewParser().Parse(file.Name())
	if err != nil {
		fmt.Fprintln(os.Stderr, "lura config:", err)
		os.Exit(1)
	}
	logger, err := logging.NewLogger("ERROR", os.Stderr, "[LURA]")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
		os.Exit(0)
	}()
	// lura's engine as KrakenD CE builds it (gin in release mode, no per-request log line), without CE's extra
	// middlewares; router.DefaultFactory would add gin's request logger and write a line per request.
	engine := router.NewEngine(cfg, router.EngineOptions{Logger: logger, Writer: io.Discard, Health: make(chan string)})
	go router.NewFactory(router.Config{
		Engine:         engine,
		Middlewares:    []ginlib.HandlerFunc{},
		HandlerFactory: router.EndpointHandler,
		ProxyFactory:   proxy.DefaultFactory(logger),
		Logger:         logger,
		RunServer:      server.RunServer,
	}).NewWithContext(ctx).Run(cfg)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := awaitServing(url, 30*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("READY %s\n", url)
	os.Stdout.Sync()
	select {}
}

// freePort asks the kernel for a free loopback port (lura takes a port number, not a listener).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// awaitServing waits until the router answers anything on its port.
func awaitServing(url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/__weft_ready")
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("lura did not serve on %s within %s", url, limit)
}
