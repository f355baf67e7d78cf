package dev.weft.lab.peers;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Deque;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The reference of {@code weft lab clients}: the least an HTTP/1.1 client can do. GET of one URL over
 * plain blocking sockets, keep-alive, a free list of connections (a caller takes one or opens one, and
 * gives it back), responses with Content-Length only. No retries, no deadline beyond a socket timeout,
 * no pool limit beyond the number of callers. What it costs per request is the floor the real clients
 * are measured against.
 */
public final class RawClient implements AutoCloseable {
    private final InetSocketAddress address;
    private final byte[] request;
    private final Deque<Conn> idle = new ConcurrentLinkedDeque<>();
    private final int timeoutMillis = 10_000;

    public RawClient(URI url) {
        this.address = new InetSocketAddress(url.getHost(), url.getPort());
        String target = url.getRawPath() + (url.getRawQuery() == null ? "" : "?" + url.getRawQuery());
        this.request = ("GET " + target + " HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort()
                + "\r\nUser-Agent: weft-lab-raw\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** Sends the GET and reads the whole answer; returns its status. */
    public int get() throws IOException {
        Conn c = idle.pollFirst();
        if (c == null) {
            c = new Conn(address, timeoutMillis);
        }
        try {
            int status = c.exchange(request);
            if (c.reusable) {
                idle.offerFirst(c);
            } else {
                c.close();
            }
            return status;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    @Override
    public void close() {
        for (Conn c = idle.poll(); c != null; c = idle.poll()) {
            c.close();
        }
    }

    private static final class Conn {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        private final StringBuilder line = new StringBuilder(128);
        private boolean reusable;

        Conn(InetSocketAddress address, int timeoutMillis) throws IOException {
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(address, timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            in = new BufferedInputStream(socket.getInputStream(), 8192);
            out = socket.getOutputStream();
        }

        int exchange(byte[] request) throws IOException {
            out.write(request);
            out.flush();
            String statusLine = readLine();
            if (!statusLine.startsWith("HTTP/1.") || statusLine.length() < 12) {
                throw new IOException("not an HTTP/1.x status line: " + statusLine);
            }
            int status = Integer.parseInt(statusLine.substring(9, 12));
            long length = -1;
            reusable = true;
            for (String h = readLine(); !h.isEmpty(); h = readLine()) {
                int colon = h.indexOf(':');
                String name = h.substring(0, colon).strip().toLowerCase(Locale.ROOT);
                String value = h.substring(colon + 1).strip();
                if (name.equals("content-length")) {
                    length = Long.parseLong(value);
                } else if (name.equals("connection") && value.equalsIgnoreCase("close")) {
                    reusable = false;
                } else if (name.equals("transfer-encoding")) {
                    throw new IOException("the reference client reads Content-Length bodies only");
                }
            }
            if (length < 0) {
                throw new IOException("no Content-Length");
            }
            in.skipNBytes(length);
            return status;
        }

        private String readLine() throws IOException {
            line.setLength(0);
            while (true) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("connection closed mid-answer");
                }
                if (b == '\n') {
                    int n = line.length();
                    if (n > 0 && line.charAt(n - 1) == '\r') {
                        line.setLength(n - 1);
                    }
                    return line.toString();
                }
                line.append((char) b);
            }
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
