package dev.weft.client;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The TCP socket under a TLS connection, which follows the TLS records the TLS layer reads from it: whether that layer
 * holds part of a record. The probe of a TLS connection that never served an exchange ({@link Connection}) reads
 * through TLS with a timeout of 1 ms per read; a timeout between records says the server sent whole records only (a
 * TLS 1.3 server's session tickets), one inside a record says it was sending something when the read gave up (a
 * record dribbled with pauses), which must not be left for the next call's read.
 *
 * <p>Only the TLS layer reads this stream, one thread at a time; following the records costs a few comparisons per
 * read (a record's header is looked at, its body skipped in one step). Plain connections use a plain socket.
 */
final class RecordTrackingSocket extends Socket {
    private static final int HEADER_BYTES = 5;
    private final AtomicReference<Tracking> in = new AtomicReference<>();
    /** Bytes of the current record's header read so far: 0 between records, 5 in its body. */
    private int headerRead;
    /** The current record's length, from its header. */
    private int length;
    /** Bytes of the current record's body not read yet. */
    private int bodyLeft;

    @Override
    public InputStream getInputStream() throws IOException {
        Tracking t = in.get();
        if (t == null) {
            in.compareAndSet(null, new Tracking(super.getInputStream()));
            t = in.get(); // one stream, whoever asked first: the records are followed once
        }
        return t;
    }

    /** Whether the TLS layer has read whole records only (none of the current one yet). */
    boolean betweenRecords() {
        return headerRead == 0;
    }

    private void saw(byte[] b, int off, int n) {
        int i = off;
        int end = off + n;
        while (i < end) {
            if (headerRead < HEADER_BYTES) {
                if (headerRead == 3) {
                    length = (b[i] & 0xff) << 8;
                } else if (headerRead == 4) {
                    length |= b[i] & 0xff;
                    bodyLeft = length;
                }
                headerRead++;
                i++;
            } else {
                int k = Math.min(bodyLeft, end - i);
                bodyLeft -= k;
                i += k;
            }
            if (headerRead == HEADER_BYTES && bodyLeft == 0) {
                headerRead = 0; // the record is whole
            }
        }
    }

    private final class Tracking extends FilterInputStream {
        Tracking(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int c = in.read();
            if (c >= 0) {
                saw(new byte[] {(byte) c}, 0, 1);
            }
            return c;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                saw(b, off, n);
            }
            return n;
        }
    }
}
