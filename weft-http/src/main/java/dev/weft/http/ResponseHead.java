package dev.weft.http;

import java.util.List;
import java.util.Map;

/**
 * The status line and header fields of an HTTP/1.x response, as {@link Http1#readResponseHead} accepted them
 * (interim 1xx answers already skipped).
 *
 * @param status    100-999
 * @param headers   names as sent to values (surrounding whitespace removed), in arrival order
 * @param framing   how the body is delimited (already {@link Framing#NONE} for HEAD, 204 and 304)
 * @param keepAlive whether the connection may carry another request after this body
 */
public record ResponseHead(int status, List<Map.Entry<String, String>> headers, Framing framing,
                           boolean keepAlive) {
}
