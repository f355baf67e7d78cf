package dev.weft.core;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version of the running build, from {@code /weft-version.properties} (weft-cli carries it into the product jar). */
public final class WeftVersion {
    private WeftVersion() {
    }

    /**
     * The version, or null where the file is not on the class path (classes run outside the product jar, in tests)
     * or cannot be read.
     */
    public static String get() {
        Properties p = new Properties();
        try (InputStream in = WeftVersion.class.getResourceAsStream("/weft-version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            return null;
        }
        return p.getProperty("version");
    }
}
