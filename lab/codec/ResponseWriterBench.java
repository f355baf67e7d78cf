import dev.weft.http.Http1Writer;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * What writing one answer's bytes costs the server: the StringBuilder writer weft-server had (copied here as it was)
 * against weft-http's {@link Http1Writer#response}, which checks every field and writes into one sized array.
 * Bytes allocated per answer (the thread's allocated-bytes counter) and ns per answer, alternately, 6 rounds of
 * 2,000,000 answers (a 200, two fields, a 185-byte body). Run from the repository, after
 * {@code ./mvnw -B -q -pl weft-http -am compile}:
 * {@code java -cp weft-http/target/classes lab/codec/ResponseWriterBench.java}
 */
public class ResponseWriterBench {
    static byte[] oldResponse(int status, List<Map.Entry<String, String>> headers, byte[] body, boolean keepAlive) {
        StringBuilder sb = new StringBuilder(160);
        sb.append("HTTP/1.1 ").append(status).append(' ').append(Http1Writer.reasonPhrase(status)).append("\r\n");
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

    public static void main(String[] args) {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        List<Map.Entry<String, String>> h = List.of(Map.entry("Content-Type", "application/json"),
                Map.entry("Weft-Completed", "true"));
        byte[] body = new byte[185];
        int n = 2_000_000;
        long sink = 0;
        for (int round = 0; round < 6; round++) {
            for (boolean old : new boolean[] {true, false}) {
                long before = mx.getThreadAllocatedBytes(tid);
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    sink += (old ? oldResponse(200, h, body, true) : Http1Writer.response(200, h, body, true)).length;
                }
                long t1 = System.nanoTime();
                long bytes = mx.getThreadAllocatedBytes(tid) - before;
                System.out.printf("round %d %s: %.1f bytes/answer, %.1f ns/answer%n", round,
                        old ? "StringBuilder writer" : "Http1Writer         ", (double) bytes / n, (double) (t1 - t0) / n);
            }
        }
        System.out.println("(checksum " + sink + ")");
    }
}
