package dev.weft.agent;

import dev.weft.agent.advice.AddWorkerFailedAdvice;
import dev.weft.agent.advice.ConnectionPoolAdvice;
import dev.weft.agent.advice.JettyAdvice;
import dev.weft.agent.advice.JettyStopAdvice;
import dev.weft.agent.advice.RejectAdvice;
import dev.weft.agent.advice.ResizeAdvice;
import dev.weft.agent.advice.ThreadFactoryAdvice;
import dev.weft.agent.advice.WorkerAdvice;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.utility.JavaModule;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.instrument.Instrumentation;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;
import static net.bytebuddy.matcher.ElementMatchers.takesNoArguments;

/**
 * Installs the agent on JDK 25+ (called by {@link WeftAgent} once the version is checked): puts the run-time
 * helpers ({@code dev.weft.agent.boot}) on the boot class path, lets {@code java.base} read them, and adds
 * the advice to the executors' classes, retransforming those already loaded.
 */
public final class Installer {
    static final String BOOT_PACKAGE = "dev/weft/agent/boot/";
    private static final String HIKARI = "com.zaxxer.hikari.HikariDataSource";
    private static final String APACHE_POOL = "org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager";
    /** OkHttp 4.x/5.x: its limits bound asynchronous calls only, which enter at {@code enqueue} (Kotlin: enqueue$okhttp). */
    private static final String OKHTTP_DISPATCHER = "okhttp3.Dispatcher";
    private static final String JETTY_POOL = "org.eclipse.jetty.util.thread.QueuedThreadPool";
    private static final String[] EXECUTORS = {"java.util.concurrent.ThreadPoolExecutor",
            "org.apache.tomcat.util.threads.ThreadPoolExecutor"};

    /** Byte Buddy's property, relocated with it by the shade plugin (net.bytebuddy.nexus.disabled). */
    private static final String NEXUS_DISABLED = net.bytebuddy.ByteBuddy.class.getPackageName() + ".nexus.disabled";

    /** Set once the agent is installed in this JVM. */
    static final String ACTIVE_PROPERTY = "dev.weft.agent.active";

    private Installer() {
    }

