package dev.weft.server;

/**
 * Which threads run the handler: {@code virtual} (one virtual thread per request, the default), or
 * {@code platform:N} (a fixed pool of N platform threads with a bounded queue — the design of the
 * seeds, kept so that a comparison changes only the thread model and not the handler code).
 */
public sealed interface ExecutorModel {
    int MAX_PLATFORM_THREADS = 10_000;

    record Virtual() implements ExecutorModel {
        @Override
        public String toString() {
            return "virtual";
        }
    }

    record Platform(int threads) implements ExecutorModel {
        public Platform {
            if (threads < 1 || threads > MAX_PLATFORM_THREADS) {
                throw new IllegalArgumentException("platform threads must be 1.." + MAX_PLATFORM_THREADS
                        + ", got " + threads);
            }
        }

        @Override
        public String toString() {
            return "platform:" + threads;
        }
    }

    static ExecutorModel parse(String text) {
        String t = text.strip();
        if (t.equals("virtual")) {
            return new Virtual();
        }
        if (t.startsWith("platform:")) {
            try {
                return new Platform(Integer.parseInt(t.substring(9)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("expected platform:N with a number of threads, got '" + text + "'");
            }
        }
        throw new IllegalArgumentException("expected virtual or platform:N (such as platform:200), got '" + text + "'");
    }
}
