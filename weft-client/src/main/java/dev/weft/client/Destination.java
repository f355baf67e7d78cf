package dev.weft.client;

import java.net.URI;
import java.util.Locale;

/**
 * Where calls go: scheme, host and port. Limits, pools, breakers and metrics are kept per destination,
 * so a slow or dead one uses up only its own.
 */
public record Destination(String scheme, String host, int port) {

    public Destination {
        scheme = scheme.toLowerCase(Locale.ROOT);
        host = host.toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("scheme must be http or https, got '" + scheme + "'");
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("host is missing");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be 1..65535, got " + port);
        }
    }

    /** The destination of a URL such as {@code http://127.0.0.1:9001/b?x=1} (or just {@code http://host:port}). */
    public static Destination of(String url) {
        return of(URI.create(url));
    }

    public static Destination of(URI uri) {
        if (uri.getScheme() == null || uri.getHost() == null) {
            throw new IllegalArgumentException("expected an absolute http(s) URL, got '" + uri + "'");
        }
        String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
        int port = uri.getPort() != -1 ? uri.getPort() : defaultPort(scheme);
        return new Destination(scheme, uri.getHost(), port);
    }

    /** {@code scheme://host:port}, the name used in metrics and errors. */
    public String key() {
        return scheme + "://" + urlHost() + ":" + port;
    }

    /** The Host header's value: the host, and the port unless it is the scheme's default. */
    public String authority() {
        return port == defaultPort(scheme) ? urlHost() : urlHost() + ":" + port;
    }

    /** The host as it is written in a URL: an IPv6 address in brackets. */
    private String urlHost() {
        return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    private static int defaultPort(String scheme) {
        return scheme.equals("https") ? 443 : 80;
    }

    @Override
    public String toString() {
        return key();
    }
}
