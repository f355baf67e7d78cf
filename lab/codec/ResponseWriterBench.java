import dev.weft.http.Headers;
import dev.weft.http.Http1Writer;
import dev.weft.http.Status;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What an answer's head costs the server, as the gateway makes one ({@code ServerResponse.json(...).withHeader(...)}):
 * the fields built and written by the StringBuilder writer weft-server had, on a {@code List} of entries (both copied
 * here as they were), against a {@link Headers} (the JSON type one shared instance, checked once; the added field
 * checked on each answer) written by weft-http's {@link Http1Writer#response} into one sized array. Bytes allocated
 * per answer (the thread's allocated-bytes counter) and ns per answer, alternately, 40 rounds of 200,000 answers (the last 10 shown) (a
 * 200, two fields, a 185-byte body). Run from the repository, after
 * {@code ./mvnw -B -q -pl weft-http -am compile}:
 * {@code java -cp weft-http/target/classes lab/codec/ResponseWriterBench.java}
 */
public class ResponseWriterBench {
    static byte[] oldResponse(int status, List<Map.Entry<String, String>> headers, byte[] body, boolean keepAlive) {
        StringBuilder sb = new StringBuilder(160);
        sb.append("HTTP/1.1 ").append(status).append(' ').append(Status.of(status).reason()).append("\r\n");
        for (Map.Entry<String, String> h : headers) {
            sb.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
        }
        sb.append("Content-Length: ").append(body.length).append("\r\n");
        if (!keepAlive) {
            sb.append("Connection: close\r\n");
        }
        sb.append("\r\n");
        byte[] head = sb.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    /** weft-server's {@code ServerResponse.withHeader} as it was. */
    static List<Map.Entry<String, String>> withHeader(List<Map.Entry<String, String>> headers, String name, String value) {
        List<Map.Entry<String, String>> h = new ArrayList<>(headers.size() + 1);
        h.addAll(headers);
        h.add(Map.entry(name, value));
        return List.copyOf(h);
    }

    static final List<Map.Entry<String, String>> JSON_LIST = List.of(Map.entry("Content-Type", "application/json"));
    static final Headers JSON = Headers.of("Content-Type", "application/json");
    static final byte[] BODY = new byte[185];

    /** In a method of its own, so that after the first rounds it runs fully compiled, not on-stack replaced. */
    static long run(boolean old, int n) {
        long sink = 0;
        for (int i = 0; i < n; i++) {
            sink += (old ? oldResponse(200, withHeader(JSON_LIST, "Weft-Completed", "true"), BODY, true)
                    : Http1Writer.response(Status.OK, JSON.with("Weft-Completed", "true"), BODY, true)).length;
        }
        return sink;
    }

    public static void main(String[] args) {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        int n = 200_000;
        long sink = 0;
        for (int round = 0; round < 40; round++) {
            for (boolean old : new boolean[] {true, false}) {
                long before = mx.getThreadAllocatedBytes(tid);
                long t0 = System.nanoTime();
                sink += run(old, n);
                long t1 = System.nanoTime();
                long bytes = mx.getThreadAllocatedBytes(tid) - before;
                if (round >= 30) { // the first 30 rounds warm both up
                    System.out.printf("round %d %s: %.1f bytes/answer, %.1f ns/answer%n", round,
                            old ? "StringBuilder writer" : "Http1Writer         ", (double) bytes / n, (double) (t1 - t0) / n);
                }
            }
        }
        System.out.println("(checksum " + sink + ")");
    }
}
