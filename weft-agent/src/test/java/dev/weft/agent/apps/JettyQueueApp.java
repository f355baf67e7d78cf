package dev.weft.agent.apps;

import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Embedded Jetty 12 with a QueuedThreadPool of 20 threads and a queue of 3, as an application may configure it.
 * Drives the pool's virtual-threads executor (the one the agent gives it, else none) as Jetty does for blocking
 * handlers: fills the 20 turns, queues 3, offers a fourth, frees one turn, then queues 3 more and stops the
 * server. Prints {@code jetty.key=value} facts.
 */
public final class JettyQueueApp {
    private JettyQueueApp() {
    }

    static void print(String key, Object value) {
        System.out.println("jetty." + key + "=" + value);
    }

    static Runnable held(CountDownLatch started, CountDownLatch hold, CountDownLatch done) {
        return () -> {
            started.countDown();
            try {
                hold.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                done.countDown();
            }
        };
    }

    public static void main(String[] args) throws Exception {
        QueuedThreadPool pool = new QueuedThreadPool(20, 8, 60_000, new ArrayBlockingQueue<>(3));
        Server s = new Server(pool);
        ServerConnector c = new ServerConnector(s);
        c.setHost("127.0.0.1");
        c.setPort(0);
        s.addConnector(c);
        s.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                callback.succeeded();
                return true;
            }
        });
        s.start();
        Executor ex = pool.getVirtualThreadsExecutor();
        print("executor", ex != null);
        if (ex == null) {
            s.stop();
            return;
        }
        int bound = pool.getMaxThreads();
        CountDownLatch started = new CountDownLatch(bound);
        CountDownLatch done = new CountDownLatch(bound);
        List<CountDownLatch> holds = new ArrayList<>();
        for (int i = 0; i < bound; i++) {
            CountDownLatch hold = new CountDownLatch(1);
            holds.add(hold);
            ex.execute(held(started, hold, done));
        }
        print("filled", started.await(30, TimeUnit.SECONDS));

        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch ran = new CountDownLatch(3);
        for (int i = 1; i <= 3; i++) {
            String name = "w" + i;
            ex.execute(() -> {
                order.add(name);
                ran.countDown();
            });
        }
        String fourth;
        try {
            ex.execute(() -> order.add("w4"));
            fourth = "accepted";
        } catch (RejectedExecutionException e) {
            fourth = "rejected";
        }
        print("fourth", fourth);
        holds.getFirst().countDown(); // one turn comes free: the waiting run on it, one after another
        print("waitingRan", ran.await(30, TimeUnit.SECONDS));
        print("order", String.join(",", order));

        // the freed turn is taken again: 20 held, three more wait; then the server stops
        CountDownLatch refilled = new CountDownLatch(1);
        CountDownLatch hold = new CountDownLatch(1);
        holds.set(0, hold);
        ex.execute(held(refilled, hold, done));
        print("refilled", refilled.await(30, TimeUnit.SECONDS));
        CountDownLatch ranAfterStop = new CountDownLatch(1);
        AtomicBoolean closed = new AtomicBoolean();
        class Job implements Runnable, Closeable {
            @Override
            public void run() {
                ranAfterStop.countDown();
            }

            @Override
            public void close() {
                closed.set(true);
            }
        }
        for (int i = 0; i < 3; i++) {
            ex.execute(new Job());
        }
        s.stop();
        String afterStop;
        try {
            ex.execute(() -> { });
            afterStop = "accepted";
        } catch (RejectedExecutionException e) {
            afterStop = "rejected";
        }
        print("executeAfterStop", afterStop);
        holds.forEach(CountDownLatch::countDown);
        print("heldEnded", done.await(30, TimeUnit.SECONDS));
        // what must not happen: the queued jobs running once turns come free (the old executor ran them at once)
        print("queuedRanAfterStop", ranAfterStop.await(2, TimeUnit.SECONDS));
        print("queuedClosed", closed.get());

        s.start(); // a restarted pool gets a working executor again
        Executor again = pool.getVirtualThreadsExecutor();
        CountDownLatch ranAgain = new CountDownLatch(1);
        again.execute(ranAgain::countDown);
        print("ranAfterRestart", ranAgain.await(30, TimeUnit.SECONDS));
        s.stop();
    }
}
