package dev.weft.dispatch.engine;

import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The outcome of a batch of topic creations, topic by topic (the broker's answers as the admin client gives them). */
class KafkaAdminTest {
    private static KafkaFuture<Void> failed(Throwable t) {
        KafkaFutureImpl<Void> f = new KafkaFutureImpl<>();
        f.completeExceptionally(t);
        return f;
    }

    @Test
    void aPolicyRefusalIsReportedEvenWhenAnotherTopicOfTheBatchExistedAlready() throws Exception {
        Map<String, KafkaFuture<Void>> outcomes = new LinkedHashMap<>();
        // the order all() would meet them in: the "exists" first, which alone used to be looked at
        outcomes.put("g.dlq", failed(new TopicExistsException("Topic 'g.dlq' already exists.")));
        outcomes.put("g.wait.a", failed(new PolicyViolationException("no topics named *.wait.* here")));
        outcomes.put("g.retry.1000", KafkaFuture.completedFuture(null));
        assertThat(KafkaAdmin.refusedCreations(outcomes)).containsExactly(
                "topic g.wait.a: the broker refused to create it: no topics named *.wait.* here");
    }

    @Test
    void topicsMadeByAnotherInstanceAtTheSameMomentAreNotRefusals() throws Exception {
        assertThat(KafkaAdmin.refusedCreations(Map.of(
                "g.dlq", failed(new TopicExistsException("exists")),
                "g.wait.a", KafkaFuture.completedFuture(null)))).isEmpty();
    }

    @Test
    void everyRefusalIsListedSortedByTopic() throws Exception {
        assertThat(KafkaAdmin.refusedCreations(Map.of(
                "b", failed(new PolicyViolationException("no")),
                "a", failed(new org.apache.kafka.common.errors.TopicAuthorizationException("not allowed")))))
                .containsExactly("topic a: the broker refused to create it: not allowed",
                        "topic b: the broker refused to create it: no");
    }

    @Test
    void retiredTopicsKeepTheirRecordsAsLongAsAParkingTopicWould() throws Exception {
        var cfg = dev.weft.dispatch.config.DispatchConfigLoader.parse("t.yaml", """
                source: { bootstrap: "127.0.0.1:9092", topics: [t], group: g }
                endpoints:
                  - { id: a, url: "http://127.0.0.1:1/a", allow_private: true }
                """);
        assertThat(Dispatcher.retiredTopics(cfg, List.of("g.wait.old", "g.retry.5000", "g.retry.1209600000",
                "g.retry.x", "old.dlq"), 3, 1_048_588)).containsExactly(
                new KafkaAdmin.ParkingTopic("g.wait.old", 3, -1, 1_114_124),
                new KafkaAdmin.ParkingTopic("g.retry.5000", 3, 604_800_000L, 1_114_124),
                new KafkaAdmin.ParkingTopic("g.retry.1209600000", 3, 2 * 1_209_600_000L + 86_400_000L, 1_114_124),
                new KafkaAdmin.ParkingTopic("g.retry.x", 3, -1, 1_114_124),
                new KafkaAdmin.ParkingTopic("old.dlq", 3, -1, 1_114_124));
    }
}
