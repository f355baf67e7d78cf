package dev.weft.server;

import dev.weft.os.TcpTable;
import dev.weft.server.admission.AdaptiveAdmission;
import dev.weft.server.admission.Admission;
import dev.weft.server.admission.AdmissionPolicy;
import dev.weft.server.admission.FixedAdmission;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The front door ({@link Door}): plain HTTP/1.1 read on one selector thread when the admission asks for it.
 * Real servers on loopback, raw sockets. {@link ServerConformanceIT} runs its whole table of raw requests through
 * the door as well, and {@link HeaderTimeoutIT} its trickled head; this class holds what only the door does:
 * refusals answered on its thread, requests that wait in the admission's queue without holding it up,
 * pipelining, drain, a connection closed while the door admits its request, and a differential fuzz against the
 * blocking path.
 */
class DoorIT {
    private static final String H = "Host: x\r\n";

    /** An adaptive admission keyed by path, each key's limit bounded by {@code routes}, that asks for the door. */
    static Admission admission(Map<String, Integer> routes, int queue, Duration maxWait) {
        // the door raises its thread where it may, and never lowers the other threads of this JVM (the tests' own):
        // that fallback is DoorFallbackIT's, in a JVM of its own
        AdmissionPolicy p = new AdmissionPolicy(true, 1, 1, queue, maxWait, Duration.ofSeconds(10),
                AdmissionPolicy.DEFAULT_CPU_BUSY, routes, AdmissionPolicy.DEFAULT_DOOR_NICE,
                AdmissionPolicy.DoorFallback.NONE);
        return new AdaptiveAdmission(p, new FixedAdmission(10_000, Duration.ZERO), ServerRequest::path, k -> { });
    }

    private static HttpServer start(HttpHandler handler, Admission admission, HttpServer.Refusals refusals,
                                    ServerLimits limits) throws IOException {
        return HttpServer.builder(handler).limits(limits).admission(admission).refusals(refusals).start();
    }

