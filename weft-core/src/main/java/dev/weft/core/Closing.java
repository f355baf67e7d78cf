package dev.weft.core;

/** Closing what is being given up anyway. */
public final class Closing {
    private Closing() {
    }

    /**
     * Closes {@code c} (nothing when null) and ignores what its {@code close()} throws: for resources released on
     * the way out of a failure or a stop, where the first error is the one to report. An {@link Error} still
     * propagates.
     */
    public static void quietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // giving it up anyway
        }
    }
}
