package dev.weft.it;

import dev.weft.client.RequestStream;

/** A streamed request body that never ends: the same run for ever, of no declared length; only a deadline stops it. */
final class EndlessBody implements RequestStream {
    private final byte[] run;

    EndlessBody(int runBytes) {
        this.run = new byte[runBytes];
    }

    @Override
    public byte[] next() {
        return run;
    }

    @Override
    public void cancel() {
    }

    @Override
    public long length() {
        return -1;
    }
}
