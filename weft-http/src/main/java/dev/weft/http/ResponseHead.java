package dev.weft.http;

/**
 * The status line and header fields of an HTTP/1.x response, as {@link Http1#readResponseHead} accepted them
 * (interim 1xx answers already skipped).
 *
 * @param status    100-999
 * @param headers   the fields in arrival order, names as sent, values without surrounding whitespace
 * @param framing   how the body is delimited (already {@link Framing#NONE} for HEAD, 204 and 304)
 * @param keepAlive whether the connection may carry another request after this body
 */
public record ResponseHead(int status, Headers headers, Framing framing, boolean keepAlive) {
}
