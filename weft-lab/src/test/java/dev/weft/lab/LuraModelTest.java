package dev.weft.lab;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weft.lab.peers.GoPeers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The lura model's two seams that need no lura checkout: the body check and the note when none is named. */
class LuraModelTest {
    @Test
    void theSameJsonInAnotherMemberOrderIsTheSameBody() {
        String passedThrough = "{\"b\":{\"path\":\"/b/1\",\"items\":[{\"id\":1,\"name\":\"item-1\"}]},\"c\":{\"path\":\"/c/1\"}}";
        String reEncoded = "{\"b\":{\"items\":[{\"id\":1,\"name\":\"item-1\"}],\"path\":\"/b/1\"},\"c\":{\"path\":\"/c/1\"}}";
        assertTrue(SystemALab.sameJson(passedThrough, reEncoded));
    }

    @Test
    void anotherValueOrOrderInAnArrayOrNotJsonIsAnotherBody() {
        assertFalse(SystemALab.sameJson("{\"b\":{\"path\":\"/b/1\"}}", "{\"b\":{\"path\":\"/b/2\"}}"));
        assertFalse(SystemALab.sameJson("{\"items\":[1,2]}", "{\"items\":[2,1]}"));
        assertFalse(SystemALab.sameJson("{\"b\":1}", "{\"b\":1"));
    }

    @Test
    void withoutACheckoutTheModelIsSkippedWithHowToGetOne() {
        Assumptions.assumeTrue(System.getenv(GoPeers.LURA_SRC) == null,
                () -> "skipped: " + GoPeers.LURA_SRC + " is set here, so the lura peer would be built");
        GoPeers.Unavailable e = assertThrows(GoPeers.Unavailable.class, GoPeers::buildLura);
        assertTrue(e.getMessage().contains("git clone https://github.com/luraproject/lura"), e.getMessage());
        assertTrue(e.getMessage().contains(GoPeers.LURA_SRC), e.getMessage());
    }
}
