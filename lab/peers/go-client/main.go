// The `go-256` model of `weft lab clients`: seed 002's Go client. N goroutines, each sending its next
// GET as soon as the previous one is answered, with one shared net/http client, for a warm-up and then
// a measured window. Only the standard library: the lab builds it with the machine's Go, offline.
//
// Usage: weft-peer-go-client URL GOROUTINES WARMUP DURATION   (durations as Go parses them: 2s, 500ms)
// Prints "READY go-client" at once, then, at the end, one line per counted request, "ok MICROS" or
// "error REASON" (a request counts when it starts inside the window), and "END".
package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: weft-peer-go-client URL GOROUTINES WARMUP DURATION")
		os.Exit(2)
	}
	url := os.Args[1]
	n, err1 := strconv.Atoi(os.Args[2])
	warmup, err2 := time.ParseDuration(os.Args[3])
	duration, err3 := time.ParseDuration(os.Args[4])
	if err1 != nil || err2 != nil || err3 != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "bad arguments: GOROUTINES must be a positive integer, WARMUP and DURATION Go durations")
		os.Exit(2)
	}
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConns: n, MaxIdleConnsPerHost: n, MaxConnsPerHost: n},
	}
	fmt.Println("READY go-client")
	start := time.Now()
	from := start.Add(warmup)
	end := from.Add(duration)
	lines := make([][]string, n)
	var wg sync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for {
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				line := send(client, url, t0)
				if !t0.Before(from) {
					lines[g] = append(lines[g], line)
				}
			}
		}(g)
	}
	wg.Wait()
	w := bufio.NewWriter(os.Stdout)
	for _, l := range lines {
		for _, x := range l {
			w.WriteString(x)
			w.WriteByte('\n')
		}
	}
	w.WriteString("END\n")
	w.Flush()
}

func send(client *http.Client, url string, t0 time.Time) string {
	resp, err := client.Get(url)
	if err != nil {
		reason := err.Error()
		if i := strings.LastIndex(reason, ": "); i >= 0 {
			reason = reason[i+2:]
		}
		return "error " + strings.ReplaceAll(reason, " ", "-")
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return "error status-" + strconv.Itoa(resp.StatusCode)
	}
	return "ok " + strconv.FormatInt(time.Since(t0).Microseconds(), 10)
}
