package dev.weft.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The one Jackson mapper Weft's modules share.
 *
 * <p>Jackson's default buffer recycler is kept per thread. With a virtual thread per request every
 * request got fresh buffers (12 KB for each body it wrote), so in `weft lab system-a` they were a
 * large part of the gateway's live heap. This mapper recycles buffers through a bounded shared pool
 * instead.
 */
public final class Json {
    public static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .recyclerPool(JsonRecyclerPools.sharedBoundedPool()).build());

    private Json() {
    }
}
