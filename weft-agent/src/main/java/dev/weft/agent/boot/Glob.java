package dev.weft.agent.boot;

/** Shell-style globs for {@code exclude=} and {@code threads=}: {@code *} any run of characters, {@code ?} one character. */
public final class Glob {
    private Glob() {
    }

    public static boolean matches(String glob, String text) {
        return matches(glob, 0, text, 0);
    }

    private static boolean matches(String g, int gi, String t, int ti) {
        while (gi < g.length()) {
            char c = g.charAt(gi);
            if (c == '*') {
                for (int k = ti; k <= t.length(); k++) {
                    if (matches(g, gi + 1, t, k)) {
                        return true;
                    }
                }
                return false;
            }
            if (ti >= t.length() || (c != '?' && c != t.charAt(ti))) {
                return false;
            }
            gi++;
            ti++;
        }
        return ti == t.length();
    }
}
