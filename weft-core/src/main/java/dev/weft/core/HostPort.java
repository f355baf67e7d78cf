package dev.weft.core;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** Listen addresses as people write them: {@code 127.0.0.1:9001}, {@code :9001}, {@code [::1]:9001}. */
public final class HostPort {
    private HostPort() {
    }

    /** One address; an empty host means 127.0.0.1 (Weft listens on loopback unless told otherwise). */
    public static InetSocketAddress parse(String text) {
        String t = text.strip();
        int colon = t.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("expected HOST:PORT such as 127.0.0.1:9001, got '" + text + "'");
        }
        String host = t.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty()) {
            host = "127.0.0.1";
        }
        int port;
        try {
            port = Integer.parseInt(t.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected HOST:PORT with a port number, got '" + text + "'");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535 (0 picks a free one), got " + port);
        }
        return new InetSocketAddress(host, port);
    }

    /** A comma-separated list of addresses. */
    public static List<InetSocketAddress> parseList(String text) {
        List<InetSocketAddress> out = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                out.add(parse(part));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("expected at least one HOST:PORT");
        }
        return out;
    }

    /** {@code host:port} with the literal address, as used in URLs. */
    public static String format(InetSocketAddress a) {
        String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