    public static void install(String args, Instrumentation inst) throws IOException, URISyntaxException {
        AgentOptions options;
        try {
            options = AgentOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("weft agent: not active: " + e.getMessage() + "; the application runs unchanged");
            return;
        }
        // A second -javaagent of this agent (the same jar twice, or two copies) would add a second boot jar and a
        // second set of advice: the first one acts, the second says so and does nothing.
        if (System.getProperties().putIfAbsent(ACTIVE_PROPERTY, "true") != null) {
            System.err.println("weft agent: already active; this second -javaagent (options '" + (args == null ? "" : args)
                    + "') is ignored");
            return;
        }
        // The helpers must be visible from the boot loader before the first transform: the JDK's executor calls them.
        inst.appendToBootstrapClassLoaderSearch(new JarFile(bootJar().toFile()));
        dev.weft.agent.boot.Pools.configure(options.concurrency(), options.excludes(), options.verbose());
        dev.weft.agent.boot.Pools.configurePinned(options.pinnedThreshold().toNanos(),
                options.pinned() == AgentOptions.PinnedCount.OFF);
        Module helpers = dev.weft.agent.boot.Pools.class.getModule();
        inst.redefineModule(Object.class.getModule(), Set.of(helpers), Map.of(), Map.of(), Set.of(), Map.of());

        String[] workers = new String[EXECUTORS.length];
        for (int i = 0; i < EXECUTORS.length; i++) {
            workers[i] = EXECUTORS[i] + "$Worker";
        }
        // Byte Buddy's Nexus (for LoadedTypeInitializers, which this agent does not use) would probe
        // sun.misc.Unsafe and make the JDK print a deprecation warning in the application's output.
        String nexus = NEXUS_DISABLED;
        String before = System.getProperty(nexus);
        System.setProperty(nexus, "true");
        AgentBuilder agent;
        try {
            agent = new AgentBuilder.Default();
        } finally {
            if (before == null) {
                System.clearProperty(nexus);
            } else {
                System.setProperty(nexus, before);
            }
        }
        agent
                .disableClassFormatChanges() // no new fields or methods: another agent may have loaded these first
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                // one class at a time: a class another agent cannot retransform (it added fields at load and would
                // not add them again) fails alone, and is named
                .with(AgentBuilder.RedefinitionStrategy.BatchAllocator.ForFixedSize.ofSize(1))
                .with(new AgentBuilder.RedefinitionStrategy.Listener.Adapter() {
                    @Override
                    public Iterable<? extends List<Class<?>>> onError(int index, List<Class<?>> batch, Throwable throwable,
                                                                       List<Class<?>> types) {
                        for (Class<?> c : batch) {
                            if (c.getName().endsWith("$Worker")) {
                                // the executor's getThreadFactory() hands Worker constructors a converting factory
                                dev.weft.agent.boot.Pools.convertThroughFactory();
                                if (options.verbose()) {
                                    System.err.println("weft agent: " + c.getName() + " was changed by another agent "
                                            + "first (" + throwable + "); converting through getThreadFactory() instead");
                                }
                            } else {
                                System.err.println("weft agent: could not retransform " + c.getName() + " (loaded before "
                                        + "the agent and changed by another agent first: " + throwable + "); its pools stay "
                                        + "on platform threads; put -javaagent:weft-agent.jar before the other agents");
                            }
                        }
                        return List.of();
                    }
                })
                .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
                .ignore(nameStartsWith("dev.weft.agent."))
                .with(new Errors(options.verbose()))
                .type(namedOneOf(workers))
                .transform((builder, type, loader, module, domain) ->
                        builder.visit(Advice.to(WorkerAdvice.class).on(isConstructor())))
                .type(namedOneOf(EXECUTORS))
                .transform((builder, type, loader, module, domain) -> builder
                        .visit(Advice.to(RejectAdvice.class).on(named("reject")))
                        .visit(Advice.to(AddWorkerFailedAdvice.class).on(named("addWorkerFailed")))
                        .visit(Advice.to(ThreadFactoryAdvice.class).on(named("getThreadFactory").and(takesNoArguments())))
                        .visit(Advice.to(ResizeAdvice.class).on(namedOneOf("setCorePoolSize", "setMaximumPoolSize")
                                .and(takesArguments(int.class)))))
                .type(namedOneOf(HIKARI, APACHE_POOL))
                .transform((builder, type, loader, module, domain) -> builder.visit(Advice.to(ConnectionPoolAdvice.class)
                        .on(namedOneOf("getConnection", "lease").and(isPublic()))))
                .type(named(OKHTTP_DISPATCHER))
                .transform((builder, type, loader, module, domain) -> builder.visit(Advice.to(ConnectionPoolAdvice.class)
                        .on(nameStartsWith("enqueue").and(takesArguments(1)))))
                .type(named(JETTY_POOL))
                .transform((builder, type, loader, module, domain) ->
                        builder.visit(Advice.to(JettyAdvice.class).on(named("doStart").and(takesNoArguments())))
                                .visit(Advice.to(JettyStopAdvice.class).on(named("doStop").and(takesNoArguments()))))
                .type(ThreadSites.classes(options))
                .transform((builder, type, loader, module, domain) -> {
                    if (!ThreadSites.seesHelpers(type.getName(), loader)) {
                        return builder;
                    }
                    ThreadSites.readHelpers(inst, module, helpers);
                    return builder.visit(new ThreadSites(ThreadSites.glob(options, type.getName()), options.verbose()));
                })
                .installOn(inst);
        if (options.pinned() == AgentOptions.PinnedCount.START) {
            dev.weft.agent.boot.Pools.countPinnedNow();
        }
        if (options.verbose()) {
            System.err.println("weft agent: active (" + options + ")");
        }
    }

    /** A small jar of the boot helpers, copied out of the agent's own jar. */
    private static Path bootJar() throws IOException, URISyntaxException {
        Path self = Path.of(Installer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path out = Files.createTempFile("weft-agent-boot", ".jar");
        out.toFile().deleteOnExit();
        try (JarFile jar = new JarFile(self.toFile());
             JarOutputStream to = new JarOutputStream(Files.newOutputStream(out))) {
            int n = 0;
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                JarEntry entry = e.nextElement();
                if (entry.getName().startsWith(BOOT_PACKAGE) && entry.getName().endsWith(".class")) {
                    to.putNextEntry(new JarEntry(entry.getName()));
                    try (InputStream in = jar.getInputStream(entry)) {
                        in.transferTo(to);
                    }
                    to.closeEntry();
                    n++;
                }
            }
            if (n == 0) {
                throw new IOException(self + " holds no " + BOOT_PACKAGE + " classes");
            }
        }
        return out;
    }

    /** Reports a class the agent meant to change but could not (the pool then stays on platform threads). */
    private record Errors(boolean verbose) implements AgentBuilder.Listener {
        @Override
        public void onDiscovery(String typeName, ClassLoader classLoader, JavaModule module, boolean loaded) {
        }

        @Override
        public void onTransformation(TypeDescription typeDescription, ClassLoader classLoader, JavaModule module,
                                     boolean loaded, net.bytebuddy.dynamic.DynamicType dynamicType) {
            if (verbose) {
                System.err.println("weft agent: transforming " + typeDescription.getName() + (loaded ? " (loaded before the agent: retransforming)" : ""));
            }
        }

        @Override
        public void onIgnored(TypeDescription typeDescription, ClassLoader classLoader, JavaModule module, boolean loaded) {
        }

        @Override
        public void onError(String typeName, ClassLoader classLoader, JavaModule module, boolean loaded, Throwable throwable) {
            System.err.println("weft agent: could not instrument " + typeName + ": " + throwable);
        }

        @Override
        public void onComplete(String typeName, ClassLoader classLoader, JavaModule module, boolean loaded) {
        }
    }
}
