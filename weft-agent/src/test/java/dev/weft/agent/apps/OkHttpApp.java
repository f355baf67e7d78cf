package dev.weft.agent.apps;

import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * OkHttp clients making asynchronous calls ({@code enqueue}) to the server at {@code args[0]}: a client at
 * OkHttp's defaults (its dispatcher: 64 calls at once, 5 per host) calls twice, a client made from it with
 * {@code newBuilder()} (the same dispatcher) once, and a client whose own dispatcher allows 1,000 at once and
 * 1,000 per host once; then {@link #PER_REQUEST} clients built one per call (each its own dispatcher at the
 * defaults) once each; then a synchronous call ({@code execute}), which the dispatcher does not bound.
 * Prints {@code okhttp.statuses=[...]} and {@code done}.
 */
public final class OkHttpApp {
    /** Clients built one per request, each with its own default dispatcher. */
    public static final int PER_REQUEST = 20;

    private OkHttpApp() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        OkHttpClient defaults = new OkHttpClient();
        OkHttpClient sameDispatcher = defaults.newBuilder().build();
        Dispatcher large = new Dispatcher();
        large.setMaxRequests(1000);
        large.setMaxRequestsPerHost(1000);
        OkHttpClient raised = new OkHttpClient.Builder().dispatcher(large).build();
        // a client, and so a dispatcher, per request: the same limits each time
        List<OkHttpClient> perRequest = new java.util.ArrayList<>();
        for (int i = 0; i < PER_REQUEST; i++) {
            perRequest.add(new OkHttpClient());
        }

        List<OkHttpClient> callers = new java.util.ArrayList<>(List.of(defaults, defaults, sameDispatcher, raised));
        callers.addAll(perRequest);
        ConcurrentLinkedQueue<Object> statuses = new ConcurrentLinkedQueue<>();
        CountDownLatch answered = new CountDownLatch(callers.size());
        for (OkHttpClient c : callers) {
            c.newCall(new Request.Builder().url(url).build()).enqueue(new Callback() {
                @Override
                public void onResponse(Call call, Response response) {
                    try (response) {
                        statuses.add(response.code());
                    } finally {
                        answered.countDown();
                    }
                }

                @Override
                public void onFailure(Call call, IOException e) {
                    statuses.add(e.toString());
                    answered.countDown();
                }
            });
        }
        if (!answered.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("unanswered after 30 s: " + statuses);
        }
        try (Response r = defaults.newCall(new Request.Builder().url(url).build()).execute()) {
            statuses.add(r.code());
        }
        System.out.println("okhttp.statuses=" + statuses);
        // OkHttp's dispatcher threads are not daemon threads and idle 60 s before they end: let them go now
        for (Dispatcher d : List.of(defaults.dispatcher(), large)) {
            d.executorService().shutdown();
        }
        defaults.connectionPool().evictAll();
        raised.connectionPool().evictAll();
        for (OkHttpClient c : perRequest) {
            c.dispatcher().executorService().shutdown();
            c.connectionPool().evictAll();
        }
        System.out.println("done");
    }
}
