package dev.weft.agent.apps;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

/**
 * Embedded servers as applications configure them, knowing nothing of the agent: {@code tomcat} (Tomcat 11, its
 * default connector executor) or {@code jetty} (Jetty 12, a plain QueuedThreadPool). Each answers {@code GET /}
 * with the name of the thread that ran the handler and whether it is virtual. Prints READY and the URL; stops
 * when stdin ends.
 */
public final class ServersApp {
    private ServersApp() {
    }

    static String describe() {
        Thread t = Thread.currentThread();
        return t.getName() + (t.isVirtual() ? " virtual" : " platform");
    }

    public static void main(String[] args) throws Exception {
        AutoCloseable stop;
        int port;
        switch (args[0]) {
            case "tomcat" -> {
                Tomcat tomcat = new Tomcat();
                tomcat.setBaseDir(Files.createTempDirectory("weft-agent-tomcat").toString());
                Connector c = new Connector();
                c.setPort(0);
                c.setProperty("address", "127.0.0.1");
                tomcat.setConnector(c);
                Context ctx = tomcat.addContext("", null);
                Tomcat.addServlet(ctx, "thread", new HttpServlet() {
                    @Override
                    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                        resp.setContentType("text/plain");
                        resp.getWriter().write(describe());
                    }
                });
                ctx.addServletMappingDecoded("/", "thread");
                tomcat.start();
                port = c.getLocalPort();
                stop = () -> {
                    tomcat.stop();
                    tomcat.destroy();
                };
            }
            case "jetty" -> {
                Server s = new Server(new QueuedThreadPool());
                ServerConnector c = new ServerConnector(s);
                c.setHost("127.0.0.1");
                c.setPort(0);
                s.addConnector(c);
                s.setHandler(new Handler.Abstract() { // blocking (the default invocation type)
                    @Override
                    public boolean handle(Request request, Response response, Callback callback) {
                        response.write(true, ByteBuffer.wrap(describe().getBytes(StandardCharsets.UTF_8)), callback);
                        return true;
                    }
                });
                s.start();
                port = c.getLocalPort();
                stop = s::stop;
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
        System.out.println("READY http://127.0.0.1:" + port);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the test closes our stdin
        }
        stop.close();
        System.out.println("stopped");
    }
}
