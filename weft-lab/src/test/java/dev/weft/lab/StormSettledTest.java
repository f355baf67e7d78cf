package dev.weft.lab;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Issue 13's measure in `weft lab storm`: when a window settles under 1% errors, and its rate from then on. */
class StormSettledTest {
    private static StormLab.Phase phase(long[] ok, long[] errors, int drop) {
        return new StormLab.Phase("https", ok, errors, Map.of(), Map.of(), drop);
    }

    @Test
    void settlesAtTheFirstSecondFromWhichEveryLaterOneHasUnderOnePercentErrors() {
        StormLab.Phase p = phase(new long[] {0, 100, 500, 990, 1000, 1000, 1000},
                new long[] {50, 400, 0, 9, 10, 0, 0}, -1);
        // second 2 had no error, but second 4 had 10 of 1,010 (just under 1%) and second 3 9 of 999: all fine
        // from 2 on; second 1 had 400 of 500
        assertThat(p.settled(0, 7)).isEqualTo(2);
        assertThat(p.settledRate(0, 7)).isEqualTo((500 + 990 + 1000 + 1000 + 1000) / 5.0);
    }

    @Test
    void oneBadSecondLateResetsIt() {
        StormLab.Phase p = phase(new long[] {1000, 1000, 1000, 1000, 1000, 1000},
                new long[] {0, 0, 0, 11, 0, 0}, -1); // 11 of 1,011 is over 1%
        assertThat(p.settled(0, 6)).as("only two seconds after the bad one: not enough").isEqualTo(-1);
        assertThat(p.settledRate(0, 6)).isZero();
    }

    @Test
    void aSecondWithoutAnyAnswerIsNotSettledAndEachWindowIsJudgedOnItsOwn() {
        StormLab.Phase p = phase(new long[] {800, 900, 900, 900, 0, 10, 700, 800, 800},
                new long[] {0, 0, 0, 0, 0, 500, 0, 0, 0}, 4);
        assertThat(p.settled(0, 4)).isZero();
        assertThat(p.settledRate(0, 4)).isEqualTo(875.0);
        // after the drop: second 4 answered nothing, second 5 mostly errors; settled from second 6
        assertThat(p.settled(4, 9)).isEqualTo(2);
        assertThat(p.settledRate(4, 9)).isEqualTo((700 + 800 + 800) / 3.0);
    }
}
