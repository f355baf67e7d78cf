package dev.weft.agent;

import acme.app.ThreadsApp;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code threads=} option in child JVMs: {@link ThreadsApp} ({@code acme.app}) makes its threads with
 * {@code new Thread(...)}; named by {@code threads=acme.app.*}, they become virtual threads that keep what the
 * application asked for, and {@code acme.lib}'s stay platform threads.
 */
class ThreadsIT {
    @Test
    void newThreadInANamedPackageMakesAVirtualThreadThatKeepsItsNameHandlerLoaderAndDaemonStatus() throws Exception {
        Map<String, String> f;
        String err;
        try (ChildJvm app = ChildJvm.app("threads=acme.app.*,exclude=kept-*,verbose", ThreadsApp.class)) {
            f = app.facts();
            err = app.stderr();
        }
        assertThat(err).containsPattern("weft agent: acme.app.ThreadsApp: \\d+ new Thread\\(\\.\\.\\.\\) sites make "
                + "virtual threads \\(threads=acme.app.\\*\\)").doesNotContain("internal error", "acme.lib")
                .containsPattern("weft agent:   left alone new Thread\\(ThreadGroup, Runnable, String\\) in "
                        + "acme.app.ThreadsApp.main line \\d+ \\(a ThreadGroup, stack size or no Runnable: kept as a platform thread\\)")
                .contains("weft agent: thread kept-1 left on a platform thread (exclude=kept-*)");
        // the JDK's Thread-N name, the creating thread's context class loader, non-daemon as its creator
        assertThat(f.get("plain.held")).matches("Thread-\\d+ virtual daemon=false");
        assertThat(f.get("plain.ran")).isEqualTo(f.get("plain.held").replace(" daemon=false", "")
                + " loader=main's-loader inherited=acme-tenant");
        assertThat(f).containsEntry("named.caught", "worker-7 virtual: boom").containsEntry("named.calls", "1");
        assertThat(f).containsEntry("daemon", "daemon-1 virtual isDaemon=true,true")
                .containsEntry("daemon.whileAlive", "IllegalThreadStateException");
        assertThat(f).containsEntry("priority", "prio-1 virtual 5");
        // a stack-map frame between NEW and <init> (a ternary in the arguments): the class loads, the site converts
        assertThat(f).containsEntry("ternary", "ternary-a virtual ran a");
        assertThat(f).containsEntry("run.direct", "run-direct virtual ran on main");
        // Thread::run as a method reference too (the JDK's virtual thread would run nothing)
        assertThat(f).containsEntry("run.ref", "run-ref virtual ran on main");
        // made in a group the application made: kept in it, on a platform thread, and said; made by a converted
        // thread (the virtual threads' group): converted
        assertThat(f).containsEntry("in.group", "in-group-1 platform group=acme-tenants")
                .containsEntry("nested", "nested-1 virtual");
        assertThat(err).contains("weft agent: thread in-group-1 left on a platform thread: made in thread group "
                + "acme-tenants (java.lang.ThreadGroup), the application's own, which a virtual thread cannot join");
        // not converted: a ThreadGroup's shape, a name exclude= names, a package threads= does not name
        assertThat(f).containsEntry("grouped", "grouped-1 platform group=acme-group")
                .containsEntry("excluded", "kept-1 platform")
                .containsEntry("lib", "lib-thread platform");
        assertThat(f.get("hook")).matches("Thread-\\d+ virtual");
        // a loader that does not see the helpers: left as it was, named, and the application runs
        assertThat(f).containsEntry("isolated", "isolated-1 platform");
        assertThat(err).contains("weft agent: acme.app.isolated.Isolated: its class loader (bundle-loader) does not see "
                + "dev.weft.agent.boot; its new Thread sites are left as they are");
    }

    @Test
    void withoutTheOptionNewThreadStaysAPlatformThread() throws Exception {
        try (ChildJvm app = ChildJvm.app("", ThreadsApp.class)) {
            Map<String, String> f = app.facts();
            assertThat(f.get("plain.held")).matches("Thread-\\d+ platform daemon=false");
            assertThat(f).containsEntry("named.caught", "worker-7 platform: boom")
                    .containsEntry("ternary", "ternary-a platform ran a")
                    .containsEntry("daemon.whileAlive", "IllegalThreadStateException");
            assertThat(app.stderr()).doesNotContain("new Thread");
        }
    }

