package dev.weft.doctor;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** When a JFR recording of this JVM may start: only with {@link ThisJvm#DESCRIPTOR_RESERVE} descriptors free. */
class ThisJvmTest {
    @ParameterizedTest(name = "limit {0}, open {1}: {2}")
    @CsvSource({
            "-1, -1, ",                                         // the platform does not say: record
            "400, 95, ",
            "400, 368, ",                                       // 32 free: just enough
            "400, 369, 369 of 400 file descriptors are open",
            "400, 400, 400 of 400 file descriptors are open",
            "400, -1, no file descriptor is free (the limit is 400)", // none left to count them with
    })
    void recordsOnlyWithDescriptorsToSpare(long limit, long open, String shortage) {
        String s = ThisJvm.descriptorShortage(limit, open);
        if (shortage == null) {
            assertThat(s).isNull();
        } else {
            assertThat(s).startsWith(shortage).contains("JFR needs a few free");
        }
    }
}
