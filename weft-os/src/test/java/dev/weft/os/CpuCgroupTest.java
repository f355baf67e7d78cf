package dev.weft.os;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link CpuCgroup} on trees of {@code /proc/self/cgroup} and {@code /sys/fs/cgroup} as the kernel lays them out. */
class CpuCgroupTest {
    @TempDir
    Path root;

    private void write(String path, String text) throws Exception {
        Path p = root.resolve(path);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }

    @Test
    void cgroupV1ReadsTheCpuHierarchy() throws Exception {
        write("proc/self/cgroup", "9:name=systemd:/\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n");
        write("sys/fs/cgroup/cpu/cgroup.procs", "1\n42\n77\n");
        CpuCgroup.Sharing s = CpuCgroup.of(root, 42);
        assertThat(s.cgroup()).isEqualTo("/");
        assertThat(s.alone()).isFalse();
        assertThat(s.detail()).isEqualTo("with 2 other processes");
    }

    @Test
    void cgroupV1WithCpuAndCpuacctTogetherAndAServicesOwnGroup() throws Exception {
        write("proc/self/cgroup", "4:memory:/weft\n3:cpu,cpuacct:/system.slice/weft.service\n");
        write("sys/fs/cgroup/cpu,cpuacct/system.slice/weft.service/cgroup.procs", "42\n");
        CpuCgroup.Sharing s = CpuCgroup.of(root, 42);
        assertThat(s.cgroup()).isEqualTo("/system.slice/weft.service");
        assertThat(s.alone()).isTrue();
    }

    @Test
    void cgroupV2IsAGroupOfItsOwnOnlyWithTheCpuController() throws Exception {
        write("proc/self/cgroup", "0::/system.slice/weft.service\n");
        write("sys/fs/cgroup/system.slice/weft.service/cgroup.procs", "42\n");
        assertThat(CpuCgroup.of(root, 42).alone()).as("no cpu.weight: it shares an enclosing group").isFalse();
        assertThat(CpuCgroup.of(root, 42).detail()).contains("without the cpu controller");
        write("sys/fs/cgroup/system.slice/weft.service/cpu.weight", "100\n");
        assertThat(CpuCgroup.of(root, 42).alone()).isTrue();
        write("sys/fs/cgroup/system.slice/weft.service/cgroup.procs", "42\n43\n");
        assertThat(CpuCgroup.of(root, 42).alone()).isFalse();
        assertThat(CpuCgroup.of(root, 42).detail()).isEqualTo("with 1 other process");
    }

    @Test
    void aContainersNamespacedRootIsItsOwn() throws Exception {
        write("proc/self/cgroup", "0::/\n");
        write("sys/fs/cgroup/cgroup.procs", "1\n");
        write("sys/fs/cgroup/cpu.weight", "100\n");
        assertThat(CpuCgroup.of(root, 1).alone()).as("the JVM as the container's entry point").isTrue();
    }

    @Test
    void theProcessesAncestorsWaitForItAndDoNotShare() throws Exception {
        // docker run --init: tini (1) starts a shell (7) that starts the JVM (42); a sidecar (9) is no ancestor
        write("proc/self/cgroup", "0::/\n");
        write("sys/fs/cgroup/cpu.weight", "100\n");
        write("sys/fs/cgroup/cgroup.procs", "1\n7\n42\n");
        write("proc/42/stat", "42 (java) S 7 42 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 40 0\n");
        write("proc/7/stat", "7 (sh (a) b) S 1 7 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0\n");
        write("proc/1/stat", "1 (tini) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0\n");
        CpuCgroup.Sharing s = CpuCgroup.of(root, 42);
        assertThat(s.alone()).isTrue();
        assertThat(s.detail()).isEqualTo("alone beside its parents sh (a) b (7), tini (1)");
        write("sys/fs/cgroup/cgroup.procs", "1\n7\n9\n42\n");
        write("proc/9/stat", "9 (sidecar) S 1 9 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0\n");
        s = CpuCgroup.of(root, 42);
        assertThat(s.alone()).as("a process beside the JVM, not above it").isFalse();
        assertThat(s.detail()).isEqualTo("with 1 other process beside its parents sh (a) b (7), tini (1)");
    }

    @Test
    void aParentLoopOrAnUnreadableStatEndsTheWalk() throws Exception {
        write("proc/self/cgroup", "0::/\n");
        write("sys/fs/cgroup/cpu.weight", "100\n");
        write("sys/fs/cgroup/cgroup.procs", "5\n6\n42\n");
        write("proc/42/stat", "42 (java) S 5 42 1 0\n");
        write("proc/5/stat", "5 (a) S 6 5 1 0\n");
        write("proc/6/stat", "6 (b) S 5 6 1 0\n"); // 6's parent is 5 again: a crafted loop ends
        assertThat(CpuCgroup.of(root, 42).alone()).isTrue();
        for (String bad : new String[] {"garbage", "5 (a)", "5 (a) S", "5 (a) S x 5", "5 (a) S -1 5", ""}) {
            write("proc/5/stat", bad);
            CpuCgroup.Sharing s = CpuCgroup.of(root, 42);
            assertThat(s.alone()).as("6 is no longer known as an ancestor: " + bad).isFalse();
            assertThat(s.detail()).as(bad).startsWith("with 1 other process beside its parent ").endsWith(" (5)");
        }
    }

    @Test
    void nothingToReadIsNull() {
        assertThat(CpuCgroup.of(root, 42)).isNull();
    }

    @Test
    void thisProcessIsReadWhereItCanBe() {
        CpuCgroup.Sharing s = CpuCgroup.ofThisProcess();
        System.out.println("CpuCgroupTest: this JVM's CPU cgroup " + s + " (null: not readable here)");
        if (s != null) {
            assertThat(s.cgroup()).startsWith("/");
            assertThat(s.detail()).isNotBlank();
        }
    }
}
