package dev.weft.dispatch.config;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Refuses webhook targets inside the operator's own network (SSRF): an endpoint URL whose host is, or
 * resolves to, a loopback, link-local (cloud metadata at 169.254.169.254 included), private, unique-local,
 * carrier-grade NAT, unspecified or multicast address. Endpoints with {@code allow_private: true} skip it.
 * Checked when the config is read and again before every attempt (DNS may change after the check).
 */
public final class TargetGuard {
    private TargetGuard() {
    }

    /** Why {@code a} is refused as a target, or null when it is a public address. */
    public static String refusal(InetAddress a) {
        if (a instanceof Inet6Address v6) {
            byte[] b = v6.getAddress();
            boolean mapped = true; // ::ffff:a.b.c.d: judged as the IPv4 address
            for (int i = 0; i < 10; i++) {
                mapped &= b[i] == 0;
            }
            if (mapped && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff) {
                try {
                    return refusal(InetAddress.getByAddress(new byte[]{b[12], b[13], b[14], b[15]}));
                } catch (UnknownHostException e) {
                    throw new IllegalStateException(e);
                }
            }
            if ((b[0] & 0xfe) == 0xfc) {
                return "unique-local";
            }
        }
        if (a.isLoopbackAddress()) {
            return "loopback";
        }
        if (a.isLinkLocalAddress()) {
            return "link-local (cloud metadata lives there)";
        }
        if (a.isSiteLocalAddress()) {
            return "private";
        }
        if (a.isAnyLocalAddress()) {
            return "unspecified";
        }
        if (a.isMulticastAddress()) {
            return "multicast";
        }
        if (a instanceof Inet4Address) {
            byte[] b = a.getAddress();
            int b0 = b[0] & 0xff;
            int b1 = b[1] & 0xff;
            if (b0 == 0) {
                return "this-network (0.0.0.0/8)";
            }
            if (b0 == 100 && b1 >= 64 && b1 < 128) {
                return "carrier-grade NAT (100.64.0.0/10)";
            }
            if (b0 == 198 && (b1 == 18 || b1 == 19)) {
                return "benchmarking (198.18.0.0/15)";
            }
            if (b0 >= 240) {
                return "reserved (240.0.0.0/4)";
            }
        }
        return null;
    }

    /**
     * Why {@code host} is refused: the first of its addresses that is not public, as "HOST is ADDR, KIND";
     * null when every address is public. Throws when the name does not resolve.
     */
    public static String check(String host) throws UnknownHostException {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        for (InetAddress a : InetAddress.getAllByName(h)) {
            String why = refusal(a);
            if (why != null) {
                return h + " is " + a.getHostAddress() + ", " + why;
            }
        }
        return null;
    }
}
