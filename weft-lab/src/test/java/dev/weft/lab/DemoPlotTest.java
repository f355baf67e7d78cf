package dev.weft.lab;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The demo plot's Little's bound: C / L, drawn from where it falls below the plot's ceiling to the largest L. */
class DemoPlotTest {
    @Test
    void theBoundIsConcurrencyOverLatencyFromTheCeilingToTheLargestLatency() {
        double[][] b = Demo.littleBound(2000, 7500, 1000, 60);
        assertThat(b[0]).hasSize(60);
        assertThat(b[0][0]).isCloseTo(2000 * 1000.0 / 7500, within(1e-9));
        assertThat(b[1][0]).isCloseTo(7500, within(1e-6));
        assertThat(b[0][59]).isCloseTo(1000, within(1e-9));
        assertThat(b[1][59]).isCloseTo(2000, within(1e-9));
        for (int i = 0; i < 60; i++) {
            assertThat(b[0][i] * b[1][i]).as("point %d", i).isCloseTo(2_000_000, within(1e-3));
        }
    }

    @Test
    void noBoundWhereItStaysAboveTheCeilingOrNoLatencyIsAboveZero() {
        assertThat(Demo.littleBound(4800, 1000, 1000, 60)[0]).isEmpty(); // 4,800 req/s at 1 s, above 1,000
        assertThat(Demo.littleBound(2000, 7500, 0, 60)[0]).isEmpty();
    }
}