    @Test
    void anExcludedClassKeepsItsPlatformThreads() throws Exception {
        try (ChildJvm app = ChildJvm.app("threads=acme.*,exclude=acme.app.*,verbose", ThreadsApp.class)) {
            Map<String, String> f = app.facts();
            assertThat(f.get("plain.held")).matches("Thread-\\d+ platform daemon=false");
            // acme.lib is named by threads=acme.* and not excluded
            assertThat(f).containsEntry("lib", "lib-thread virtual");
            assertThat(app.stderr()).contains("weft agent: acme.lib.Spawner: 1 new Thread(...) site makes virtual threads "
                    + "(threads=acme.*)").doesNotContain("acme.app.ThreadsApp:")
                    // verbose: each site, with its method and line
                    .contains("weft agent:   converted new Thread(Runnable, String) in acme.lib.Spawner.make line 9");
        }
    }

    @Test
    void anUncaughtExceptionReachesItsHandlerBeforeTheJvmMayExit() throws Exception {
        try (ChildJvm app = ChildJvm.app("threads=acme.app.*", ThreadsApp.class, "uncaught")) {
            // the handler's System.exit(3) decides the exit; the JVM did not start to exit while it worked
            assertThat(app.exit()).as(app.stderr()).isEqualTo(3);
            app.drained();
            assertThat(app.stdout()).containsExactly("handler called: failing late boom",
                    "handler done; JVM exiting meanwhile: false");
        }
    }

    @Test
    void aThreadStartedThroughAMethodReferenceKeepsTheJvmAliveFromStart() throws Exception {
        // one carrier, held by a spinning virtual thread until main has looked: the converted thread cannot have
        // counted itself at its first instruction
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "threads=acme.app.*",
                List.of("-Djdk.virtualThreadScheduler.parallelism=1"), ChildJvm.testClasses(),
                ThreadsApp.class.getName(), List.of("startref"))) {
            assertThat(app.exit()).as(app.stderr()).isZero();
            app.drained();
            assertThat(app.stdout()).containsExactly("keep-alive before the worker ran: true",
                    "worker finished after main");
        }
    }

    @Test
    void aPoolsFactoryInANamedClassIsLeftToThePoolsConversion() throws Exception {
        try (ChildJvm app = ChildJvm.app("threads=acme.app.*,exclude=acme.app.ThreadsApp$KeptPool", ThreadsApp.class,
                "pools")) {
            Map<String, String> f = app.facts();
            // never converted: a ScheduledThreadPoolExecutor's threads keep the timer
            assertThat(f).containsEntry("scheduled", "sched-1 platform");
            // converted by the pools' conversion: its MBean, its line
            assertThat(f).containsEntry("fixed", "fixed-1 virtual").containsEntry("fixed.mbean", "true");
            assertThat(app.stderr()).contains("weft agent: fixed-N (java.util.concurrent.ThreadPoolExecutor): virtual "
                    + "threads");
            // exclude= by the executor's class
            assertThat(f).containsEntry("kept", "kept-pool-1 platform");
            // a factory that threw: the next new Thread on that thread is converted again
            assertThat(f).containsEntry("failing", "no thread").containsEntry("after.failing", "after-1 virtual");
        }
    }

    @Test
    void aConvertedNonDaemonThreadKeepsTheJvmAliveUntilItEndsAndADaemonOneDoesNot() throws Exception {
        try (ChildJvm app = ChildJvm.app("threads=acme.app.*", ThreadsApp.class, "keepalive")) {
            // main has returned; the worker is virtual, asked to be non-daemon, and the JVM is still here
            assertThat(app.awaitLine("main ended")).isEqualTo("main ended; worker keeper virtual daemon asked false");
            assertThat(app.process.isAlive()).isTrue();
            app.send("go");
            assertThat(app.awaitLine("worker finished")).isEqualTo("worker finished after go");
            // the daemon thread still waits, forever: it does not keep the JVM alive
            assertThat(app.exit()).isZero();
        }
    }
}
