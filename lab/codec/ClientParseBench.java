import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.net.Socket;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;

/**
 * The client side of the codec's cost, in one process: the same 2,000 pipelined answers (a 200 with five
 * headers and a 60-byte JSON body, every fourth one chunked) read by the client's Connection of commit 3293635
 * (its own reader) and of this commit (weft-http), each loaded from its own jars, alternately; best of 300
 * passes each, 8 rounds. Arguments: the old class path, then the new one. How to run it:
 * docs/journal/round-01-03.md (the strict codec's cost).
 */
public class ClientParseBench {
    static final String BODY = "{\"id\":42,\"items\":[{\"id\":1},{\"id\":2},{\"id\":3}],\"ok\":true}";
    static final byte[] PLAIN = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Sun, 22 Nov 2026 12:00:00 GMT\r\n"
            + "Server: weft-sim\r\nX-Request-Id: 0123456789abcdef\r\nContent-Length: " + BODY.length() + "\r\n\r\n" + BODY)
            .getBytes(StandardCharsets.ISO_8859_1);
    static final byte[] CHUNKED = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + Integer.toHexString(BODY.length()) + "\r\n" + BODY + "\r\n0\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    static final int N = 2000;
    static byte[] wire;

    record Side(Constructor<?> make, Method readHead, Method readBody) {
        long run() throws Exception {
            Object c = make.newInstance(new FakeSocket(), new FakeSocket());
            long s = 0;
            for (int i = 0; i < N; i++) {
                Object head = readHead.invoke(c, false);
                s += ((byte[]) readBody.invoke(c, head, 1L << 20)).length;
            }
            return s;
        }
    }

    static Side side(String classPath) throws Exception {
        String[] parts = classPath.split(":");
        URL[] urls = new URL[parts.length];
        for (int i = 0; i < parts.length; i++) {
            urls[i] = new java.io.File(parts[i]).toURI().toURL();
        }
        ClassLoader loader = new URLClassLoader(urls, ClientParseBench.class.getClassLoader());
        String pkg; // weft-client's package since the module split; weft-core's before it
        try {
            Class.forName("dev.weft.client.Connection", false, loader);
            pkg = "dev.weft.client.";
        } catch (ClassNotFoundException before) {
            pkg = "dev.weft.core.call.";
        }
        Class<?> conn = Class.forName(pkg + "Connection", true, loader);
        Class<?> head = Class.forName(pkg + "Connection$Head", true, loader);
        Constructor<?> make = conn.getDeclaredConstructor(Socket.class, Socket.class);
        make.setAccessible(true);
        Method readHead = conn.getDeclaredMethod("readHead", boolean.class);
        readHead.setAccessible(true);
        Method readBody = conn.getDeclaredMethod("readBody", head, long.class);
        readBody.setAccessible(true);
        return new Side(make, readHead, readBody);
    }

    public static void main(String[] a) throws Exception {
        ByteArrayOutputStream w = new ByteArrayOutputStream();
        for (int i = 0; i < N; i++) {
            w.writeBytes(i % 4 == 3 ? CHUNKED : PLAIN);
        }
        wire = w.toByteArray();
        Side old = side(a[0]);
        Side neu = side(a[1]);
        if (old.run() != neu.run()) {
            throw new AssertionError("the two readers disagree");
        }
        for (int round = 0; round < 8; round++) {
            long o = time(old), n = time(neu);
            System.out.printf("round %d: old %.0f ns/answer, new %.0f ns/answer, new/old %.3f%n", round,
                    o / (double) N, n / (double) N, n / (double) o);
        }
    }

    static long time(Side s) throws Exception {
        long best = Long.MAX_VALUE;
        long sink = 0;
        for (int i = 0; i < 300; i++) {
            long t = System.nanoTime();
            sink += s.run();
            best = Math.min(best, System.nanoTime() - t);
        }
        if (sink == 42) {
            System.out.println();
        }
        return best;
    }

    /** A socket whose input is the pipelined answers, handed out at most 1,460 bytes a read. */
    static final class FakeSocket extends Socket {
        @Override
        public InputStream getInputStream() {
            return new ByteArrayInputStream(wire) {
                @Override
                public int read(byte[] b, int off, int len) {
                    return super.read(b, off, Math.min(len, 1460));
                }
            };
        }

        @Override
        public OutputStream getOutputStream() {
            return OutputStream.nullOutputStream();
        }
    }
}
