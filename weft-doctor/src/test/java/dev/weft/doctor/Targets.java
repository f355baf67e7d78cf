package dev.weft.doctor;

import java.util.concurrent.CountDownLatch;

/** Plain JDK programs that weft doctor examines in the tests, each in a child JVM started without flags. */
final class Targets {
    private Targets() {
    }

    static volatile long sink;

    /** 1,000 virtual threads asleep, one spinning in {@link #spinInAMethodOfItsOwn()}. */
    static final class Spin {
        public static void main(String[] args) throws Exception {
            CountDownLatch asleep = new CountDownLatch(1000);
            for (int i = 0; i < 1000; i++) {
                Thread.ofVirtual().name("sleeper-" + i).start(() -> {
                    asleep.countDown();
                    sleepLong();
                });
            }
            asleep.await();
            Thread.ofVirtual().name("spinner").start(Spin::spinInAMethodOfItsOwn);
            ready();
            sleepLong();
        }

        static void spinInAMethodOfItsOwn() {
            long x = 0;
            while (true) {
                x += System.nanoTime() & 7;
                sink = x;
            }
        }
    }

    /** Virtual threads that block (sleep 300 ms) inside class initializers: pinned on JDK 25 too. */
    static final class Pin {
        static final class Slow1 {
            static {
                sleep(300);
            }

            static void touch() {
            }
        }

        static final class Slow2 {
            static {
                sleep(300);
            }

            static void touch() {
            }
        }

        public static void main(String[] args) throws Exception {
            ready();
            Thread.sleep(1000);
            Thread.ofVirtual().name("pinned-1").start(Slow1::touch).join();
            Thread.sleep(1000);
            Thread.ofVirtual().name("pinned-2").start(Slow2::touch).join();
            sleepLong();
        }
    }

    /** Exits 1.5 s after it is ready. */
    static final class Exit {
        public static void main(String[] args) throws Exception {
            Thread.ofVirtual().start(Targets::sleepLong);
            ready();
            Thread.sleep(1500);
            System.exit(0);
        }
    }

    static void ready() {
        System.out.println("READY");
        System.out.flush();
    }

    static void sleepLong() {
        sleep(600_000);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
