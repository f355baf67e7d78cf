package dev.weft.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.jul.LevelChangePropagator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine.Option;

import java.util.Locale;

/**
 * The one logging backend of the product: Logback, behind SLF4J 2. Weft's own code logs through
 * {@link System.Logger} (bridged to SLF4J by slf4j-jdk-platform-logging), libraries through SLF4J (Kafka's
 * clients, Micrometer) or java.util.logging (bridged by jul-to-slf4j): all of it ends
 * here, on stderr, as text or as JSON lines. stdout stays for the commands' own output and the access log.
 */
public final class Logging {
    /** The {@code --log-level} and {@code --log-format} options of a long-running command. */
    public static final class Options {
        @Option(names = "--log-level", paramLabel = "LEVEL", defaultValue = "info",
                description = "Weft's own log level: error, warn, info (default), debug, trace. Libraries (Kafka's "
                        + "clients, Micrometer, OpenTelemetry) log warn and above, or LEVEL when it is debug or trace.")
        String level;

        @Option(names = "--log-format", paramLabel = "text|json", defaultValue = "text",
                description = "Logs on stderr as plain text (default) or as JSON lines (one object per event).")
        String format;

        /** Applies the options; throws a {@link UserException} (exit 2) for a bad value. */
        public void apply() {
            Level l = Level.toLevel(level.toUpperCase(Locale.ROOT), null);
            if (l == null || !java.util.List.of("ERROR", "WARN", "INFO", "DEBUG", "TRACE").contains(l.levelStr)
                    || !l.levelStr.equalsIgnoreCase(level)) {
                throw new UserException("--log-level: expected error, warn, info, debug or trace, got '" + level + "'",
                        null, 2);
            }
            boolean json = switch (format.toLowerCase(Locale.ROOT)) {
                case "text" -> false;
                case "json" -> true;
                default -> throw new UserException("--log-format: expected text or json, got '" + format + "'", null, 2);
            };
            configure(l, json);
        }
    }

    private Logging() {
    }

    /** Weft's loggers at {@code level}, libraries at warn (or {@code level} when more verbose than info). */
    public static void configure(Level level, boolean json) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
            return; // another SLF4J backend (a test's): leave it as it is
        }
        ctx.reset();
        LevelChangePropagator jul = new LevelChangePropagator(); // keeps JUL's levels in step: no cost for what is off
        jul.setContext(ctx);
        jul.setResetJUL(true);
        jul.start();
        ctx.addListener(jul);
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
        Encoder<ILoggingEvent> encoder;
        if (json) {
            JsonEncoder e = new JsonEncoder();
            e.setWithSequenceNumber(false);
            e.setWithNanoseconds(false);
            e.setWithContext(false);
            e.setContext(ctx);
            e.start();
            encoder = e;
        } else {
            PatternLayoutEncoder e = new PatternLayoutEncoder();
            e.setPattern("%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n");
            e.setContext(ctx);
            e.start();
            encoder = e;
        }
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(ctx);
        stderr.setName("stderr");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(stderr);
        // libraries: warn, or error when that is asked; as verbose as asked below info
        root.setLevel(Level.INFO.isGreaterOrEqual(level) && !level.equals(Level.INFO) ? level
                : level.isGreaterOrEqual(Level.WARN) ? level : Level.WARN);
        ctx.getLogger("weft").setLevel(level);
        ctx.getLogger("dev.weft").setLevel(level);
    }
}
