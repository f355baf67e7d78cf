package dev.weft.lab.chaos;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.weft.json.Json;
import dev.weft.lab.peers.GoPeers;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * A Toxiproxy server (github.com/Shopify/toxiproxy/v2) in a child process, driven through its REST API. The binary
 * comes from {@code lab/chaos/install-toxiproxy.sh} (which {@code go install}s it from the Go module proxy once).
 */
public final class Toxiproxy implements AutoCloseable {
    /** Why Toxiproxy cannot run here (no Go to install it, no source tree): a skip reason, not a failure. */
    public static final class Unavailable extends Exception {
        public Unavailable(String message) {
            super(message);
        }
    }

    private final Process process;
    private final String api;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Toxiproxy(Process process, String api) {
        this.process = process;
        this.api = api;
    }

    /** Installs the server when missing (exit 3 of the script: no Go), starts it on a free loopback port. */
    public static Toxiproxy start() throws Unavailable, IOException, InterruptedException {
        Path home;
        try {
            home = GoPeers.home();
        } catch (GoPeers.Unavailable e) {
            throw new Unavailable(e.getMessage());
        }
        Process install = new ProcessBuilder(home.resolve("lab/chaos/install-toxiproxy.sh").toString())
                .redirectError(ProcessBuilder.Redirect.PIPE).start();
        String bin = new String(install.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        String err = new String(install.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        int rc = install.waitFor();
        if (rc == 3) {
            throw new Unavailable(err);
        }
        if (rc != 0) {
            throw new IOException("lab/chaos/install-toxiproxy.sh failed (exit " + rc + "): " + err);
        }
        int port = freePort();
        Process p = new ProcessBuilder(bin, "-host", "127.0.0.1", "-port", Integer.toString(port))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Toxiproxy t = new Toxiproxy(p, "http://127.0.0.1:" + port);
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            try {
                t.call("GET", "/version", null);
                return t;
            } catch (IOException e) {
                if (System.nanoTime() > end || !p.isAlive()) {
                    p.destroyForcibly();
                    throw new IOException("toxiproxy-server " + bin + " did not answer on " + t.api + " in 20 s", e);
                }
                Thread.sleep(100);
            }
        }
    }

    /** A free TCP port on 127.0.0.1 (free when asked; the caller binds it soon after). */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    /** Creates proxy {@code name} listening on {@code 127.0.0.1:listenPort}, forwarding to {@code upstream} (host:port). */
    public void proxy(String name, int listenPort, String upstream) throws IOException, InterruptedException {
        ObjectNode b = Json.MAPPER.createObjectNode().put("name", name).put("listen", "127.0.0.1:" + listenPort)
                .put("upstream", upstream).put("enabled", true);
        call("POST", "/proxies", b.toString());
    }

    /** Removes proxy {@code name} (it stops listening). */
    public void removeProxy(String name) throws IOException, InterruptedException {
        call("DELETE", "/proxies/" + name, "");
    }

    /** Adds toxic {@code toxic} of {@code type} to {@code proxy} on {@code stream} (upstream or downstream). */
    public void addToxic(String proxy, String toxic, String type, String stream, Map<String, Long> attributes)
            throws IOException, InterruptedException {
        ObjectNode b = Json.MAPPER.createObjectNode().put("name", toxic).put("type", type).put("stream", stream)
                .put("toxicity", 1.0);
        ObjectNode a = b.putObject("attributes");
        attributes.forEach(a::put);
        call("POST", "/proxies/" + proxy + "/toxics", b.toString());
    }

    /** Removes every toxic of every proxy and enables them all. */
    public void reset() throws IOException, InterruptedException {
        call("POST", "/reset", "");
    }

    private String call(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(api + path)).timeout(Duration.ofSeconds(10));
        r = body == null ? r.GET() : r.method(method, HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        HttpResponse<String> resp = http.send(r.build(), HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() / 100 != 2) {
            throw new IllegalStateException("toxiproxy " + method + " " + path + ": " + resp.statusCode() + " " + resp.body());
        }
        return resp.body();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
