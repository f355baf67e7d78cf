package dev.weft.doctor;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The pools weft-agent converted in a JVM, from its MBeans ({@code dev.weft.agent:type=Pool,name="PATTERN"},
 * {@code ,instance=K} for pools that share a pattern). Read by attribute name, so the doctor needs nothing of
 * the agent's classes; a JVM without the agent has no such MBean and gives an empty list. Reading
 * {@code Pinned} starts nothing (-1 until counted): the doctor invokes {@code startPinnedCount} at its window's
 * start ({@link #startPinnedCount}), which starts the agent's one count for all pools unless it runs.
 */
final class AgentPools {
    static final String DOMAIN = "dev.weft.agent";
    private static final String[] ATTRIBUTES = {"ExecutorClass", "Active", "Queued", "Rejected", "Pinned", "Completed",
            "PoolSize", "MaximumPoolSize", "OriginalMaximumPoolSize"};

    private AgentPools() {
    }

    static List<Report.AgentPool> read(MBeanServerConnection mbeans) throws IOException {
        ObjectName query;
        try {
            query = new ObjectName(DOMAIN + ":type=Pool,*");
        } catch (MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
        List<Report.AgentPool> pools = new ArrayList<>();
        for (ObjectName n : mbeans.queryNames(query, null)) {
            Map<String, Object> a = new HashMap<>();
            try {
                AttributeList got = mbeans.getAttributes(n, ATTRIBUTES);
                for (Attribute at : got.asList()) {
                    a.put(at.getName(), at.getValue());
                }
            } catch (InstanceNotFoundException gone) {
                continue; // its pool terminated between the query and the read
            } catch (JMException e) {
                throw new IOException("reading " + n + ": " + e.getMessage(), e);
            }
            pools.add(new Report.AgentPool(name(n), String.valueOf(a.get("ExecutorClass")), integer(a, "Active"),
                    integer(a, "Queued"), number(a, "Rejected"), number(a, "Pinned"), number(a, "Completed"),
                    integer(a, "PoolSize"),
                    integer(a, "MaximumPoolSize"), integer(a, "OriginalMaximumPoolSize")));
        }
        pools.sort(Comparator.comparing(Report.AgentPool::name));
        return List.copyOf(pools);
    }

    /**
     * Invokes {@code startPinnedCount} on one pool (the count is shared by all); nothing without the agent, or with
     * an agent that has no such operation (its {@code Pinned} then reads as it did).
     */
    static void startPinnedCount(MBeanServerConnection mbeans) throws IOException {
        ObjectName query;
        try {
            query = new ObjectName(DOMAIN + ":type=Pool,*");
        } catch (MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
        for (ObjectName n : mbeans.queryNames(query, null)) {
            try {
                mbeans.invoke(n, "startPinnedCount", null, null);
                return;
            } catch (InstanceNotFoundException gone) {
                // its pool terminated between the query and the call: the next one
            } catch (javax.management.ReflectionException older) {
                return; // an agent without the operation
            } catch (JMException e) {
                throw new IOException("starting the pinned count of " + n + ": " + e.getMessage(), e);
            }
        }
    }

    /** The pool's thread-name pattern, with {@code #K} for the K-th pool of that pattern. */
    private static String name(ObjectName n) {
        String name = n.getKeyProperty("name");
        if (name == null) {
            name = n.getCanonicalName();
        } else if (name.startsWith("\"")) {
            name = ObjectName.unquote(name);
        }
        String instance = n.getKeyProperty("instance");
        return instance == null ? name : name + " #" + instance;
    }

    /** -1 when the MBean did not give the attribute (an agent of another version). */
    private static long number(Map<String, Object> a, String key) {
        return a.get(key) instanceof Number v ? v.longValue() : -1;
    }

    private static int integer(Map<String, Object> a, String key) {
        return (int) number(a, key);
    }
}
