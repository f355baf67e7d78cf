package acme.app.isolated;

/** Loaded by {@code ThreadsApp}'s bundle-like loader, which does not see the agent's boot helpers. */
public final class Isolated {
    private Isolated() {
    }

    public static String make() {
        Thread t = new Thread(() -> { }, "isolated-1");
        return t.getName() + " " + (t.isVirtual() ? "virtual" : "platform");
    }
}
