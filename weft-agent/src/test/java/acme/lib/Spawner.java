package acme.lib;

/** A library outside {@code threads=acme.app.*}: its {@code new Thread} stays a platform thread. */
public final class Spawner {
    private Spawner() {
    }

    public static Thread make(Runnable r) {
        return new Thread(r, "lib-thread");
    }
}
