package dev.weft.os;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The TCP sockets of this machine's network namespace as Linux lists them in {@code /proc/net/tcp} and
 * {@code /proc/net/tcp6}: what a test waits on where a socket's state cannot be seen from Java — whether the peer
 * has acknowledged every byte written (the send queue is empty), whether a peer's reset ended a connection. Linux
 * only ({@link #available()}); a test helper, shared through weft-os's test-jar.
 */
public final class TcpTable {
    private static final Path TCP = Path.of("/proc/net/tcp");
    private static final Path TCP6 = Path.of("/proc/net/tcp6");
    /** The kernel's TCP_ESTABLISHED ({@code include/net/tcp_states.h}). */
    private static final int ESTABLISHED = 0x01;

    private TcpTable() {
    }

    /**
     * One socket's row.
     *
     * @param txQueue bytes written and not yet acknowledged by the peer (for a connected socket)
     * @param rxQueue bytes received and not yet read by the process that holds the socket
     */
    public record Entry(InetSocketAddress local, InetSocketAddress remote, int state, long txQueue, long rxQueue) {
        public boolean established() {
            return state == ESTABLISHED;
        }
    }

    /** Whether this machine lists its sockets where {@link #read()} looks (Linux). */
    public static boolean available() {
        return Files.isReadable(TCP);
    }

    /** Every TCP socket of both tables now (IPv4-mapped IPv6 addresses read as IPv4, as Java reports them). */
    public static List<Entry> read() throws IOException {
        List<Entry> all = new ArrayList<>();
        for (Path p : List.of(TCP, TCP6)) {
            if (!Files.isReadable(p)) {
                continue;
            }
            List<String> lines = Files.readAllLines(p);
            for (String line : lines.subList(1, lines.size())) {
                all.add(parse(line));
            }
        }
        return all;
    }

    /** The row of a connected socket of this process (matched by its two addresses), if listed. */
    public static Optional<Entry> of(Socket s) throws IOException {
        InetSocketAddress local = new InetSocketAddress(s.getLocalAddress(), s.getLocalPort());
        InetSocketAddress remote = (InetSocketAddress) s.getRemoteSocketAddress();
        return read().stream().filter(e -> e.local().equals(local) && e.remote().equals(remote)).findFirst();
    }

    /** The row of the other end of a loopback connection {@code s} (the server's socket for a client's), if listed. */
    public static Optional<Entry> peerOf(Socket s) throws IOException {
        InetSocketAddress local = new InetSocketAddress(s.getLocalAddress(), s.getLocalPort());
        InetSocketAddress remote = (InetSocketAddress) s.getRemoteSocketAddress();
        return read().stream().filter(e -> e.local().equals(remote) && e.remote().equals(local)).findFirst();
    }

    // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ..."
    // "   0: 0100007F:1F90 0100007F:A2C4 01 00000000:00000000 ..."
    static Entry parse(String line) {
        String[] f = line.trim().split("\\s+");
        String[] queues = f[4].split(":");
        return new Entry(address(f[1]), address(f[2]), Integer.parseInt(f[3], 16), Long.parseLong(queues[0], 16),
                Long.parseLong(queues[1], 16));
    }

    /** {@code HEX:PORT}: the address as 32-bit words in the kernel's (little-endian) order, the port in hex. */
    private static InetSocketAddress address(String field) {
        int colon = field.indexOf(':');
        byte[] words = HexFormat.of().parseHex(field.substring(0, colon));
        byte[] address = new byte[words.length];
        for (int w = 0; w < words.length; w += 4) {
            for (int b = 0; b < 4; b++) {
                address[w + b] = words[w + 3 - b];
            }
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(address),
                    Integer.parseInt(field.substring(colon + 1), 16));
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + field, e);
        }
    }
}