    /** Answers {@code {"path": ...}}; a request for {@code held} is counted and waits (up to 10 s) for {@code release}. */
    private static HttpHandler holding(String held, CountDownLatch release, AtomicInteger calls) {
        return r -> {
            if (r.path().equals(held)) {
                calls.incrementAndGet();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return ServerResponse.json(200, "{\"path\":\"" + r.path() + "\"}");
        };
    }

    private static Socket connect(HttpServer s) throws IOException {
        Socket c = new Socket(InetAddress.getLoopbackAddress(), s.addresses().getFirst().getPort());
        c.setSoTimeout(10_000);
        return c;
    }

    private static void send(Socket s, String request) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(request.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /**
     * The HTTP/2 client preface is a connection's first bytes or nothing (RFC 9113 section 3.4): after a request the
     * door served, {@code PRI * HTTP/2.0} is an HTTP/1.1 request line with version 2.0, answered 505 over HTTP/1.1,
     * never a switch of the connection to HTTP/2 (that would let bytes a front proxy forwards as HTTP/1.1 speak
     * HTTP/2 to the server behind it).
     */
    @Test
    void thePrefaceAfterARequestTheDoorServedIsAnsweredAsHttp11NotSwitchedToHttp2() throws Exception {
        try (HttpServer server = start(r -> ServerResponse.json(200, "{\"path\":\"" + r.path() + "\"}"),
                admission(Map.of(), 100, Duration.ofSeconds(1)), null, ServerLimits.DEFAULT);
             Socket c = connect(server)) {
            send(c, "GET /first HTTP/1.1\r\n" + H + "\r\n");
            assertThat(ServerConformanceIT.Answer.read(c.getInputStream()).status()).isEqualTo(200);
            send(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
            ServerConformanceIT.Answer a = ServerConformanceIT.Answer.read(c.getInputStream());
            assertThat(a.status()).as("an HTTP/1.1 answer, not an HTTP/2 SETTINGS frame").isEqualTo(505);
        }
    }

    @Test
    void aRefusedRequestIsAnswered503OnTheDoorsThreadAndReachesNoHandler() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger slowCalls = new AtomicInteger();
        ConcurrentLinkedQueue<String> refusedOn = new ConcurrentLinkedQueue<>();
        HttpHandler handler = holding("/slow", release, slowCalls);
        // /slow may have one request in flight and none waiting
        try (HttpServer server = start(handler, admission(Map.of("/slow", 1), 0, Duration.ZERO),
                (r, remote, answer, by) -> refusedOn.add(by + " on " + Thread.currentThread().getName()),
                ServerLimits.DEFAULT);
             Socket first = connect(server); Socket second = connect(server)) {
            send(first, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> slowCalls.get() > 0);
            assertThat(slowCalls.get()).as("the first /slow runs").isEqualTo(1);

            send(second, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            ServerConformanceIT.Answer refused = ServerConformanceIT.Answer.read(second.getInputStream());
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.text()).containsIgnoringCase("Retry-After: 1");
            assertThat(refused.body()).contains("\"error\"").contains("over capacity");
            assertThat(slowCalls.get()).as("the refused request reached no handler").isEqualTo(1);
            assertThat(refusedOn).containsExactly("admission on weft-door");

            // the refused request's connection stays open, and another route is served on it meanwhile
            send(second, "GET /fast HTTP/1.1\r\n" + H + "\r\n");
            ServerConformanceIT.Answer fast = ServerConformanceIT.Answer.read(second.getInputStream());
            assertThat(fast.status()).isEqualTo(200);
            assertThat(fast.body()).contains("/fast");

            release.countDown();
            ServerConformanceIT.Answer slow = ServerConformanceIT.Answer.read(first.getInputStream());
            assertThat(slow.status()).isEqualTo(200);
            assertThat(slow.body()).contains("/slow");
        }
    }

    @Test
    void aConnectionOpenedWhileEveryCarrierIsBusyGetsItsRefusalMeanwhile() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger slowCalls = new AtomicInteger();
        try (HttpServer server = start(holding("/slow", release, slowCalls),
                admission(Map.of("/slow", 1), 0, Duration.ZERO), null, ServerLimits.DEFAULT);
             Socket first = connect(server)) {
            send(first, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> slowCalls.get() > 0);
            assertThat(slowCalls.get()).as("the first /slow runs").isEqualTo(1);

            // no virtual thread runs for 5 s: neither an accept loop nor the new connection's own thread could
            List<Thread> spinners = dev.weft.os.Spinners.occupyEveryCarrier(Duration.ofSeconds(5));
            try (Socket late = connect(server)) {
                send(late, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
                ServerConformanceIT.Answer refused = ServerConformanceIT.Answer.read(late.getInputStream());
                boolean carriersStillBusy = spinners.stream().anyMatch(Thread::isAlive);
                assertThat(refused.status()).isEqualTo(503);
                assertThat(carriersStillBusy).as("answered while every carrier was busy (accepted and read by "
                        + "platform threads)").isTrue();
            } finally {
                for (Thread t : spinners) {
                    t.join();
                }
                release.countDown();
            }
            assertThat(ServerConformanceIT.Answer.read(first.getInputStream()).status()).isEqualTo(200);
        }
    }

    @Test
    void aRequestThatMustWaitForItsPlaceDoesNotHoldUpTheDoor() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger slowCalls = new AtomicInteger();
        HttpHandler handler = holding("/slow", release, slowCalls);
        // one /slow in flight, one more may wait up to 10 s for its place
        AdaptiveAdmission admission = (AdaptiveAdmission) admission(Map.of("/slow", 1), 1, Duration.ofSeconds(10));
        try (HttpServer server = start(handler, admission, null, ServerLimits.DEFAULT);
             Socket first = connect(server); Socket waiting = connect(server); Socket other = connect(server)) {
            send(first, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> slowCalls.get() > 0);
            send(waiting, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            await("the second waits in the queue").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> admission.queued("/slow") == 1);

            // the door is not held up by the waiting request: another connection is answered
            send(other, "GET /fast HTTP/1.1\r\n" + H + "\r\n");
            assertThat(ServerConformanceIT.Answer.read(other.getInputStream()).status()).isEqualTo(200);
            assertThat(slowCalls.get()).isEqualTo(1);

            release.countDown();
            assertThat(ServerConformanceIT.Answer.read(first.getInputStream()).status()).isEqualTo(200);
            ServerConformanceIT.Answer queued = ServerConformanceIT.Answer.read(waiting.getInputStream());
            assertThat(queued.status()).as("the queued request got its place").isEqualTo(200);
            assertThat(slowCalls.get()).isEqualTo(2);
        }
    }

    @Test
    void queuedRequestsOfOneRouteGetTheirPlacesInTheirOrder() throws Exception {
        // the door looks for their places oldest first: each gets its place in turn
        CountDownLatch release = new CountDownLatch(1);
        List<String> entered = java.util.Collections.synchronizedList(new ArrayList<>());
        HttpHandler handler = r -> {
            entered.add(r.query());
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ServerResponse.json(200, "{}");
        };
        AdaptiveAdmission admission = (AdaptiveAdmission) admission(Map.of("/q", 1), 3, Duration.ofSeconds(10));
        try (HttpServer server = start(handler, admission, null,
                ServerLimits.DEFAULT);
             Socket first = connect(server); Socket a = connect(server); Socket b = connect(server);
             Socket c = connect(server)) {
            send(first, "GET /q?0 HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> !entered.isEmpty());
            int sent = 0;
            for (Socket q : List.of(a, b, c)) {
                send(q, "GET /q?" + (q == a ? 1 : q == b ? 2 : 3) + " HTTP/1.1\r\n" + H + "\r\n");
                int n = ++sent;
                await("queued in this order").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> admission.queued("/q") == n);
            }
            assertThat(entered).containsExactly("0");
            release.countDown();
            for (Socket q : List.of(first, a, b, c)) {
                assertThat(ServerConformanceIT.Answer.read(q.getInputStream()).status()).isEqualTo(200);
            }
            assertThat(entered).containsExactly("0", "1", "2", "3");
        }
    }

    @Test
    void aQueuedRequestIsRefusedOnTheDoorsThreadWhenItsWaitEnds() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ConcurrentLinkedQueue<String> refusedOn = new ConcurrentLinkedQueue<>();
        AtomicInteger slowCalls = new AtomicInteger();
        HttpHandler handler = holding("/slow", release, slowCalls);
        AdaptiveAdmission admission = (AdaptiveAdmission) admission(Map.of("/slow", 1), 1, Duration.ofMillis(300));
        // one /slow in flight, one more may wait 300 ms
        try (HttpServer server = start(handler, admission,
                (r, remote, answer, by) -> refusedOn.add(by + " on " + Thread.currentThread().getName()),
                ServerLimits.DEFAULT);
             Socket first = connect(server); Socket waiting = connect(server); Socket third = connect(server)) {
            send(first, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> slowCalls.get() > 0);
            long sent = System.nanoTime();
            send(waiting, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            await("the second waits in the queue").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> admission.queued("/slow") == 1);
            send(third, "GET /slow HTTP/1.1\r\n" + H + "\r\n"); // the queue (1) is full: refused at once
            ServerConformanceIT.Answer full = ServerConformanceIT.Answer.read(third.getInputStream());
            assertThat(full.status()).isEqualTo(503);
            assertThat(full.body()).contains("waiting (admission.queue)");

            ServerConformanceIT.Answer late = ServerConformanceIT.Answer.read(waiting.getInputStream());
            long waited = System.nanoTime() - sent;
            assertThat(late.status()).isEqualTo(503);
            assertThat(late.body()).contains("waited 300 ms");
            assertThat(waited).as("refused after its wait, not before").isGreaterThanOrEqualTo(300_000_000L);
            assertThat(refusedOn).containsExactly("admission on weft-door", "admission on weft-door");
            release.countDown();
            assertThat(ServerConformanceIT.Answer.read(first.getInputStream()).status()).isEqualTo(200);
        }
    }

