package dev.weft.http;

/**
 * A request head as {@link Http1#readRequestHead} accepted it, with what only HTTP/1.x says about it.
 *
 * @param head      the request line and fields
 * @param framing   how the body that follows the head is delimited
 * @param keepAlive whether the connection may carry another request after this one's answer
 * @param http10    whether the request was HTTP/1.0
 */
public record Http1Request(RequestHead head, Framing framing, boolean keepAlive, boolean http10) {
}
