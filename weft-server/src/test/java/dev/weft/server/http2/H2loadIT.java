package dev.weft.server.http2;

import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import dev.weft.server.admission.FixedAdmission;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * nghttp2's h2load (a client not our own) keeps exactly {@code max_concurrent_streams} streams open on one connection,
 * opening the next as soon as one ends: none may be refused. (A stream used to give its place back only when its
 * thread ended, after its last frame: a client this quick then saw a few REFUSED_STREAM in every 10,000.) Skipped,
 * saying so, where h2load is not installed (lab/h2/install-h2load.sh). Nothing here asserts speed.
 */
class H2loadIT {
    @Test
    void aClientAtTheStreamLimitIsNeverRefused() throws Exception {
        Path h2load = Path.of("/usr/bin/h2load");
        Assumptions.assumeTrue(Files.isExecutable(h2load), "h2load is not installed (lab/h2/install-h2load.sh)");
        int streams = 32;
        try (HttpServer s = HttpServer.builder(r -> ServerResponse.json(200, "{\"ok\":true}"))
                .admission(new FixedAdmission(10_000, Duration.ofMillis(100)))
                .http2(Http2Limits.DEFAULT.withMaxConcurrentStreams(streams)).start()) {
            int n = 200_000;
            Process p = new ProcessBuilder(h2load.toString(), "-c", "1", "-m", Integer.toString(streams), "-n",
                    Integer.toString(n), "http://127.0.0.1:" + s.addresses().getFirst().getPort() + "/")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
            Matcher m = Pattern.compile("requests: (\\d+) total, (\\d+) started, (\\d+) done, (\\d+) succeeded, "
                    + "(\\d+) failed, (\\d+) errored").matcher(out);
            assertThat(m.find()).as(out).isTrue();
            assertThat(Integer.parseInt(m.group(4))).as(out).isEqualTo(n);
            assertThat(s.http2Metrics().refusedStreams()).as(out).isZero();
            assertThat(s.http2Metrics().connections()).isEqualTo(1);
        }
    }
}
