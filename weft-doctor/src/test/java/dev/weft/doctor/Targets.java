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

    /**
     * Virtual threads that block (sleep 300 ms) inside class initializers, pinned on JDK 25 too: once weft doctor's
     * recording runs, not at a time counted from READY (attaching takes longer than that on a loaded machine, and a
     * pin before the recording is not seen).
     */
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
            CountDownLatch recording = whenRecording();
            ready();
            recording.await();
            Thread.ofVirtual().name("pinned-1").start(Slow1::touch).join();
            Thread.ofVirtual().name("pinned-2").start(Slow2::touch).join();
            sleepLong();
        }
    }

    /**
     * Exits while weft doctor is attached: half a second into its recording (not at a time counted from READY:
     * on a loaded machine the attach took longer, and the target was gone before it).
     */
    static final class Exit {
        public static void main(String[] args) throws Exception {
            Thread.ofVirtual().start(Targets::sleepLong);
            CountDownLatch recording = whenRecording();
            ready();
            recording.await();
            Thread.sleep(500); // inside the recording's window (5 s), so that it is cut short
            System.exit(0);
        }
    }

    /** A latch opened when a JFR recording (weft doctor's, started through the attach API) runs in this JVM. */
    static CountDownLatch whenRecording() {
        CountDownLatch running = new CountDownLatch(1);
        jdk.jfr.FlightRecorder.addListener(new jdk.jfr.FlightRecorderListener() {
            @Override
            public void recordingStateChanged(jdk.jfr.Recording r) {
                if (r.getState() == jdk.jfr.RecordingState.RUNNING) {
                    running.countDown();
                }
            }
        });
        return running;
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
