package dev.weft.server;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** Builds HTTP/1.1 response heads. */
public final class Http1Writer {
    private Http1Writer() {
    }

    /** Status line and headers, ending with the empty line; adds Content-Length and, when closing, Connection. */
    public static byte[] head(int status, List<Map.Entry<String, String>> headers, long contentLength,
                              boolean keepAlive) {
        StringBuilder sb = new StringBuilder(160);
        sb.append("HTTP/1.1 ").append(status).append(' ').append(reasonPhrase(status)).append("\r\n");
        for (Map.Entry<String, String> h : headers) {
            sb.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
        }
        sb.append("Content-Length: ").append(contentLength).append("\r\n");
        if (!keepAlive) {
            sb.append("Connection: close\r\n");
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Head and body in one array, for a single write. */
    public static byte[] response(int status, List<Map.Entry<String, String>> headers, byte[] body, boolean keepAlive) {
        byte[] head = head(status, headers, body.length, keepAlive);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    public static String reasonPhrase(int status) {
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
            case 414 -> "URI Too Long";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            case 505 -> "HTTP Version Not Supported";
            default -> "Status";
        };
    }
}
