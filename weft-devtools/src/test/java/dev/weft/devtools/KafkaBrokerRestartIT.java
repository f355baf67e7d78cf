package dev.weft.devtools;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 of a broker that advertises another address than it binds (as weft lab chaos's does: a proxy's), then a
 * restart on the same directory and port: it starts, and an acknowledged record is still there.
 */
class KafkaBrokerRestartIT {
    @Test
    void aBrokerKilledRestartsOnItsDirectoryAndPortWithItsRecords(@TempDir Path dir) throws Exception {
        KafkaBroker first = KafkaBroker.start(dir, new InetSocketAddress("127.0.0.1", 0));
        String bootstrap = first.bootstrap();
        int port = Integer.parseInt(bootstrap.substring(bootstrap.lastIndexOf(':') + 1));
        first.close();
        // the advertised address differs from the listener (same port, another name for loopback)
        KafkaBroker broker = KafkaBroker.start(dir, new InetSocketAddress("127.0.0.1", port),
                Map.of("advertised.listeners", "PLAINTEXT://localhost:" + port));
        try {
            broker.createTopic("kept", 1);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
                p.send(new ProducerRecord<>("kept", "k", "acknowledged")).get(30, TimeUnit.SECONDS);
            }
            broker.kill();
            broker = broker.restart();
            assertThat(broker.bootstrap()).isEqualTo(bootstrap);
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                    ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
                TopicPartition tp = new TopicPartition("kept", 0);
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                List<String> values = new ArrayList<>();
                long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (values.isEmpty() && System.nanoTime() < end) {
                    ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(500));
                    rs.forEach(r -> values.add(r.value()));
                }
                assertThat(values).containsExactly("acknowledged");
            }
        } finally {
            broker.close();
        }
    }
}
