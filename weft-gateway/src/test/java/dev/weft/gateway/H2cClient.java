package dev.weft.gateway;

import dev.weft.http.h2.Http2Frame;
import dev.weft.http.h2.Http2FrameReader;
import dev.weft.http.h2.Http2FrameWriter;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.hpack.HpackDecoder;
import org.eclipse.jetty.http2.hpack.HpackEncoder;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A small h2c client with prior knowledge (the JDK's HttpClient has none): sends GET requests as streams on one
 * connection, all at once, and reads the answers as they come, in any order. weft-http's frame codec, Jetty's HPACK.
 */
final class H2cClient implements AutoCloseable {
    record Answer(int status, String body) {
    }

    private final Socket socket;
    private final OutputStream out;
    private final Http2FrameReader reader;
    private final HpackEncoder encoder = new HpackEncoder();
    private final HpackDecoder decoder = new HpackDecoder(64 * 1024, System::nanoTime);
    private final String authority;
    private int next = 1;

    H2cClient(InetSocketAddress address) throws IOException {
        socket = new Socket(address.getAddress(), address.getPort());
        socket.setSoTimeout(30_000);
        out = new BufferedOutputStream(socket.getOutputStream());
        reader = new Http2FrameReader(socket.getInputStream());
        authority = "127.0.0.1:" + address.getPort();
        out.write(Http2FrameReader.PREFACE);
        Http2FrameWriter.settings(out, List.of());
        out.flush();
    }

    /** GETs every path at once, each on its own stream; the answers by stream, in the order of {@code paths}. */
    List<Answer> getAll(List<String> paths) throws Exception {
        Map<Integer, Integer> index = new HashMap<>();
        for (int i = 0; i < paths.size(); i++) {
            int id = next;
            next += 2;
            index.put(id, i);
            ByteBuffer b = ByteBuffer.allocate(4096);
            encoder.encode(b, new MetaData.Request("GET", HttpURI.from("http://" + authority + paths.get(i)),
                    HttpVersion.HTTP_2, HttpFields.EMPTY));
            b.flip();
            byte[] block = new byte[b.remaining()];
            b.get(block);
            Http2FrameWriter.headers(out, id, true, block, 16_384);
        }
        out.flush();
        Answer[] answers = new Answer[paths.size()];
        int[] status = new int[paths.size()];
        ByteArrayOutputStream[] bodies = new ByteArrayOutputStream[paths.size()];
        int done = 0;
        while (done < paths.size()) {
            Http2Frame f = reader.read(Http2FrameReader.MAX_MAX_FRAME_SIZE);
            if (f == null) {
                throw new IOException("the server closed the connection with " + (paths.size() - done) + " answers missing");
            }
            switch (f) {
                case Http2Frame.Settings s when !s.ack() -> {
                    Http2FrameWriter.settingsAck(out);
                    out.flush();
                }
                case Http2Frame.Headers h -> {
                    int i = index.get(h.streamId());
                    status[i] = ((MetaData.Response) decoder.decode(ByteBuffer.wrap(h.block()))).getStatus();
                    bodies[i] = new ByteArrayOutputStream();
                    if (h.endStream()) {
                        answers[i] = new Answer(status[i], "");
                        done++;
                    }
                }
                case Http2Frame.Data d -> {
                    int i = index.get(d.streamId());
                    bodies[i].writeBytes(d.data());
                    if (d.endStream()) {
                        answers[i] = new Answer(status[i], bodies[i].toString(StandardCharsets.UTF_8));
                        done++;
                    }
                }
                case Http2Frame.GoAway g -> throw new IOException("GOAWAY " + g.error() + ": "
                        + new String(g.debug(), StandardCharsets.UTF_8));
                case Http2Frame.RstStream r -> throw new IOException("RST_STREAM " + r.error() + " on " + r.streamId());
                default -> {
                }
            }
        }
        return List.of(answers);
    }

    /** Opens a stream with a GET of {@code path} and returns its id, without waiting for the answer. */
    int start(String path) throws Exception {
        int id = next;
        next += 2;
        ByteBuffer b = ByteBuffer.allocate(4096);
        encoder.encode(b, new MetaData.Request("GET", HttpURI.from("http://" + authority + path), HttpVersion.HTTP_2,
                HttpFields.EMPTY));
        b.flip();
        byte[] block = new byte[b.remaining()];
        b.get(block);
        Http2FrameWriter.headers(out, id, true, block, 16_384);
        out.flush();
        return id;
    }

    /** Resets stream {@code id} (RST_STREAM CANCEL), as a client that gives up on a call does. */
    void reset(int id) throws IOException {
        Http2FrameWriter.rstStream(out, id, dev.weft.http.h2.Http2Error.CANCEL);
        out.flush();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
