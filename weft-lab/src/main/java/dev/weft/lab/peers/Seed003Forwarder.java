package dev.weft.lab.peers;

import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Seed 003's forwarder, as its article builds it: a batch poll (max.poll.records), every record x every
 * endpoint submitted to a thread pool on a SynchronousQueue (core threads, then new threads up to the
 * maximum, then the caller runs the task), a CountDownLatch per batch that the consumer thread awaits,
 * and a synchronous commit after the whole batch was forwarded. Apache HttpClient 5 classic with a
 * pooling connection manager, as in the article.
 */
public final class Seed003Forwarder implements AutoCloseable {
    public static final int BATCH = 500;
    public static final int CORE_THREADS = 50;
    public static final int MAX_THREADS = 200;

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final CloseableHttpClient http;
    private final ThreadPoolExecutor pool;
    private final List<String> endpoints;
    private final Thread thread;
    private final AtomicLong failed = new AtomicLong();
    private volatile boolean running = true;

    public Seed003Forwarder(String bootstrap, String topic, String group, List<String> endpoints, Duration timeout) {
        this.endpoints = endpoints;
        this.consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, BATCH,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class));
        PoolingHttpClientConnectionManager cm = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnTotal(MAX_THREADS).setMaxConnPerRoute(MAX_THREADS)
                .setDefaultConnectionConfig(ConnectionConfig.custom().setConnectTimeout(Timeout.ofSeconds(2))
                        .setSocketTimeout(Timeout.of(timeout)).build())
                .build();
        this.http = HttpClients.custom().setConnectionManager(cm).setDefaultRequestConfig(RequestConfig.custom()
                .setResponseTimeout(Timeout.of(timeout)).setConnectionRequestTimeout(Timeout.of(timeout)).build())
                .disableAutomaticRetries().build();
        this.pool = new ThreadPoolExecutor(CORE_THREADS, MAX_THREADS, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
                new ThreadPoolExecutor.CallerRunsPolicy());
        consumer.subscribe(List.of(topic));
        this.thread = Thread.ofPlatform().name("seed003-consumer").start(this::run);
    }

    private void run() {
        try {
            while (running) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                if (batch.isEmpty()) {
                    continue;
                }
                CountDownLatch latch = new CountDownLatch(batch.count() * endpoints.size());
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    for (String url : endpoints) {
                        pool.execute(() -> {
                            try {
                                post(url, r.value());
                            } finally {
                                latch.countDown();
                            }
                        });
                    }
                }
                latch.await();
                consumer.commitSync();
            }
        } catch (InterruptedException | org.apache.kafka.common.errors.InterruptException e) {
            // stopping
        } finally {
            consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
        }
    }

    private void post(String url, byte[] body) {
        HttpPost p = new HttpPost(url);
        p.setEntity(new ByteArrayEntity(body, ContentType.APPLICATION_JSON));
        try {
            int status = http.execute(p, resp -> {
                EntityUtils.consume(resp.getEntity());
                return resp.getCode();
            });
            if (status < 200 || status >= 300) {
                failed.incrementAndGet();
            }
        } catch (Exception e) {
            failed.incrementAndGet();
        }
    }

    public long failed() {
        return failed.get();
    }

    @Override
    public void close() throws Exception {
        running = false;
        thread.interrupt();
        thread.join(Duration.ofSeconds(30));
        pool.shutdownNow();
        http.close();
    }
}
