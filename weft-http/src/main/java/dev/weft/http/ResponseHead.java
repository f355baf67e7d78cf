package dev.weft.http;

/**
 * The status and header fields of a final response, whichever protocol brought it. How the body is framed and
 * whether the connection stays open belong to the HTTP/1.1 codec ({@link Http1Response}).
 *
 * @param status  100-999
 * @param headers the fields in arrival order, names as sent, values without surrounding whitespace
 */
public record ResponseHead(int status, Headers headers) {
}
