package dev.weft.http.h2;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The HTTP/2 frame codec: every frame the writer makes reads back the same; every frame-local rule of RFC 9113
 * section 4 and 6 is refused with the error (and scope) the RFC names; random and mutated bytes never throw anything
 * but the codec's error or EOF, and never make it read more than the frame size allows.
 */
class Http2FrameCodecTest {
    private static final int MAX = 16_384;

    private static Http2Frame readOne(byte[] bytes) throws IOException {
        return new Http2FrameReader(new ByteArrayInputStream(bytes)).read(MAX);
    }

    private static byte[] frame(int type, int flags, int stream, byte[] payload) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Http2FrameWriter.frame(b, type, flags, stream, payload, 0, payload.length);
        return b.toByteArray();
    }

    interface Write {
        void to(ByteArrayOutputStream out) throws IOException;
    }

    static Stream<Arguments> roundTrips() {
        return Stream.of(
                Arguments.of((Write) o -> Http2FrameWriter.data(o, 3, true, new byte[]{1, 2, 3}, 0, 3),
                        "Data[streamId=3, endStream=true"),
                Arguments.of((Write) o -> Http2FrameWriter.rstStream(o, 5, Http2Error.CANCEL),
                        "RstStream[streamId=5, error=CANCEL, code=8]"),
                Arguments.of((Write) o -> Http2FrameWriter.settings(o, List.of(new Http2Frame.Setting(3, 250),
                        new Http2Frame.Setting(4, 65_535))), "Settings[ack=false, values=[Setting[id=3, value=250], "
                        + "Setting[id=4, value=65535]]]"),
                Arguments.of((Write) Http2FrameWriter::settingsAck, "Settings[ack=true, values=[]]"),
                Arguments.of((Write) o -> Http2FrameWriter.ping(o, true, 0x0102030405060708L),
                        "Ping[ack=true, payload=72623859790382856]"),
                Arguments.of((Write) o -> Http2FrameWriter.windowUpdate(o, 7, 1000),
                        "WindowUpdate[streamId=7, increment=1000]"),
                Arguments.of((Write) o -> Http2FrameWriter.goAway(o, 9, Http2Error.ENHANCE_YOUR_CALM, "x"),
                        "GoAway[lastStreamId=9, error=ENHANCE_YOUR_CALM"));
    }

    @ParameterizedTest
    @MethodSource("roundTrips")
    void whatTheWriterWritesReadsBack(Write write, String expected) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        write.to(b);
        assertThat(readOne(b.toByteArray()).toString()).startsWith(expected);
    }

    @Test
    void aHeaderBlockLargerThanAFrameIsSplitIntoContinuations() throws IOException {
        byte[] block = new byte[MAX * 2 + 10];
        for (int i = 0; i < block.length; i++) {
            block[i] = (byte) i;
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Http2FrameWriter.headers(b, 1, true, block, MAX);
        Http2FrameReader r = new Http2FrameReader(new ByteArrayInputStream(b.toByteArray()));
        Http2Frame.Headers h = (Http2Frame.Headers) r.read(MAX);
        Http2Frame.Continuation c1 = (Http2Frame.Continuation) r.read(MAX);
        Http2Frame.Continuation c2 = (Http2Frame.Continuation) r.read(MAX);
        assertThat(h.endStream()).isTrue();
        assertThat(h.endHeaders()).isFalse();
        assertThat(c1.endHeaders()).isFalse();
        assertThat(c2.endHeaders()).isTrue();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(h.block());
        all.writeBytes(c1.block());
        all.writeBytes(c2.block());
        assertThat(all.toByteArray()).isEqualTo(block);
        assertThat(r.read(MAX)).as("clean end between frames").isNull();
    }

    @Test
    void paddingIsRemovedAndCountedForFlowControl() throws IOException {
        byte[] p = {3, 'a', 'b', 0, 0, 0};
        Http2Frame.Data d = (Http2Frame.Data) readOne(frame(Http2Frame.TYPE_DATA, Http2Frame.FLAG_PADDED, 1, p));
        assertThat(d.data()).containsExactly('a', 'b');
        assertThat(d.flowLength()).isEqualTo(6);
    }

    static Arguments bad(String name, byte[] bytes, Http2Error error, boolean connection) {
        return Arguments.of(name, bytes, error, connection);
    }

    static Stream<Arguments> refused() throws IOException {
        return Stream.of(
                bad("frame over SETTINGS_MAX_FRAME_SIZE", frame(0, 0, 1, new byte[MAX + 1]), Http2Error.FRAME_SIZE_ERROR, true),
                bad("DATA on stream 0", frame(0, 0, 0, new byte[1]), Http2Error.PROTOCOL_ERROR, true),
                bad("DATA padding as long as the payload", frame(0, Http2Frame.FLAG_PADDED, 1, new byte[]{2, 0}),
                        Http2Error.PROTOCOL_ERROR, true),
                bad("padded DATA without its pad length", frame(0, Http2Frame.FLAG_PADDED, 1, new byte[0]),
                        Http2Error.FRAME_SIZE_ERROR, true),
                bad("HEADERS on stream 0", frame(1, 4, 0, new byte[]{(byte) 0x82}), Http2Error.PROTOCOL_ERROR, true),
                bad("HEADERS too short for its priority", frame(1, 4 | Http2Frame.FLAG_PRIORITY, 1, new byte[3]),
                        Http2Error.FRAME_SIZE_ERROR, true),
                bad("PRIORITY of 4 bytes", frame(2, 0, 1, new byte[4]), Http2Error.FRAME_SIZE_ERROR, false),
                bad("PRIORITY on itself", frame(2, 0, 1, new byte[]{0, 0, 0, 1, 0}), Http2Error.PROTOCOL_ERROR, false),
                bad("PRIORITY on stream 0", frame(2, 0, 0, new byte[5]), Http2Error.PROTOCOL_ERROR, true),
                bad("RST_STREAM of 3 bytes", frame(3, 0, 1, new byte[3]), Http2Error.FRAME_SIZE_ERROR, true),
                bad("RST_STREAM on stream 0", frame(3, 0, 0, new byte[4]), Http2Error.PROTOCOL_ERROR, true),
                bad("SETTINGS on stream 1", frame(4, 0, 1, new byte[0]), Http2Error.PROTOCOL_ERROR, true),
                bad("SETTINGS ACK with a payload", frame(4, 1, 0, new byte[6]), Http2Error.FRAME_SIZE_ERROR, true),
                bad("SETTINGS of 5 bytes", frame(4, 0, 0, new byte[5]), Http2Error.FRAME_SIZE_ERROR, true),
                bad("SETTINGS_ENABLE_PUSH 2", frame(4, 0, 0, new byte[]{0, 2, 0, 0, 0, 2}), Http2Error.PROTOCOL_ERROR, true),
                bad("SETTINGS_INITIAL_WINDOW_SIZE 2^31", frame(4, 0, 0, new byte[]{0, 4, (byte) 0x80, 0, 0, 0}),
                        Http2Error.FLOW_CONTROL_ERROR, true),
                bad("SETTINGS_MAX_FRAME_SIZE 16383", frame(4, 0, 0, new byte[]{0, 5, 0, 0, 0x3f, (byte) 0xff}),
                        Http2Error.PROTOCOL_ERROR, true),
                bad("SETTINGS_MAX_FRAME_SIZE 2^24", frame(4, 0, 0, new byte[]{0, 5, 1, 0, 0, 0}),
                        Http2Error.PROTOCOL_ERROR, true),
                bad("PING of 7 bytes", frame(6, 0, 0, new byte[7]), Http2Error.FRAME_SIZE_ERROR, true),
                bad("PING on stream 1", frame(6, 0, 1, new byte[8]), Http2Error.PROTOCOL_ERROR, true),
                bad("GOAWAY on stream 1", frame(7, 0, 1, new byte[8]), Http2Error.PROTOCOL_ERROR, true),
                bad("GOAWAY of 7 bytes", frame(7, 0, 0, new byte[7]), Http2Error.FRAME_SIZE_ERROR, true),
                bad("WINDOW_UPDATE of 0 on the connection", frame(8, 0, 0, new byte[4]), Http2Error.PROTOCOL_ERROR, true),
                bad("WINDOW_UPDATE of 0 on a stream", frame(8, 0, 1, new byte[4]), Http2Error.PROTOCOL_ERROR, false),
                bad("WINDOW_UPDATE of 3 bytes", frame(8, 0, 1, new byte[3]), Http2Error.FRAME_SIZE_ERROR, true),
                bad("CONTINUATION on stream 0", frame(9, 4, 0, new byte[1]), Http2Error.PROTOCOL_ERROR, true),
                bad("PUSH_PROMISE on stream 0", frame(5, 4, 0, new byte[4]), Http2Error.PROTOCOL_ERROR, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refusesWhatRfc9113Forbids(String name, byte[] bytes, Http2Error error, boolean connection) {
        assertThatThrownBy(() -> readOne(bytes)).isInstanceOfSatisfying(Http2Exception.class, e -> {
            assertThat(e.error()).isEqualTo(error);
            assertThat(e.isConnectionError()).as("a connection error").isEqualTo(connection);
        });
    }

    @Test
    void unknownTypesAreReturnedToBeIgnoredAndTheReservedBitIsDropped() throws IOException {
        byte[] b = frame(0x42, 0xff, 1, new byte[3]);
        b[5] |= (byte) 0x80;
        assertThat(readOne(b)).isEqualTo(new Http2Frame.Unknown(0x42, 1, 3));
    }

    @Test
    void anInvalidPrefaceIsAProtocolError() {
        assertThatThrownBy(() -> new Http2FrameReader(new ByteArrayInputStream(
                "PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".getBytes())).readPreface())
                .isInstanceOfSatisfying(Http2Exception.class, e -> assertThat(e.error()).isEqualTo(Http2Error.PROTOCOL_ERROR));
    }

    @Test
    void aTruncatedFrameIsAnEof() {
        assertThatThrownBy(() -> readOne(new byte[]{0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2})).isInstanceOf(EOFException.class);
    }

    @Property(tries = 3000)
    void randomBytesEndInFramesOrTheCodecsErrors(@ForAll("bytes") byte[] bytes) {
        readAll(bytes);
    }

    @Property(tries = 3000)
    void mutatedFramesEndInFramesOrTheCodecsErrors(@ForAll("mutated") byte[] bytes) {
        readAll(bytes);
    }

    private static void readAll(byte[] bytes) {
        Http2FrameReader r = new Http2FrameReader(new ByteArrayInputStream(bytes));
        int frames = 0;
        try {
            while (r.read(MAX) != null) {
                frames++;
                assertThat(frames).isLessThanOrEqualTo(bytes.length / 9 + 1);
            }
        } catch (Http2Exception | EOFException expected) {
            // the codec's answer
        } catch (IOException e) {
            throw new AssertionError("an I/O error from a byte array: " + e, e);
        }
    }

    @Provide
    Arbitrary<byte[]> bytes() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(200);
    }

    @Provide
    Arbitrary<byte[]> mutated() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Http2FrameWriter.settings(b, List.of(new Http2Frame.Setting(4, 100)));
        Http2FrameWriter.headers(b, 1, false, new byte[]{(byte) 0x82, (byte) 0x86, (byte) 0x84}, MAX);
        Http2FrameWriter.data(b, 1, true, new byte[]{1, 2, 3, 4}, 0, 4);
        Http2FrameWriter.ping(b, false, 7);
        Http2FrameWriter.windowUpdate(b, 0, 100);
        Http2FrameWriter.rstStream(b, 1, Http2Error.CANCEL);
        Http2FrameWriter.goAway(b, 1, Http2Error.NO_ERROR, "bye");
        byte[] seed = b.toByteArray();
        return Arbitraries.integers().between(0, seed.length - 1).list().ofMaxSize(6)
                .flatMap(positions -> Arbitraries.bytes().list().ofSize(positions.size()).map(values -> {
                    byte[] m = seed.clone();
                    for (int i = 0; i < positions.size(); i++) {
                        m[positions.get(i)] = values.get(i);
                    }
                    return m;
                }));
    }
}
