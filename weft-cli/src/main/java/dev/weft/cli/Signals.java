package dev.weft.cli;

/** SIGHUP handling where the JVM offers it (sun.misc.Signal, in jdk.unsupported); silently absent elsewhere. */
final class Signals {
    private Signals() {
    }

    static void onHangup(Runnable action) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("HUP"), sig -> Thread.ofVirtual().start(action));
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            // no SIGHUP on this platform: reload on file change only
        }
    }
}