    @Test
    void pipelinedRequestsThatEachWaitInTheQueueAreRefusedInTurnAndTheDoorGoesOn() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger slowCalls = new AtomicInteger();
        try (HttpServer server = start(holding("/slow", release, slowCalls),
                admission(Map.of("/slow", 1), 1, Duration.ofMillis(200)), null, ServerLimits.DEFAULT);
             Socket first = connect(server); Socket piped = connect(server); Socket other = connect(server)) {
            send(first, "GET /slow HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> slowCalls.get() > 0);
            // the first waits in the queue and is refused at max_wait; the second then waits in its turn
            send(piped, "GET /slow HTTP/1.1\r\n" + H + "\r\nGET /slow HTTP/1.1\r\n" + H + "\r\n");
            InputStream in = piped.getInputStream();
            assertThat(ServerConformanceIT.Answer.read(in).body()).contains("waited 200 ms");
            assertThat(ServerConformanceIT.Answer.read(in).body()).contains("waited 200 ms");
            send(other, "GET /fast HTTP/1.1\r\n" + H + "\r\n");
            assertThat(ServerConformanceIT.Answer.read(other.getInputStream()).status()).isEqualTo(200);
            release.countDown();
            assertThat(ServerConformanceIT.Answer.read(first.getInputStream()).status()).isEqualTo(200);
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrderAndARefusalAmongThemToo() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger holds = new AtomicInteger();
        HttpHandler handler = holding("/hold", release, holds);
        try (HttpServer server = start(handler, admission(Map.of("/hold", 1), 0, Duration.ZERO), null,
                ServerLimits.DEFAULT);
             Socket holder = connect(server); Socket piped = connect(server)) {
            send(holder, "GET /hold HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> holds.get() > 0);
            // three requests in one write: the middle one is refused (/hold is full)
            send(piped, "GET /a HTTP/1.1\r\n" + H + "\r\nGET /hold HTTP/1.1\r\n" + H + "\r\nGET /c HTTP/1.1\r\n" + H
                    + "\r\n");
            InputStream in = piped.getInputStream();
            ServerConformanceIT.Answer a = ServerConformanceIT.Answer.read(in);
            ServerConformanceIT.Answer b = ServerConformanceIT.Answer.read(in);
            ServerConformanceIT.Answer c = ServerConformanceIT.Answer.read(in);
            assertThat(List.of(a.status(), b.status(), c.status())).containsExactly(200, 503, 200);
            assertThat(a.body()).contains("/a");
            assertThat(c.body()).contains("/c");
            release.countDown();
            assertThat(ServerConformanceIT.Answer.read(holder.getInputStream()).status()).isEqualTo(200);
        }
    }

    @Test
    void aRequestSentWhileTheLastOneRunsIsAnsweredAfterIt() throws Exception {
        assumeTrue(TcpTable.available(), "sees the request reach the server in /proc/net/tcp (Linux)");
        // the door reads nothing more of a connection whose request runs: input that comes meanwhile waits in the
        // socket and is answered after that request's answer
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        try (HttpServer server = start(holding("/hold", release, calls), admission(Map.of(), 0, Duration.ZERO), null,
                ServerLimits.DEFAULT);
             Socket c = connect(server)) {
            send(c, "GET /hold HTTP/1.1\r\n" + H + "\r\n");
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> calls.get() > 0);
            String next = "GET /next HTTP/1.1\r\n" + H + "\r\n";
            send(c, next);
            // it reaches the server while the first one runs and waits there: every byte of it in the server
            // socket's receive queue, none read by the door (a door that read it would leave the queue empty)
            int length = next.getBytes(StandardCharsets.ISO_8859_1).length;
            await("the second request waits unread in the server's socket").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> TcpTable.peerOf(c).map(e -> e.rxQueue() == length).orElse(false));
            release.countDown();
            InputStream in = c.getInputStream();
            ServerConformanceIT.Answer first = ServerConformanceIT.Answer.read(in);
            ServerConformanceIT.Answer second = ServerConformanceIT.Answer.read(in);
            assertThat(List.of(first.status(), second.status())).containsExactly(200, 200);
            assertThat(first.body()).contains("/hold");
            assertThat(second.body()).contains("/next");
            // and the connection goes on
            send(c, "GET /third HTTP/1.1\r\n" + H + "\r\n");
            assertThat(ServerConformanceIT.Answer.read(in).body()).contains("/third");
        }
    }

