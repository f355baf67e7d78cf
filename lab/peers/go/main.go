// The `go` model of `weft lab system-a`: seed 000's Go proxy. GET /a/{id}?latency=L calls B, C and D
// at once, one goroutine each, with net/http, and answers {"b":...,"c":...,"d":...}, the body the Weft
// gateway composes. Only the standard library: the lab builds it with the machine's Go, offline.
//
// Usage: system-a-go B_URL C_URL D_URL MAX_CONNECTIONS
// Prints "READY <url>" once it serves; exits when its standard input closes.
// Environment (both optional; `weft lab storm` sets them):
//
//	WEFT_PEER_CA            a PEM file of CA certificates trusted for https backends besides the system's
//	WEFT_PEER_CALL_TIMEOUT  each backend call's budget, dial, TLS handshake and wait for a connection included
//	                        (a Go duration, default 60s)
//
// https backends: HTTP/1.1 (net/http does not try HTTP/2 with its own dialer and TLS config), TLS sessions resumed from
// an LRU client session cache.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

var names = []string{"b", "c", "d"}

type result struct {
	body []byte
	err  error
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: system-a-go B_URL C_URL D_URL MAX_CONNECTIONS")
		os.Exit(2)
	}
	backends := os.Args[1:4]
	maxConns, err := strconv.Atoi(os.Args[4])
	if err != nil || maxConns < 1 {
		fmt.Fprintln(os.Stderr, "MAX_CONNECTIONS must be a positive integer")
		os.Exit(2)
	}
	timeout := 60 * time.Second
	if t := os.Getenv("WEFT_PEER_CALL_TIMEOUT"); t != "" {
		timeout, err = time.ParseDuration(t)
		if err != nil || timeout <= 0 {
			fmt.Fprintln(os.Stderr, "WEFT_PEER_CALL_TIMEOUT must be a positive Go duration such as 1s")
			os.Exit(2)
		}
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if ca := os.Getenv("WEFT_PEER_CA"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil || !roots.AppendCertsFromPEM(pem) {
			fmt.Fprintln(os.Stderr, "WEFT_PEER_CA: no PEM certificate in", ca, err)
			os.Exit(2)
		}
	}
	client := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: roots, ClientSessionCache: tls.NewLRUClientSessionCache(0)},
			MaxIdleConns:        3 * maxConns,
			MaxIdleConnsPerHost: maxConns, // the default of 2 would close and reopen connections under load
			MaxConnsPerHost:     maxConns,
			IdleConnTimeout:     30 * time.Second,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		},
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/a/")
		if id == r.URL.Path || id == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"no route"}`)
			return
		}
		latency := r.URL.Query().Get("latency")
		if latency == "" {
			latency = "0ms"
		}
		results := make([]result, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Add(1)
			go func(i int, name string) {
				defer wg.Done()
				results[i] = get(client, backends[i]+"/"+name+"/"+id+"?latency="+latency, name)
			}(i, name)
		}
		wg.Wait()
		var out bytes.Buffer
		out.WriteByte('{')
		for i, name := range names {
			if results[i].err != nil {
				msg, _ := json.Marshal(results[i].err.Error())
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadGateway)
				fmt.Fprintf(w, `{"error":%s}`, msg)
				return
			}
			if i > 0 {
				out.WriteByte(',')
			}
			fmt.Fprintf(&out, "%q:", name)
			if err := json.Compact(&out, results[i].body); err != nil {
				w.WriteHeader(http.StatusBadGateway)
				fmt.Fprintf(w, `{"error":"%s answered something that is not JSON"}`, name)
				return
			}
		}
		out.WriteByte('}')
		w.Header().Set("Content-Type", "application/json")
		w.Write(out.Bytes())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Printf("READY http://%s\n", ln.Addr().String())
	os.Stdout.Sync()
	server := &http.Server{Handler: http.HandlerFunc(handler), ReadHeaderTimeout: 10 * time.Second}
	if err := server.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func get(client *http.Client, url, name string) result {
	resp, err := client.Get(url)
	if err != nil {
		return result{err: fmt.Errorf("%s: %v", name, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 10<<20))
	if err != nil {
		return result{err: fmt.Errorf("%s: %v", name, err)}
	}
	if resp.StatusCode >= 400 {
		return result{err: fmt.Errorf("%s answered %d", name, resp.StatusCode)}
	}
	return result{body: body}
}
