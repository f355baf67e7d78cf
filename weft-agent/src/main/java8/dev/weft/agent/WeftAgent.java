package dev.weft.agent;

import java.lang.instrument.Instrumentation;

/**
 * The agent's entry class (Premain-Class and Agent-Class), compiled for release 8 so that any JVM can load
 * it. It reads the running JDK's version before it touches anything else: below 25 (its installer's release;
 * JEP 491 in 24: before it a {@code synchronized} block pins a virtual thread's carrier) it prints one line on stderr and returns, and
 * the application runs as it would without the agent. Only then does it load the installer (release 25)
 * by name. No Throwable leaves it: an agent that cannot act must never stop the application.
 */
public final class WeftAgent {
    /**
     * The oldest feature release the agent acts on. JEP 491 (24) is what makes virtual workers safe; 25 because
     * the installer and helpers are class files of release 25 (the reactor's release; on 24 they would fail
     * with UnsupportedClassVersionError) and 25 is the LTS the project is built and tested on.
     */
    static final int MINIMUM_FEATURE = 25;

    private WeftAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        start(args, inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
        start(args, inst);
    }

    private static void start(String args, Instrumentation inst) {
        try {
            String version = System.getProperty("java.specification.version", "");
            int feature = feature(version);
            if (feature < MINIMUM_FEATURE) {
                System.err.println("weft agent: not active: this JVM is Java " + version + "; the agent needs JDK "
                        + MINIMUM_FEATURE + " or newer (JEP 491, in 24: before it, synchronized pins a virtual thread's carrier; "
                        + "its classes are of release 25); "
                        + "the application runs unchanged");
                return;
            }
            Class.forName("dev.weft.agent.Installer", true, WeftAgent.class.getClassLoader())
                    .getMethod("install", String.class, Instrumentation.class)
                    .invoke(null, args, inst);
        } catch (Throwable t) {
            Throwable cause = t instanceof java.lang.reflect.InvocationTargetException && t.getCause() != null
                    ? t.getCause() : t;
            try {
                System.err.println("weft agent: not active: " + cause + "; the application runs unchanged");
            } catch (Throwable ignored) {
                // nowhere left to say it
            }
        }
    }

    /** "1.8" -> 8, "17" -> 17, "25" -> 25; 0 when unreadable. */
    static int feature(String version) {
        try {
            String v = version.startsWith("1.") ? version.substring(2) : version;
            int dot = v.indexOf('.');
            return Integer.parseInt(dot < 0 ? v : v.substring(0, dot));
        } catch (RuntimeException e) {
            return 0;
        }
    }
}