    /**
     * A handler's header that would split the answer (a CR LF in its value: response splitting) is not written: the
     * codec refuses it and the client gets a 500 instead, through the door and on the blocking path alike, and the
     * connection goes on.
     */
    @Test
    void aHandlersHeaderWithALineBreakIsAnswered500NotWritten() throws Exception {
        HttpHandler handler = r -> r.path().equals("/split")
                ? ServerResponse.json(200, "{}").withHeader("X-Evil", "a\r\nX-Injected: 1")
                : ServerResponse.json(200, "{\"path\":\"" + r.path() + "\"}");
        ServerLimits limits = ServerLimits.DEFAULT;
        try (HttpServer door = start(handler, admission(Map.of(), 0, Duration.ZERO), null, limits);
             HttpServer plain = HttpServer.builder(handler).limits(limits).start()) {
            for (HttpServer server : List.of(door, plain)) {
                try (Socket c = connect(server)) {
                    InputStream in = c.getInputStream();
                    send(c, "GET /split HTTP/1.1\r\n" + H + "\r\n");
                    ServerConformanceIT.Answer a = ServerConformanceIT.Answer.read(in);
                    assertThat(a.status()).as(a.text()).isEqualTo(500);
                    assertThat(a.text()).doesNotContain("X-Injected").doesNotContain("X-Evil");
                    assertThat(a.body()).contains("could not be written").contains("X-Evil");
                    send(c, "GET /after HTTP/1.1\r\n" + H + "\r\n");
                    assertThat(ServerConformanceIT.Answer.read(in).body()).contains("/after");
                }
            }
        }
    }

