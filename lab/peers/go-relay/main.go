// The Go relay of `weft lab relay`: seed 000's sidecar as its team built it. System A sends every call to B, C
// and D over one HTTP/2 connection to this program, which makes the calls (one goroutine per stream) and sends
// the answers back as they come. Go's h2c handler (golang.org/x/net/http2/h2c) serves HTTP/2 without TLS,
// both with prior knowledge and by `Upgrade: h2c` (the JDK's HttpClient needs the latter), in front of
// net/http/httputil.ReverseProxy.
//
// Usage: go-relay MAX_STREAMS PREFIX=URL [PREFIX=URL...]
//   MAX_STREAMS  the HTTP/2 server's SETTINGS_MAX_CONCURRENT_STREAMS (Go's default, 250, would refuse a busy
//                System A's streams: the team raised it)
//   PREFIX=URL   a request whose path starts with PREFIX goes to URL + the rest of its path, its query kept,
//                such as /b/=http://127.0.0.2:9001/b/
// Listens on a free port of 127.0.0.1, prints "READY http://127.0.0.1:PORT" once it serves, and exits when its
// standard input closes. Idle connections kept per backend: WEFT_RELAY_IDLE_PER_HOST (default 1000; Go's
// default of 2 would open and close a connection for most calls).
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

type route struct {
	prefix string
	target *url.URL
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go-relay MAX_STREAMS PREFIX=URL [PREFIX=URL...]")
		os.Exit(2)
	}
	maxStreams, err := strconv.Atoi(os.Args[1])
	if err != nil || maxStreams < 1 || maxStreams > 1000000 {
		fmt.Fprintln(os.Stderr, "MAX_STREAMS must be 1..1000000")
		os.Exit(2)
	}
	idle := 1000
	if v := os.Getenv("WEFT_RELAY_IDLE_PER_HOST"); v != "" {
		if idle, err = strconv.Atoi(v); err != nil || idle < 1 {
			fmt.Fprintln(os.Stderr, "WEFT_RELAY_IDLE_PER_HOST must be a whole number >= 1")
			os.Exit(2)
		}
	}
	var routes []route
	for _, a := range os.Args[2:] {
		p, u, ok := strings.Cut(a, "=")
		target, err := url.Parse(u)
		if !ok || !strings.HasPrefix(p, "/") || err != nil || target.Scheme == "" || target.Host == "" {
			fmt.Fprintln(os.Stderr, "expected PREFIX=URL such as /b/=http://127.0.0.1:9001/b/, got", a)
			os.Exit(2)
		}
		routes = append(routes, route{p, target})
	}
	sort.Slice(routes, func(i, j int) bool { return len(routes[i].prefix) > len(routes[j].prefix) })

	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = idle * len(routes)
	transport.MaxIdleConnsPerHost = idle
	proxy := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(r *httputil.ProxyRequest) {
			for _, rt := range routes {
				if strings.HasPrefix(r.In.URL.Path, rt.prefix) {
					r.Out.URL.Scheme = rt.target.Scheme
					r.Out.URL.Host = rt.target.Host
					r.Out.URL.Path = rt.target.Path + strings.TrimPrefix(r.In.URL.Path, rt.prefix)
					r.Out.URL.RawPath = ""
					r.Out.Host = rt.target.Host
					r.SetXForwarded()
					return
				}
			}
		},
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range routes {
			if strings.HasPrefix(r.URL.Path, rt.prefix) {
				proxy.ServeHTTP(w, r)
				return
			}
		}
		http.Error(w, `{"error":"no route"}`, http.StatusNotFound)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h2s := &http2.Server{MaxConcurrentStreams: uint32(maxStreams)}
	server := &http.Server{Handler: h2c.NewHandler(handler, h2s), ReadHeaderTimeout: 10 * time.Second}
	go server.Serve(ln)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Printf("READY http://%s\n", ln.Addr().String())
	os.Stdout.Sync()
	select {}
}
