package dev.weft.gateway.config;

import java.net.InetSocketAddress;

/**
 * The admin listener ({@code admin:}): {@code /-/health}, {@code /-/ready}, {@code /-/metrics},
 * {@code /-/routes} and {@code /-/threads} are served there and no longer on the public port.
 *
 * @param tokenEnv the environment variable holding the bearer token, or null for no token
 * @param token    its value as read when the config was loaded (null when {@code tokenEnv} is null)
 */
public record AdminConfig(InetSocketAddress listen, String tokenEnv, String token) {
    public static final InetSocketAddress DEFAULT_LISTEN = new InetSocketAddress("127.0.0.1", 9901);

    @Override
    public String toString() {
        return "admin(" + listen + (tokenEnv != null ? ", token from $" + tokenEnv : "") + ")";
    }
}