    /**
     * A handler that throws is answered 500 naming the exception's kind, not its message, which may name what the
     * client must not learn (a backend's address, a file); before, the message went out whole.
     */
    @Test
    void aHandlerThatThrowsIsAnswered500WithoutItsMessage() throws Exception {
        HttpHandler handler = r -> {
            throw new IllegalArgumentException("Illegal character in path: http://10.1.2.3:8443/internal");
        };
        ServerLimits limits = ServerLimits.DEFAULT;
        try (HttpServer door = start(handler, admission(Map.of(), 0, Duration.ZERO), null, limits);
             HttpServer plain = HttpServer.builder(handler).limits(limits).start()) {
            for (HttpServer server : List.of(door, plain)) {
                try (Socket c = connect(server)) {
                    send(c, "GET /x HTTP/1.1\r\n" + H + "\r\n");
                    ServerConformanceIT.Answer a = ServerConformanceIT.Answer.read(c.getInputStream());
                    assertThat(a.status()).as(a.text()).isEqualTo(500);
                    assertThat(a.body()).contains("IllegalArgumentException").doesNotContain("10.1.2.3");
                }
            }
        }
    }

    @Test
    void answersOnOneConnectionComeWholeAndInOrderWhateverTheirSize() throws Exception {
        // an answer larger than the socket takes at once is finished by the door as the client reads it (late), and
        // the connection goes on; before it, many small ones in a row on the same connection
        byte[] big = new byte[4 << 20];
        java.util.Arrays.fill(big, (byte) 'x');
        HttpHandler handler = r -> r.path().equals("/big")
                ? new ServerResponse(200, dev.weft.http.Headers.of("Content-Type", "text/plain"), big)
                : ServerResponse.json(200, "{\"path\":\"" + r.path() + "\"}");
        try (HttpServer server = start(handler, admission(Map.of(), 0, Duration.ZERO), null, ServerLimits.DEFAULT);
             Socket c = connect(server)) {
            InputStream in = c.getInputStream();
            for (int i = 0; i < 200; i++) {
                send(c, "GET /n" + i + " HTTP/1.1\r\n" + H + "\r\n");
                assertThat(ServerConformanceIT.Answer.read(in).body()).isEqualTo("{\"path\":\"/n" + i + "\"}");
            }
            send(c, "GET /big HTTP/1.1\r\n" + H + "\r\n");
            Thread.sleep(300); // the condition under test: the socket's buffers fill; the door writes the rest as they drain
            ServerConformanceIT.Answer a = ServerConformanceIT.Answer.read(in);
            assertThat(a.status()).isEqualTo(200);
            assertThat(a.body().length()).isEqualTo(big.length);
            send(c, "GET /after HTTP/1.1\r\n" + H + "\r\n");
            assertThat(ServerConformanceIT.Answer.read(in).body()).contains("/after");
        }
    }

