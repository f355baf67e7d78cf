package dev.weft.server.http2;

import dev.weft.http.Headers;
import dev.weft.http.h2.Http2Error;
import dev.weft.server.BodySource;
import dev.weft.server.ExecutorModel;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Handlers on a platform pool ({@code executor: platform:N}): an HTTP/2 client that resets its stream while the
 * handler runs, which then still returns a streamed answer (a relay whose backend's head came just before the reset),
 * has that answer's source cancelled, so its backend call stops and what it holds is given back. Before, the pool's
 * cancelled task dropped the answer and nobody cancelled it. The order is made certain, not timed: the handler returns
 * only after it saw the interrupt that the reset caused.
 */
class PooledStreamCancelIT {

    @Test
    void aStreamedAnswerReturnedAfterTheClientResetIsCancelled() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch interruptSeen = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        BodySource source = new BodySource() {
            @Override
            public byte[] next() throws InterruptedException {
                cancelled.await(); // a stream that has nothing to say until it is stopped
                return null;
            }

            @Override
            public Headers trailers() {
                return Headers.EMPTY;
            }

            @Override
            public void cancel() {
                cancelled.countDown();
            }
        };
        try (HttpServer server = HttpServer.builder(r -> {
                    entered.countDown();
                    // as a relay's handler past its backend's head: it returns its streamed answer whatever comes
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (System.nanoTime() - until < 0) {
                        try {
                            Thread.sleep(5);
                        } catch (InterruptedException e) {
                            interruptSeen.countDown();
                            break;
                        }
                    }
                    return ServerResponse.streamed(200, Headers.of("Content-Type", "text/event-stream"), source);
                }).listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .executor(new ExecutorModel.Platform(2)).start();
             RawH2 c = RawH2.open(server.addresses().getFirst())) {
            c.headers(1, true, RawH2.request("GET", "/events"));
            c.flush();
            assertThat(entered.await(10, TimeUnit.SECONDS)).as("the handler runs").isTrue();
            c.rst(1, Http2Error.CANCEL.code());
            c.flush();
            assertThat(interruptSeen.await(10, TimeUnit.SECONDS))
                    .as("the reset interrupted the pool's thread (the server gave up on the handler)").isTrue();
            assertThat(cancelled.await(10, TimeUnit.SECONDS))
                    .as("the streamed answer the handler returned afterwards was cancelled").isTrue();
        }
    }
}
