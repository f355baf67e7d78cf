package dev.weft.server.admission;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** A refusal is a type until its 503 is written; the 503's text is part of the wire and stays as it was. */
class RefusalTest {
    @Test
    void eachRefusalSaysWhatItWas() {
        Refusal.RouteLimit at = new Refusal.RouteLimit("GET /slow", 1, 1, 3, 10_000);
        assertThat(new Refusal.QueueFull(at, 0).message()).isEqualTo("over capacity: 1 requests of GET /slow in flight "
                + "(admission limit 1; 3 of limits.max_concurrent 10000 in flight in all) and 0 waiting (admission.queue)");
        assertThat(new Refusal.WaitedTooLong(at, Duration.ofMillis(20)).message()).isEqualTo("over capacity: 1 requests "
                + "of GET /slow in flight (admission limit 1; 3 of limits.max_concurrent 10000 in flight in all); waited "
                + "20 ms");
        assertThat(new Refusal.OverCapacity(64).message()).isEqualTo("over capacity: 64 requests in flight (max_concurrent)");
        assertThat(new Refusal.Stopping().message()).isEqualTo("server is stopping");
    }

    @Test
    void aFullFixedAdmissionRefusesWithItsCapacity() {
        try (FixedAdmission a = new FixedAdmission(1, Duration.ZERO)) {
            Admission.Ticket first = a.enter(null);
            Admission.Ticket second = a.enter(null);
            assertThat(first.admitted()).isTrue();
            assertThat(second).isEqualTo(new Admission.Refused(new Refusal.OverCapacity(1)));
            first.exit();
        }
    }

    @Test
    void aFixedAdmissionAllocatesNoTicketAndEachTicketIsOneOfTwoKinds() {
        try (FixedAdmission a = new FixedAdmission(2, Duration.ZERO)) {
            Admission.Ticket first = a.enter(null);
            Admission.Decision second = a.tryEnter(null);
            assertThat(second).as("the one admitted ticket of a fixed admission").isSameAs(first);
            String kind = switch (a.tryEnter(null)) {
                case Admission.Admitted admitted -> "admitted";
                case Admission.Refused(Refusal why) -> why.message();
                case Admission.WouldWait w -> "would wait";
            };
            assertThat(kind).isEqualTo("over capacity: 2 requests in flight (max_concurrent)");
            assertThat(a.tryEnter(null)).as("the one refusal of a full fixed admission").isSameAs(a.enter(null));
            first.exit();
            ((Admission.Admitted) second).exit();
            assertThat(a.inFlight()).isZero();
        }
    }

    @Test
    void aFullFixedAdmissionThatWouldWaitSaysSoWithoutWaiting() {
        try (FixedAdmission a = new FixedAdmission(1, Duration.ofSeconds(30))) {
            Admission.Ticket first = a.enter(null);
            assertThat(a.tryEnter(null)).as("only enter() can tell, after a wait of up to max_wait")
                    .isSameAs(Admission.WouldWait.WOULD_WAIT);
            first.exit();
            assertThat(a.tryEnter(null)).isInstanceOf(Admission.Admitted.class);
        }
    }
}