    @Test
    void drainWaitsForAnAnswerTheDoorIsStillWriting() throws Exception {
        // the handler returns at once, but its 4 MiB answer leaves as the client reads it, 300 ms later: a drain must
        // not close the connection under it (it did, when it waited for the handlers alone)
        byte[] big = new byte[4 << 20];
        java.util.Arrays.fill(big, (byte) 'x');
        CountDownLatch handled = new CountDownLatch(1);
        HttpHandler handler = r -> {
            handled.countDown();
            return new ServerResponse(200, dev.weft.http.Headers.of("Content-Type", "text/plain"), big);
        };
        try (HttpServer server = start(handler, admission(Map.of(), 0, Duration.ZERO), null, ServerLimits.DEFAULT);
             Socket c = connect(server)) {
            send(c, "GET /big HTTP/1.1\r\n" + H + "\r\n");
            assertThat(handled.await(5, TimeUnit.SECONDS)).isTrue();
            java.util.concurrent.CompletableFuture<Boolean> drained = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> server.drain(Duration.ofSeconds(10)));
            Thread.sleep(300); // the condition under test: the answer waits in the door, the drain waits for it
            ServerConformanceIT.Answer a = ServerConformanceIT.Answer.read(c.getInputStream());
            assertThat(a.status()).isEqualTo(200);
            assertThat(a.body().length()).isEqualTo(big.length);
            assertThat(drained.get(10, TimeUnit.SECONDS)).as("every answer written within the drain timeout").isTrue();
        }
    }

    @Test
    void drainClosesTheIdleConnectionsTheDoorHolds() throws Exception {
        try (HttpServer server = start(r -> ServerResponse.json(200, "{}"), admission(Map.of(), 0, Duration.ZERO),
                null, ServerLimits.DEFAULT);
             Socket idle = connect(server)) {
            send(idle, "GET /ok HTTP/1.1\r\n" + H + "\r\n");
            assertThat(ServerConformanceIT.Answer.read(idle.getInputStream()).status()).isEqualTo(200);
            assertThat(server.drain(Duration.ofSeconds(5))).isTrue();
            assertThat(ServerConformanceIT.endOfStream(idle.getInputStream())).as("drain closed the idle connection")
                    .isTrue();
        }
    }

    /**
     * Differential fuzz: random mutations of valid requests, each sent in one write to a server with the door and
     * to one without; both must give the same first status line, or both close without one. Seeded, so a failure
     * names the case that reproduces it.
     */
    @Test
    void theDoorAnswersMutatedRequestsAsTheBlockingPathDoes() throws Exception {
        ServerLimits limits = ServerLimits.builder().maxConcurrent(100).maxHeadBytes(1024).maxBodyBytes(4096)
                .idleTimeout(Duration.ofSeconds(30)).maxConnections(100).drainTimeout(Duration.ofSeconds(1)).build();
        HttpHandler handler = r -> ServerResponse.json(200, "{\"body\":" + r.body().length + "}");
        String[] seeds = {
                "GET /a?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",
                "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
                "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                "GET / HTTP/1.0\r\n\r\n",
                "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX: " + "v".repeat(900) + "\r\n\r\n",
        };
        byte[] alphabet = " \r\n:\t/0aZ\u0000\u007f\u00ff;,-=\"HTTP/1.1".getBytes(StandardCharsets.ISO_8859_1);
        long seed = 20261125L;
        Random random = new Random(seed);
        List<String> differences = new ArrayList<>();
        try (HttpServer blocking = HttpServer.builder(handler).limits(limits).start();
             HttpServer door = start(handler, admission(Map.of(), 0, Duration.ZERO), null, limits)) {
            for (int i = 0; i < 300; i++) {
                byte[] b = seeds[random.nextInt(seeds.length)].getBytes(StandardCharsets.ISO_8859_1);
                ByteArrayOutputStream m = new ByteArrayOutputStream();
                m.write(b, 0, b.length);
                byte[] bytes = m.toByteArray();
                int edits = 1 + random.nextInt(4);
                for (int e = 0; e < edits; e++) {
                    int at = random.nextInt(bytes.length + 1);
                    ByteArrayOutputStream next = new ByteArrayOutputStream();
                    next.write(bytes, 0, at);
                    switch (random.nextInt(3)) {
                        case 0 -> next.write(alphabet[random.nextInt(alphabet.length)]); // insert
                        case 1 -> at = Math.min(bytes.length, at + 1); // delete one
                        default -> { // replace one
                            next.write(alphabet[random.nextInt(alphabet.length)]);
                            at = Math.min(bytes.length, at + 1);
                        }
                    }
                    next.write(bytes, at, bytes.length - at);
                    bytes = next.toByteArray();
                }
                String a = firstLine(blocking, bytes);
                String d = firstLine(door, bytes);
                if (!a.equals(d)) {
                    differences.add("case " + i + " " + new String(bytes, StandardCharsets.ISO_8859_1)
                            .replace("\r", "\\r").replace("\n", "\\n") + ": blocking '" + a + "', door '" + d + "'");
                }
            }
            assertThat(differences).as("seed %d", seed).isEmpty();
            // and the door still serves
            try (Socket s = connect(door)) {
                send(s, "GET /after HTTP/1.1\r\n" + H + "\r\n");
                assertThat(ServerConformanceIT.Answer.read(s.getInputStream()).status()).isEqualTo(200);
            }
        }
    }

    /** The first answer's status line, "closed" when the server closed without one, "silent" after 1 s of nothing. */
    private static String firstLine(HttpServer server, byte[] request) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort())) {
            s.setSoTimeout(1000);
            s.getOutputStream().write(request);
            s.getOutputStream().flush();
            s.shutdownOutput(); // the request ends here: a server waiting for more sees the end of the stream
            InputStream in = s.getInputStream();
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            try {
                int c;
                while ((c = in.read()) >= 0 && c != '\r') {
                    line.write(c);
                }
            } catch (SocketTimeoutException e) {
                return "silent";
            } catch (SocketException reset) {
                return line.size() == 0 ? "closed" : line.toString(StandardCharsets.ISO_8859_1);
            }
            return line.size() == 0 ? "closed" : line.toString(StandardCharsets.ISO_8859_1);
        }
    }

    /** The door's nice as it reported it (NaN until its thread has started), waited for up to 5 s. */
    private static double doorNice(AdaptiveAdmission a) throws InterruptedException {
        try {
            return await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                    .until(a::doorNiceNow, n -> !Double.isNaN(n));
        } catch (org.awaitility.core.ConditionTimeoutException late) {
            return a.doorNiceNow(); // NaN: the caller's assertion says so
        }
    }

    @Test
    void theDoorsThreadRunsAtTheAdmissionsNiceWhereTheProcessMayRaiseIt() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/thread-self")),
                "thread priorities are set on Linux only");
        int process = dev.weft.os.ThreadNice.current();
        AdaptiveAdmission raised = (AdaptiveAdmission) admission(Map.of(), 0, Duration.ZERO);
        AdmissionPolicy leave = new AdmissionPolicy(true, 1, 1, 0, Duration.ZERO, Duration.ofSeconds(10), 0.8, Map.of(), 0,
                AdmissionPolicy.DoorFallback.NONE);
        AdaptiveAdmission left = new AdaptiveAdmission(leave, new FixedAdmission(10_000, Duration.ZERO), ServerRequest::path,
                k -> { });
        try (HttpServer a = start(r -> ServerResponse.json(200, "{}"), raised, null, ServerLimits.DEFAULT);
             HttpServer b = start(r -> ServerResponse.json(200, "{}"), left, null, ServerLimits.DEFAULT)) {
            int want = AdmissionPolicy.DEFAULT_DOOR_NICE;
            boolean may = dev.weft.os.ThreadNice.mayRaiseTo(want);
            assertThat(doorNice(raised)).as("door_nice %d, the process at %d, may raise %s", want, process, may)
                    .isEqualTo(may ? Math.min(want, process) : process);
            assertThat(doorNice(left)).as("door_nice 0 leaves the door at the process's").isEqualTo(process);
            assertThat(raised.doorLeadNow()).as("its lead over the other threads")
                    .isEqualTo(may ? process - Math.min(want, process) : 0);
            assertThat(left.doorLeadNow()).isZero();
        }
    }

    /**
     * An admission that, asked about {@code /closing}, closes the whole server (its listener closes every socket, as
     * its idle or header sweep closes one) before it answers: the close lands on the door's thread between reading a
     * head and starting its request, where the sweep can land when a keep-alive connection is reused just as its
     * {@code idle_timeout} runs out.
     */
    private static final class ClosingOnAsk implements Admission {
        final AdaptiveAdmission inner;
        final java.util.concurrent.atomic.AtomicReference<HttpServer> server = new java.util.concurrent.atomic.AtomicReference<>();
        final boolean queueIt;

        ClosingOnAsk(AdaptiveAdmission inner, boolean queueIt) {
            this.inner = inner;
            this.queueIt = queueIt;
        }

        private void closeServer() {
            Thread closer = Thread.ofPlatform().start(() -> server.get().close());
            try {
                closer.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public Ticket enter(dev.weft.server.ServerRequest r) {
            return inner.enter(r);
        }

        @Override
        public Decision tryEnter(dev.weft.server.ServerRequest r) {
            Decision t = inner.tryEnter(r);
            if (r.path().equals("/closing") && !queueIt) {
                closeServer();
            }
            return t;
        }

        @Override
        public Queued queue(dev.weft.server.ServerRequest r) {
            Queued q = inner.queue(r);
            if (r.path().equals("/closing") && queueIt) {
                closeServer();
            }
            return q;
        }

        @Override
        public boolean door() {
            return true;
        }

        @Override
        public int inFlight() {
            return inner.inFlight();
        }

        @Override
        public long shed() {
            return inner.shed();
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    /**
     * A custom admission for the front door that answers null where a decision is due (null was its "would wait"
     * before {@link Admission.WouldWait}): from {@code tryEnter}, or, queued, from its queue's {@code expire}. Its
     * {@code enter} admits every request.
     */
    private static final class NullAnswering implements Admission {
        final boolean fromExpire;
        final AtomicInteger entered = new AtomicInteger();
        final AtomicInteger inFlight = new AtomicInteger();

        NullAnswering(boolean fromExpire) {
            this.fromExpire = fromExpire;
        }

        @Override
        public Ticket enter(ServerRequest r) {
            entered.incrementAndGet();
            inFlight.incrementAndGet();
            return (Admitted) inFlight::decrementAndGet;
        }

        @Override
        public Decision tryEnter(ServerRequest r) {
            return fromExpire ? WouldWait.WOULD_WAIT : null;
        }

        @Override
        public Queued queue(ServerRequest r) {
            if (!fromExpire) {
                return null;
            }
            long deadline = System.nanoTime(); // due at once: the door expires it at its first look
            return new Queued() {
                @Override
                public long deadline() {
                    return deadline;
                }

                @Override
                public Decision poll() {
                    return WouldWait.WOULD_WAIT;
                }

                @Override
                public Refused expire() {
                    return null;
                }

                @Override
                public void leave() {
                }
            };
        }

        @Override
        public boolean door() {
            return true;
        }

        @Override
        public int inFlight() {
            return inFlight.get();
        }

        @Override
        public long shed() {
            return 0;
        }
    }

    @Test
    void aNullFromACustomAdmissionsTryEnterIsTakenAsWouldWaitAndEnterAdmits() throws Exception {
        nullAnswerIsServed(new NullAnswering(false));
    }

    @Test
    void aNullFromACustomAdmissionsQueueExpireIsTakenAsWouldWaitAndEnterAdmits() throws Exception {
        nullAnswerIsServed(new NullAnswering(true));
    }

    /**
     * Before: a null from {@code tryEnter} reached the door's switch, whose NullPointerException closed the connection
     * unanswered (and logged a warning per request); a null from {@code expire} left the connection unread and
     * unanswered until the idle sweep.
     */
    private static void nullAnswerIsServed(NullAnswering admission) throws Exception {
        try (HttpServer server = start(r -> ServerResponse.json(200, "{\"path\":\"" + r.path() + "\"}"), admission,
                null, ServerLimits.DEFAULT); Socket c = connect(server)) {
            for (String path : List.of("/first", "/second")) { // the connection serves on
                send(c, "GET " + path + " HTTP/1.1\r\n" + H + "\r\n");
                ServerConformanceIT.Answer a = ServerConformanceIT.Answer.read(c.getInputStream());
                assertThat(a.status()).as(a.text()).isEqualTo(200);
                assertThat(a.body()).contains(path);
            }
            assertThat(admission.entered.get()).as("enter() decided each request").isEqualTo(2);
            awaitZero(admission::inFlight, "admitted requests not done");
        }
    }

    private static void awaitZero(java.util.function.IntSupplier n, String what) throws InterruptedException {
        await(what).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> n.getAsInt() == 0);
    }

    @Test
    void aConnectionClosedAfterItsRequestWasAdmittedGivesThePlaceBack() throws Exception {
        ClosingOnAsk admission = new ClosingOnAsk((AdaptiveAdmission) admission(Map.of("/closing", 5), 0, Duration.ZERO),
                false);
        AtomicInteger calls = new AtomicInteger();
        try (HttpServer server = start(holding("/none", new CountDownLatch(0), calls), admission, null,
                ServerLimits.DEFAULT); Socket c = connect(server)) {
            admission.server.set(server);
            send(c, "GET /closing HTTP/1.1\r\n" + H + "\r\n");
            assertThat(c.getInputStream().read()).as("closed with no answer").isEqualTo(-1);
            // before: the admitted place stayed taken for good (1 in flight of the route's limit, and of the ceiling)
            awaitZero(() -> admission.inner.inFlight("/closing"), "the route's requests in flight");
            awaitZero(admission::inFlight, "requests in flight under the ceiling");
        }
    }

    @Test
    void aConnectionClosedAsItsRequestJoinsTheQueueLeavesTheQueue() throws Exception {
        ClosingOnAsk admission = new ClosingOnAsk((AdaptiveAdmission) admission(Map.of("/closing", 1), 1,
                Duration.ofSeconds(10)), true);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        try (HttpServer server = start(holding("/closing", release, calls), admission, null, ServerLimits.DEFAULT);
             Socket first = connect(server); Socket second = connect(server)) {
            admission.server.set(server);
            send(first, "GET /closing HTTP/1.1\r\n" + H + "\r\n"); // takes the route's one place
            await("the first request runs").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> calls.get() > 0);
            assertThat(calls.get()).as("the first /closing runs").isEqualTo(1);
            send(second, "GET /closing HTTP/1.1\r\n" + H + "\r\n"); // queued; the server closes meanwhile
            assertThat(second.getInputStream().read()).as("closed with no answer").isEqualTo(-1);
            // before: its place in the queue stayed taken, and with every place of the queue taken so, every later
            // request of the route was refused at once
            awaitZero(() -> admission.inner.queued("/closing"), "requests waiting in the route's queue");
            release.countDown();
            awaitZero(() -> admission.inner.inFlight("/closing"), "the route's requests in flight");
        }
    }
}
