package dev.weft.http;

/**
 * A message body: its bytes (empty when the reader was asked to discard them) and its length.
 */
public record Body(byte[] bytes, long length) {
    public static final Body EMPTY = new Body(new byte[0], 0);
}
