package dev.weft.doctor;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * A running HotSpot JVM of the same user, examined through the attach API: the JDK's own local management
 * agent is started in it (nothing to configure in the target, no restart), and its DiagnosticCommand MBean
 * records JFR (execution samples and pinning: {@code JFR.start}/{@code JFR.dump}) and takes JSON thread dumps
 * ({@code Thread.dump_to_file}), written by the target into a temporary folder of ours and read here.
 */
public final class AttachedJvm implements ThreadSource {
    private static final String DCMD = "com.sun.management:type=DiagnosticCommand";
    private static final String[] STRINGS = {String[].class.getName()};

    private final long pid;
    private final int feature;
    private final String version;
    private final VirtualMachine vm;
    private final JMXConnector connector;
    private final MBeanServerConnection mbeans;
    private final ObjectName dcmd;
    private final Path dir;
    private final String recording = "weft-doctor-" + ProcessHandle.current().pid();
    private int dumps;

    private AttachedJvm(long pid, int feature, String version, VirtualMachine vm, JMXConnector connector,
                        Path dir) throws IOException {
        this.pid = pid;
        this.feature = feature;
        this.version = version;
        this.vm = vm;
        this.connector = connector;
        this.mbeans = connector.getMBeanServerConnection();
        this.dir = dir;
        try {
            this.dcmd = new ObjectName(DCMD);
        } catch (javax.management.MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Attaches to {@code pid}.
     *
     * @throws DoctorException exit code 2 when it is no JVM of this user that can be attached, or runs a JDK
     *                         older than 21
     */
    public static AttachedJvm attach(long pid) throws DoctorException {
        if (pid == ProcessHandle.current().pid()) {
            throw new DoctorException(2, "pid " + pid + " is weft doctor itself", null);
        }
        if (ProcessHandle.of(pid).isEmpty()) {
            throw new DoctorException(2, "no process with pid " + pid, null);
        }
        VirtualMachine vm;
        try {
            vm = VirtualMachine.attach(Long.toString(pid));
        } catch (AttachNotSupportedException | IOException e) {
            throw new DoctorException(2, "cannot attach to pid " + pid + ": " + e.getMessage()
                    + " (weft doctor attaches to HotSpot JVMs of the same user that allow attaching)", e);
        }
        try {
            Properties p = vm.getSystemProperties();
            String spec = p.getProperty("java.specification.version", "?");
            int feature = feature(spec);
            String version = p.getProperty("java.runtime.version", spec);
            if (feature < 21) {
                throw new DoctorException(2, "pid " + pid + " runs Java " + version
                        + ": weft doctor needs a JDK 21 or newer target (virtual threads)", null);
            }
            String url = vm.startLocalManagementAgent();
            JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(url));
            return new AttachedJvm(pid, feature, version, vm, c, Files.createTempDirectory("weft-doctor-"));
        } catch (DoctorException e) {
            detach(vm);
            throw e;
        } catch (IOException e) {
            detach(vm);
            throw new DoctorException(2, "cannot examine pid " + pid + ": " + e.getMessage(), e);
        }
    }

    private static int feature(String spec) {
        try {
            return spec.startsWith("1.") ? Integer.parseInt(spec.substring(2)) : Integer.parseInt(spec);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The target's Java feature version (25 for JDK 25). */
    public int feature() {
        return feature;
    }

    @Override
    public ThreadDump dump() throws IOException {
        Path file = dir.resolve("threads-" + (++dumps) + ".json");
        Instant taken = Instant.now();
        dcmd("threadDumpToFile", "-format=json", file.toString());
        try {
            return ThreadDump.read(file, taken);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Override
    public void startRecording(long periodMillis) throws IOException {
        dcmd("jfrStart", "name=" + recording, "settings=none",
                "+" + Jfr.SAMPLE + "#enabled=true", "+" + Jfr.SAMPLE + "#period=" + periodMillis + "ms",
                "+" + Jfr.PINNED + "#enabled=true", "+" + Jfr.PINNED + "#threshold=20ms",
                "+" + Jfr.PINNED + "#stackTrace=true");
    }

    @Override
    public Jfr.Recorded stopRecording() throws IOException {
        Path file = dir.resolve("recording.jfr");
        try {
            dcmd("jfrDump", "name=" + recording, "filename=" + file);
            return Jfr.read(file);
        } finally {
            try {
                dcmd("jfrStop", "name=" + recording);
            } catch (IOException ignored) {
                // the target may be gone; nothing to stop then
            }
            Files.deleteIfExists(file);
        }
    }

    @Override
    public int parallelism() throws IOException {
        String p = vm.getSystemProperties().getProperty("jdk.virtualThreadScheduler.parallelism");
        if (p != null) {
            try {
                return Integer.parseInt(p.strip());
            } catch (NumberFormatException ignored) {
                // fall back to the default, the processors
            }
        }
        return ManagementFactory.newPlatformMXBeanProxy(mbeans, ManagementFactory.OPERATING_SYSTEM_MXBEAN_NAME,
                OperatingSystemMXBean.class).getAvailableProcessors();
    }

    @Override
    public java.util.List<Report.AgentPool> agentPools() throws IOException {
        return AgentPools.read(mbeans);
    }

    @Override
    public void startAgentPinnedCount() throws IOException {
        AgentPools.startPinnedCount(mbeans);
    }

    @Override
    public String describe() {
        return "pid " + pid + " (JDK " + version + ")";
    }

    /** Whether the target still runs. */
    public boolean alive() {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private void dcmd(String operation, String... args) throws IOException {
        try {
            mbeans.invoke(dcmd, operation, new Object[] {args}, STRINGS);
        } catch (javax.management.JMException e) {
            throw new IOException(operation + " failed in pid " + pid + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            connector.close();
        } catch (IOException ignored) {
            // the target may be gone
        }
        detach(vm);
        try (Stream<Path> left = Files.walk(dir)) {
            left.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder; nothing else to do
        }
    }

    private static void detach(VirtualMachine vm) {
        try {
            vm.detach();
        } catch (IOException ignored) {
            // gone already
        }
    }
}
