import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The cost of the strict codec, measured in one process: the same 2,000 pipelined requests (three GETs with
 * five headers, then a POST with a 20-byte body, repeated) parsed by the request reader of commit 3293635
 * (before weft-http) and by weft-http's Http1, alternately; best of 300 passes each, 8 rounds. The stream
 * hands out at most 1,460 bytes a read, as a socket does. How to run it:
 * docs/journal/round-01-03.md (the strict codec's cost).
 */
public class ParseBench {
    static final byte[] ONE = ("GET /a/42?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: weft\r\n"
            + "Accept: application/json\r\nX-Request-Id: 0123456789abcdef\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    static final byte[] POST = ("POST /p HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n"
            + "{\"a\":1,\"b\":[1,2,3]}\n").getBytes(StandardCharsets.ISO_8859_1);
    static final int N = 2000;
    static byte[] wire;

    public static void main(String[] a) throws Exception {
        java.io.ByteArrayOutputStream w = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < N; i++) { w.writeBytes(i % 4 == 3 ? POST : ONE); }
        wire = w.toByteArray();
        for (int round = 0; round < 8; round++) {
            long o = time(ParseBench::oldParse), n = time(ParseBench::newParse);
            System.out.printf("round %d: old %.0f ns/request, new %.0f ns/request, new/old %.3f%n", round,
                    o / (double) N, n / (double) N, n / (double) o);
        }
    }

    interface Run { long run() throws Exception; }

    static long time(Run r) throws Exception {
        long best = Long.MAX_VALUE;
        long sink = 0;
        for (int i = 0; i < 300; i++) {
            long t = System.nanoTime();
            sink += r.run();
            best = Math.min(best, System.nanoTime() - t);
        }
        if (sink == 42) System.out.println();
        return best;
    }

    static InputStream in() { return new ByteArrayInputStream(wire) {
        @Override public int read(byte[] b, int off, int len) { return super.read(b, off, Math.min(len, 1460)); } }; }

    static long oldParse() throws Exception {
        dev.weft.core.http.Http1Reader r = new dev.weft.core.http.Http1Reader(in(), 16 * 1024);
        long s = 0;
        dev.weft.core.http.RequestHead h;
        while ((h = r.readHead()) != null) { s += h.path().length() + r.readBody(h, 1 << 20, true).length(); }
        return s;
    }

    static long newParse() throws Exception {
        dev.weft.http.Http1Input in = new dev.weft.http.Http1Input(in(), 2048);
        long s = 0;
        dev.weft.http.Http1Request h;
        while ((h = dev.weft.http.Http1.readRequestHead(in, 16 * 1024, 100)) != null) {
            s += h.head().path().length() + dev.weft.http.Http1.readBody(in, h.framing(), 1 << 20, true).length();
        }
        return s;
    }
}
