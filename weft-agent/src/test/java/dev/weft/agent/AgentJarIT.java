package dev.weft.agent;

import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import static org.assertj.core.api.Assertions.assertThat;

/** The packaged weft-agent.jar: Byte Buddy wholly relocated, nothing the application's copy could meet. */
class AgentJarIT {
    @Test
    void noByteBuddyPathIsLeftUnrelocated() throws Exception {
        try (JarFile jar = new JarFile(ChildJvm.agentJar().toFile())) {
            List<String> names = Collections.list(jar.entries()).stream().map(JarEntry::getName).toList();
            assertThat(names).anyMatch(n -> n.startsWith("dev/weft/agent/shaded/bytebuddy/"));
            assertThat(names).noneMatch(n -> n.contains("net/bytebuddy"));
            // a versioned entry would be ignored without Multi-Release: true, or relocated by nobody with it
            assertThat(names).noneMatch(n -> n.startsWith("META-INF/versions/"));
            assertThat(jar.getManifest().getMainAttributes().getValue("Premain-Class")).isEqualTo("dev.weft.agent.WeftAgent");
        }
    }
}
