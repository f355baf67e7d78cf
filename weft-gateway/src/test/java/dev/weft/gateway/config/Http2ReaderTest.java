package dev.weft.gateway.config;

import dev.weft.config.ConfigException;
import dev.weft.server.http2.Http2Limits;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The top-level {@code http2:} block: defaults, each key, {@code off}, and errors with their place. */
class Http2ReaderTest {
    private static final String ROUTES = "routes:\n  - get: /x\n    calls:\n      a: {url: \"http://127.0.0.1:9/a\"}\n";

    private static Http2Limits http2(String block) throws ConfigException {
        return GatewayConfigLoader.parse("gw.yaml", block + ROUTES).http2();
    }

    @Test
    void onByDefault() throws ConfigException {
        assertThat(http2("")).isEqualTo(Http2Limits.DEFAULT);
        assertThat(Http2Limits.DEFAULT.enabled()).isTrue();
        assertThat(Http2Limits.DEFAULT.maxConcurrentStreams()).isEqualTo(250);
    }

    @Test
    void offServesHttp11Only() throws ConfigException {
        assertThat(http2("http2: off\n").enabled()).isFalse();
        assertThat(http2("http2: {enabled: false}\n").enabled()).isFalse();
    }

    @Test
    void eachKeyIsRead() throws ConfigException {
        Http2Limits l = http2("""
                http2:
                  max_concurrent_streams: 5000
                  max_header_list_size: 32KiB
                  header_table_size: 8KiB
                  initial_window_size: 1MiB
                  connection_window_size: 16MiB
                  max_frame_size: 32KiB
                  settings_per_second: 5
                  pings_per_second: 6
                  resets_per_second: 7
                  empty_data_per_second: 8
                  continuations_per_second: 9
                  priorities_per_second: 10
                  window_updates_per_second: 11
                  unknown_frames_per_second: 12
                  write_timeout: 5s
                """);
        assertThat(l).isEqualTo(new Http2Limits(true, false, false, 5000, 32 * 1024, 8 * 1024, 1024 * 1024, 16 * 1024 * 1024,
                32 * 1024, 5, 6, 7, 8, 9, 10, 11, 12, Duration.ofSeconds(5)));
    }

    @Test
    void h2cOnlyIsReadAndOffByDefault() throws Exception {
        assertThat(http2("http2: {h2c_only: true}\n").h2cOnly()).isTrue();
        assertThat(http2("http2: {max_concurrent_streams: 9}\n").h2cOnly()).isFalse();
    }

    @Test
    void badValuesAreNamedWithTheirPlace() {
        assertThatThrownBy(() -> http2("http2: {max_concurrent_streams: 0}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:1");
        assertThatThrownBy(() -> http2("http2: {max_frame_size: 1KiB}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("max_frame_size");
        assertThatThrownBy(() -> http2("http2: {max_streams: 10}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("max_streams");
        assertThatThrownBy(() -> http2("http2: {h2c_only: true, upgrade: true}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("exclude each other");
        assertThatThrownBy(() -> http2("http2: sometimes\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("expected on, off");
    }
}
