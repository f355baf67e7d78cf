package dev.weft.doctor;

import java.time.Duration;
import java.util.List;

/**
 * One {@code jdk.VirtualThreadPinned} event: a virtual thread that blocked while it could not unmount, so
 * its carrier blocked with it.
 *
 * @param reason            why it could not unmount (JDK 24+: "VM call to X.&lt;clinit&gt; on stack", "Native or
 *                          VM frame on stack", ...), or empty
 * @param blockingOperation what it blocked in ("LockSupport.park", ...), or empty
 * @param stack             frames, innermost first
 */
public record Pinned(String thread, String carrier, Duration duration, String reason, String blockingOperation,
                     List<String> stack) {
}
