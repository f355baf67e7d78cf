package dev.weft.http;

/**
 * A response head as {@link Http1#readResponseHead} accepted it (interim 1xx answers already skipped), with what
 * only HTTP/1.x says about it.
 *
 * @param head      the status and fields
 * @param framing   how the body is delimited (already {@link Framing#NONE} for HEAD, 204 and 304)
 * @param keepAlive whether the connection may carry another request after this body
 */
public record Http1Response(ResponseHead head, Framing framing, boolean keepAlive) {
}
