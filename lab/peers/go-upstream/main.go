// The `go` backends of `weft lab storm --backends go`: slow backends as weft-upstream serves them, written with
// Go's net/http and crypto/tls (issue 13's storm was first measured against a Go HTTPS server). Any GET
// answers {"path":...,"items":[...]} after ?latency= (a Go duration); POST /-/drop closes every connection
// the process holds, as a restart would; GET /-/stats counts the TLS handshakes; POST /-/reset zeroes them.
// Only the standard library: the lab builds it with the machine's Go, offline.
//
// Usage: go-upstream COUNT [CERT_PEM KEY_PEM]
// Listens on COUNT free ports of 127.0.0.1 (HTTPS with the certificate and key, else plain HTTP), prints
// "READY <url>,<url>,..." once it serves, and exits when its standard input closes. Over HTTPS it offers h2 and
// http/1.1 by ALPN, as a Go server started with ListenAndServeTLS does; WEFT_UPSTREAM_H2=0 offers http/1.1 only.
// /-/stats counts the handshakes that chose h2 apart.
package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	handshakes, resumed, failed, h2 atomic.Int64
	connsMu                         sync.Mutex
	conns                           = map[net.Conn]struct{}{}
)

// failures counts the "TLS handshake error" lines net/http logs for failed handshakes.
type failures struct{}

func (failures) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "TLS handshake error") {
		failed.Add(1)
	}
	return len(p), nil
}

func body(path string) []byte {
	var b strings.Builder
	b.WriteString(`{"path":"`)
	b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(path))
	b.WriteString(`","items":[`)
	for i := 1; i <= 3; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%d"}`, i, i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func handler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/-/stats":
		h := handshakes.Load()
		fmt.Fprintf(w, `{"tls":{"handshakes":%d,"full":%d,"resumed":%d,"failed":%d,"h2":%d}}`, h, h-resumed.Load(),
			resumed.Load(), failed.Load(), h2.Load())
	case r.URL.Path == "/-/reset" && r.Method == http.MethodPost:
		handshakes.Store(0)
		resumed.Store(0)
		failed.Store(0)
		h2.Store(0)
		io.WriteString(w, `{"reset":true}`)
	case r.URL.Path == "/-/drop" && r.Method == http.MethodPost:
		connsMu.Lock()
		n := len(conns)
		connsMu.Unlock()
		fmt.Fprintf(w, `{"dropping":%d}`, n)
		w.(http.Flusher).Flush()
		go func() {
			time.Sleep(10 * time.Millisecond) // this answer first
			connsMu.Lock()
			defer connsMu.Unlock()
			for c := range conns {
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetLinger(0) // a reset, as weft-upstream's drop
				}
				c.Close()
			}
		}()
	default:
		latency := time.Duration(0)
		if l := r.URL.Query().Get("latency"); l != "" {
			d, err := time.ParseDuration(l)
			if err != nil || d < 0 || d > time.Minute {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":"latency must be a Go duration of at most 1m"}`)
				return
			}
			latency = d
		}
		time.Sleep(latency)
		w.Write(body(r.URL.Path))
	}
}

// tracked remembers every accepted connection (the raw TCP one, under TLS) for /-/drop.
type tracked struct{ net.Listener }

func (l tracked) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		connsMu.Lock()
		conns[c] = struct{}{}
		connsMu.Unlock()
	}
	return c, err
}

func forget(c net.Conn, s http.ConnState) {
	if s == http.StateClosed || s == http.StateHijacked {
		if tc, ok := c.(*tls.Conn); ok {
			c = tc.NetConn()
		}
		connsMu.Lock()
		delete(conns, c)
		connsMu.Unlock()
	}
}

func main() {
	if len(os.Args) != 2 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go-upstream COUNT [CERT_PEM KEY_PEM]")
		os.Exit(2)
	}
	count, err := strconv.Atoi(os.Args[1])
	if err != nil || count < 1 || count > 16 {
		fmt.Fprintln(os.Stderr, "COUNT must be 1..16")
		os.Exit(2)
	}
	var cfg *tls.Config
	if len(os.Args) == 4 {
		cert, err := tls.LoadX509KeyPair(os.Args[2], os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, "certificate:", err)
			os.Exit(2)
		}
		protos := []string{"h2", "http/1.1"}
		if os.Getenv("WEFT_UPSTREAM_H2") == "0" {
			protos = []string{"http/1.1"}
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos,
			VerifyConnection: func(cs tls.ConnectionState) error {
				handshakes.Add(1)
				if cs.DidResume {
					resumed.Add(1)
				}
				if cs.NegotiatedProtocol == "h2" {
					h2.Add(1)
				}
				return nil
			}}
	}
	var urls []string
	for i := 0; i < count; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var l net.Listener = tracked{ln}
		scheme := "http"
		if cfg != nil {
			l = tls.NewListener(l, cfg)
			scheme = "https"
		}
		urls = append(urls, scheme+"://"+ln.Addr().String())
		server := &http.Server{Handler: http.HandlerFunc(handler), ReadHeaderTimeout: 10 * time.Second,
			ConnState: forget, ErrorLog: log.New(failures{}, "", 0)}
		go server.Serve(l)
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Printf("READY %s\n", strings.Join(urls, ","))
	os.Stdout.Sync()
	select {}
}
