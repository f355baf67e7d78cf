package dev.weft.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.core.util.RecyclerPool;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.jmh.Defaults;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * What the composer does with each backend's body (parse it) and with the answer (write it), through the shared
 * mapper's buffer pool: {@code shared} is {@link Json#MAPPER}'s pool as built today, {@code bounded} Jackson's
 * shared bounded pool (an ArrayBlockingQueue, one lock), {@code deque} a lock-free concurrent deque (unbounded).
 * Two threads, as the gateway's two carriers.
 */
@Threads(2)
@State(Scope.Benchmark)
public class JsonPoolBench extends Defaults {
    @Param({"shared", "bounded", "deque"})
    public String pool;

    private ObjectMapper mapper;
    private RecyclerPool<BufferRecycler> recyclers;
    private final byte[] body = "{\"id\":42,\"name\":\"b\",\"tags\":[\"x\",\"y\"],\"price\":12.5}"
            .getBytes(StandardCharsets.UTF_8);
    private JsonNode answer;

    @Setup
    public void setup() throws IOException {
        mapper = switch (pool) {
            case "shared" -> Json.MAPPER;
            case "bounded" -> new ObjectMapper(JsonFactory.builder()
                    .recyclerPool(JsonRecyclerPools.newBoundedPool(100)).build());
            case "deque" -> new ObjectMapper(JsonFactory.builder()
                    .recyclerPool(JsonRecyclerPools.newConcurrentDequePool()).build());
            default -> throw new IllegalArgumentException(pool);
        };
        recyclers = mapper.getFactory()._getRecyclerPool();
        answer = mapper.readTree("{\"b\":" + new String(body, StandardCharsets.UTF_8) + ",\"c\":"
                + new String(body, StandardCharsets.UTF_8) + ",\"d\":" + new String(body, StandardCharsets.UTF_8) + "}");
    }

    /** The pool alone: one recycler taken and given back, as each parse and each write does once. */
    @Benchmark
    public BufferRecycler cycle() {
        BufferRecycler r = recyclers.acquireAndLinkPooled();
        r.releaseToPool();
        return r;
    }

    @Benchmark
    public JsonNode parse() throws IOException {
        return mapper.readTree(body);
    }

    @Benchmark
    public byte[] write() throws IOException {
        return mapper.writeValueAsBytes(answer);
    }
}
