package dev.weft.sim;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** One connection of the simulator: reads requests, acts out their behaviour, answers. */
final class SimConnection {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MAX_REQUEST_BODY = 256L * 1024 * 1024;

    private final SimServer server;
    private final SimStats stats;
    private final Socket socket;
    private InputStream raw;
    private OutputStream out;
    private final byte[] buf = new byte[8192];
    private int pos;
    private int lim;
    /** When the connection last did anything, for the idle sweep ({@link System#nanoTime()}). */
    volatile long lastActive = System.nanoTime();
    /** True while waiting for the next request (only then may the idle sweep close it). */
    volatile boolean idle;

    /** A parsed request head. */
    private record Request(String method, String path, String query, boolean http10, Map<String, String> headers) {
        String header(String name) {
            return headers.get(name);
        }
    }

    /** The head could not be read; answer {@code status} and close. */
    private static final class BadRequest extends Exception {
        final int status;

        BadRequest(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    SimConnection(SimServer server, Socket socket) {
        this.server = server;
        this.stats = server.stats();
        this.socket = socket;
    }

    void run() {
        try {
            socket.setTcpNoDelay(true);
            raw = socket.getInputStream();
            out = socket.getOutputStream();
            while (true) {
                // Untimed read: idle keep-alive connections are closed by the server's idle sweep, so
                // the hot path parks without a timer.
                lastActive = System.nanoTime();
                idle = true;
                Request r;
                try {
                    r = readHead();
                } catch (BadRequest e) {
                    writeJson(e.status, Map.of("error", e.getMessage()), false, null);
                    return;
                } finally {
                    idle = false;
                }
                if (r == null) {
                    return; // the client closed the connection between requests
                }
                long bodyBytes = consumeBody(r);
                if (bodyBytes < 0) {
                    writeJson(413, Map.of("error", "request body over " + MAX_REQUEST_BODY + " bytes"), false, null);
                    return;
                }
                boolean keepAlive = !r.http10() && !"close".equalsIgnoreCase(r.header("connection"))
                        || r.http10() && "keep-alive".equalsIgnoreCase(r.header("connection"));
                boolean continueConnection = r.path().startsWith("/-/")
                        ? admin(r, keepAlive)
                        : simulate(r, bodyBytes, keepAlive);
                if (!continueConnection || !keepAlive) {
                    return;
                }
            }
        } catch (IOException e) {
            // the client went away or reset the connection
        }
    }

    // ---- simulation ----------------------------------------------------------------------------

    private boolean simulate(Request r, long bodyBytes, boolean keepAlive) throws IOException {
        String path = r.path();
        Map<String, String> params = parseQuery(r.query());
        Behavior b;
        try {
            b = server.config().behaviorFor(path).with(Behavior.known(params));
        } catch (BadParameterException e) {
            stats.received(path, bodyBytes, r.header("webhook-id"));
            stats.recordAnswer(path, "400");
            Map<String, Object> err = new LinkedHashMap<>();
            err.put("error", e.getMessage());
            err.put("parameter", e.parameter());
            writeJson(400, err, keepAlive, null);
            return true;
        }
        stats.received(path, bodyBytes, r.header("webhook-id"));
        long turn = needsTurn(b) ? server.turn(path + "?" + r.query()) : 0;
        Duration latency = b.latency().sample(turn);
        int status = b.status(turn);
        if (b.fail() > 0 && ThreadLocalRandom.current().nextDouble() < b.fail()) {
            status = 503;
        }
        if (b.fault() == Behavior.Fault.HANG) {
            stats.recordAnswer(path, "hang");
            waitOrClosed(b.hang());
            return false;
        }
        if (!waitOrClosed(latency)) {
            stats.recordAborted(); // the caller gave up first
            return false;
        }
        switch (b.fault()) {
            case RESET -> {
                stats.recordAnswer(path, "reset");
                socket.setSoLinger(true, 0);
                socket.close();
                return false;
            }
            case CLOSE -> {
                stats.recordAnswer(path, "close");
                socket.close();
                return false;
            }
            case DRIP -> {
                byte[] body = body(b, path, status);
                out.write(head(status, body.length, b.retryAfterSeconds(), keepAlive));
                out.flush();
                for (int i = 0; i < body.length; i++) {
                    if (i > 0 && !waitOrClosed(b.drip())) {
                        stats.recordAborted();
                        return false;
                    }
                    out.write(body[i]);
                    out.flush();
                }
            }
            default -> write(status, body(b, path, status), keepAlive, b.retryAfterSeconds());
        }
        stats.recordAnswer(path, Integer.toString(status));
        return true;
    }

    private static boolean needsTurn(Behavior b) {
        return b.latency() instanceof Latency.Sequence || b.statuses().size() > 1;
    }

    /**
     * Waits {@code d}, watching the connection: returns false as soon as the client closes it (a caller
     * that gave up, or the loser of a hedge), true when the whole wait passed.
     */
    private boolean waitOrClosed(Duration d) throws IOException {
        long end = System.nanoTime() + d.toNanos();
        long rem;
        while ((rem = end - System.nanoTime()) > 0) {
            if (pos < lim || lim == buf.length) {
                // the client already sent its next request (pipelining), or no room to read: just wait
                SimServer.pause((rem + 999_999) / 1_000_000);
                return true;
            }
            socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, (rem + 999_999) / 1_000_000)));
            try {
                if (pos == lim) {
                    pos = 0;
                    lim = 0;
                }
                int n = raw.read(buf, lim, buf.length - lim);
                if (n < 0) {
                    return false;
                }
                lim += n; // pipelined bytes stay in the buffer for the next request
            } catch (SocketTimeoutException timeout) {
                continue;
            } catch (IOException reset) {
                return false;
            } finally {
                socket.setSoTimeout(0);
            }
        }
        return true;
    }

    /** The deterministic JSON body: {"path": ..., "items": [...]}, padded to {@code bytes} when asked. */
    static byte[] body(Behavior b, String path, int status) {
        if (b.fixedBody() != null && status < 400) {
            return b.fixedBody();
        }
        StringBuilder sb = new StringBuilder(64 + b.items() * 32);
        sb.append("{\"path\":").append(quote(path));
        if (status >= 400) {
            sb.append(",\"status\":").append(status).append(",\"error\":\"simulated ").append(status).append('"');
        } else {
            sb.append(",\"items\":[");
            for (int i = 1; i <= b.items(); i++) {
                if (i > 1) {
                    sb.append(',');
                }
                sb.append("{\"id\":").append(i).append(",\"name\":\"item-").append(i).append("\"}");
            }
            sb.append(']');
        }
        int plain = sb.length() + 1;
        int padded = plain + ",\"pad\":\"\"".length();
        if (b.bytes() >= padded) {
            sb.append(",\"pad\":\"");
            sb.repeat('x', (int) (b.bytes() - padded));
            sb.append('"');
        }
        sb.append('}');
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** A JSON string literal. */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    // ---- admin -----------------------------------------------------------------------------------

    private boolean admin(Request r, boolean keepAlive) throws IOException {
        Map<String, String> q = parseQuery(r.query());
        switch (r.path()) {
            case "/-/health" -> writeJson(200, Map.of("status", "up"), keepAlive, null);
            case "/-/stats" -> {
                if (!r.method().equals("GET")) {
                    writeJson(405, Map.of("error", "use GET /-/stats"), keepAlive, null);
                } else {
                    writeJson(200, stats.snapshot("true".equals(q.get("ids"))), keepAlive, null);
                }
            }
            case "/-/reset" -> {
                if (!r.method().equals("POST")) {
                    writeJson(405, Map.of("error", "use POST /-/reset"), keepAlive, null);
                } else {
                    stats.reset();
                    server.resetTurns();
                    writeJson(200, Map.of("reset", true), keepAlive, null);
                }
            }
            default -> writeJson(404, Map.of("error", "unknown admin path " + r.path()
                    + "; try /-/health, /-/stats or POST /-/reset"), keepAlive, null);
        }
        return true;
    }

    // ---- HTTP/1.1 --------------------------------------------------------------------------------

    /** Reads a request line and headers; null on a clean end of stream before any byte. */
    private Request readHead() throws IOException, BadRequest {
        int[] budget = {SimConfig.MAX_HEADER_BYTES};
        String line = readLine(budget, true);
        if (line == null) {
            return null;
        }
        while (line.isEmpty()) { // tolerate stray CRLF between requests
            line = readLine(budget, true);
            if (line == null) {
                return null;
            }
        }
        String[] parts = line.split(" ");
        if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
            throw new BadRequest(400, "malformed request line");
        }
        Map<String, String> headers = new HashMap<>();
        while (true) {
            String h = readLine(budget, false);
            if (h.isEmpty()) {
                break;
            }
            int colon = h.indexOf(':');
            if (colon <= 0) {
                throw new BadRequest(400, "malformed header line");
            }
            headers.putIfAbsent(h.substring(0, colon).strip().toLowerCase(Locale.ROOT), h.substring(colon + 1).strip());
        }
        String target = parts[1];
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        String query = q < 0 ? "" : target.substring(q + 1);
        if (path.startsWith("http://") || path.startsWith("https://")) { // absolute form
            int slash = path.indexOf('/', path.indexOf("//") + 2);
            path = slash < 0 ? "/" : path.substring(slash);
        }
        return new Request(parts[0], path, query, parts[2].equals("HTTP/1.0"), headers);
    }

    private String readLine(int[] budget, boolean eofAllowed) throws IOException, BadRequest {
        StringBuilder sb = new StringBuilder(64);
        while (true) {
            int c = read();
            if (c < 0) {
                if (eofAllowed && sb.isEmpty()) {
                    return null;
                }
                throw new java.io.EOFException("connection closed mid-request");
            }
            if (--budget[0] < 0) {
                throw new BadRequest(431, "request line and headers over " + SimConfig.MAX_HEADER_BYTES + " bytes");
            }
            if (c == '\n') {
                int n = sb.length();
                if (n > 0 && sb.charAt(n - 1) == '\r') {
                    sb.setLength(n - 1);
                }
                return sb.toString();
            }
            sb.append((char) c);
        }
    }

    /** Reads and discards the request body; returns its size, or -1 when it is over the limit. */
    private long consumeBody(Request r) throws IOException {
        String te = r.header("transfer-encoding");
        if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            long total = 0;
            int[] budget = {SimConfig.MAX_HEADER_BYTES};
            while (true) {
                String sizeLine;
                try {
                    sizeLine = readLine(budget, false);
                } catch (BadRequest e) {
                    return -1;
                }
                int semi = sizeLine.indexOf(';');
                long size = Long.parseLong((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).strip(), 16);
                if (size == 0) {
                    try {
                        while (!readLine(budget, false).isEmpty()) {
                            // trailers
                        }
                    } catch (BadRequest e) {
                        return -1;
                    }
                    return total;
                }
                total += size;
                if (total > MAX_REQUEST_BODY) {
                    return -1;
                }
                skip(size + 2);
            }
        }
        String cl = r.header("content-length");
        if (cl == null) {
            return 0;
        }
        long n;
        try {
            n = Long.parseLong(cl.strip());
        } catch (NumberFormatException e) {
            return -1;
        }
        if (n < 0 || n > MAX_REQUEST_BODY) {
            return -1;
        }
        skip(n);
        return n;
    }

    /** The next byte of the connection, or -1 at its end. */
    private int read() throws IOException {
        if (pos == lim && !fill()) {
            return -1;
        }
        return buf[pos++] & 0xff;
    }

    private boolean fill() throws IOException {
        int n = raw.read(buf, 0, buf.length);
        if (n <= 0) {
            return false;
        }
        pos = 0;
        lim = n;
        return true;
    }

    private void skip(long n) throws IOException {
        long left = n;
        while (left > 0) {
            if (pos == lim && !fill()) {
                throw new java.io.EOFException("connection closed mid-body");
            }
            int take = (int) Math.min(left, lim - pos);
            pos += take;
            left -= take;
        }
    }

    static Map<String, String> parseQuery(String query) {
        Map<String, String> m = new LinkedHashMap<>();
        if (query == null || query.isEmpty()) {
            return m;
        }
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = decode(eq < 0 ? pair : pair.substring(0, eq));
            String v = eq < 0 ? "" : decode(pair.substring(eq + 1));
            m.putIfAbsent(k, v);
        }
        return m;
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }

    private void writeJson(int status, Object value, boolean keepAlive, Long retryAfter) throws IOException {
        write(status, JSON.writeValueAsBytes(value), keepAlive, retryAfter);
    }

    private void write(int status, byte[] body, boolean keepAlive, Long retryAfter) throws IOException {
        byte[] head = head(status, body.length, retryAfter, keepAlive);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        out.write(all);
        out.flush();
    }

    private static byte[] head(int status, int length, Long retryAfter, boolean keepAlive) {
        StringBuilder sb = new StringBuilder(128);
        sb.append("HTTP/1.1 ").append(status).append(' ').append(reasonPhrase(status)).append("\r\n")
                .append("Content-Type: application/json\r\n")
                .append("Content-Length: ").append(length).append("\r\n");
        if (retryAfter != null) {
            sb.append("Retry-After: ").append(retryAfter).append("\r\n");
        }
        if (!keepAlive) {
            sb.append("Connection: close\r\n");
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String reasonPhrase(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 201 -> "Created";
            case 202 -> "Accepted";
            case 204 -> "No Content";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 410 -> "Gone";
            case 413 -> "Content Too Large";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            default -> "Status";
        };
    }

}
