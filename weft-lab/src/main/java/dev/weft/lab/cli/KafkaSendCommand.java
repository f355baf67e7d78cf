package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

@Command(name = "send",
        mixinStandardHelpOptions = true,
        description = {"Send records to a topic: one record per line of --file (or standard input), acks=all.",
                "Blank lines are skipped. Exits 1 if any record was not acknowledged.", ""})
public final class KafkaSendCommand implements Runnable {
    /** Lines longer than this are refused (a record per line; Kafka's default max request is 1 MiB). */
    static final int MAX_LINE = 1024 * 1024;

    @Spec
    CommandSpec spec;

    @Option(names = "--bootstrap", paramLabel = "HOST:PORT", description = "Default: ${DEFAULT-VALUE}.")
    String bootstrap = "127.0.0.1:9092";

    @Option(names = "--topic", required = true, paramLabel = "NAME")
    String topic;

    @Option(names = "--type", paramLabel = "TYPE", description = "Add the header type=TYPE to every record.")
    String type;

    @Option(names = "--file", paramLabel = "FILE", description = "Read records from FILE instead of standard input.")
    Path file;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        long sent = 0;
        try (BufferedReader in = file != null ? Files.newBufferedReader(file, StandardCharsets.UTF_8)
                : new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
             KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                     ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                     ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000,
                     ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                     ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            List<Future<RecordMetadata>> pending = new ArrayList<>();
            String line;
            long lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                if (line.length() > MAX_LINE) {
                    throw new UserException((file != null ? file : "stdin") + ":" + lineNo + ": a record line may hold at most "
                            + MAX_LINE + " characters", null, 2);
                }
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, line.getBytes(StandardCharsets.UTF_8));
                if (type != null) {
                    r.headers().add(new RecordHeader("type", type.getBytes(StandardCharsets.UTF_8)));
                }
                pending.add(p.send(r));
                if (pending.size() >= 10_000) {
                    sent += settle(pending);
                }
            }
            sent += settle(pending);
        } catch (IOException e) {
            throw new UserException("reading records: " + e.getMessage(), e, 2);
        } catch (ExecutionException | org.apache.kafka.common.KafkaException e) {
            throw new UserException("sending to " + topic + " on " + bootstrap + " failed after " + sent + " records: "
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new UserException("sending to " + topic + " on " + bootstrap + ": no acknowledgement in time", e);
        }
        out.println("weft kafka send: " + sent + " records to " + topic + " on " + bootstrap);
    }

    private static long settle(List<Future<RecordMetadata>> pending)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        for (Future<RecordMetadata> f : pending) {
            f.get(60, TimeUnit.SECONDS);
        }
        long n = pending.size();
        pending.clear();
        return n;
    }
}
