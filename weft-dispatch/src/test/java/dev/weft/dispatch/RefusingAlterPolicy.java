package dev.weft.dispatch;

import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.server.policy.AlterConfigPolicy;

import java.util.Map;

/**
 * The test broker's {@code alter.config.policy.class.name} (it runs on the tests' class path): refuses every config
 * change to a topic whose name starts with {@link #PREFIX}, as a broker without ALTER_CONFIGS permission for the
 * dispatcher would; every other change goes through.
 */
public final class RefusingAlterPolicy implements AlterConfigPolicy {
    public static final String PREFIX = "refused-";

    @Override
    public void validate(RequestMetadata request) throws PolicyViolationException {
        if (request.resource().name().startsWith(PREFIX)) {
            throw new PolicyViolationException("topic configs of " + PREFIX + "* are not changed here (test policy)");
        }
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public void close() {
    }
}
