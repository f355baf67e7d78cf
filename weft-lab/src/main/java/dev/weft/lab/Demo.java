package dev.weft.lab;

import dev.weft.core.Durations;
import dev.weft.json.Json;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code weft demo}: {@code lab system-a} with every model at 0, 100, 500 and 1000 ms, the table printed
 * as it is measured, then {@code results/<time>/report.md}, {@code results.json} (one record per model
 * and latency) and {@code throughput.png} (throughput against latency, one line per model, and Little's bound C/L).
 */
public final class Demo {
    /** How long and how hard: the quick run (about three minutes) or the full one. */
    public record Plan(String name, int concurrency, Duration warmup, Duration duration, Duration jitWarmup) {
        public static final Plan QUICK = new Plan("quick", 2000, Duration.ofSeconds(2), Duration.ofSeconds(4),
                Duration.ofSeconds(3));
        public static final Plan FULL = new Plan("full", 4800, Duration.ofSeconds(10), Duration.ofSeconds(10),
                Duration.ofSeconds(8));
    }

    public static final List<Duration> LATENCIES = List.of(Duration.ZERO, Duration.ofMillis(100),
            Duration.ofMillis(500), Duration.ofSeconds(1));

    /** Where a demo wrote its files. */
    public record Output(Path dir, Path report, Path json, Path plot) {
    }

    private Demo() {
    }

    /** Runs the demo; {@code command} is the command line as the user typed it, for the report. */
    public static Output run(Plan plan, List<String> models, Path resultsRoot, String command, PrintWriter out,
                             PrintWriter progress, boolean live) throws Exception {
        String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(Instant.now());
        Path dir = resultsRoot.resolve(stamp);
        Files.createDirectories(dir);
        String machine = Machine.describe();
        out.println("command: " + command);
        out.println("machine: " + machine);
        out.println("run: " + plan.name() + ", " + plan.concurrency() + " concurrent requests; per run a fresh service "
                + "process warmed " + Durations.format(plan.jitWarmup()) + " at 200 in flight, then "
                + Durations.format(plan.warmup()) + " warm-up + " + Durations.format(plan.duration()) + " measured");
        out.println("writing to: " + dir);
        out.println();
        out.flush();
        SystemALab.Options o = new SystemALab.Options(models, LATENCIES, plan.concurrency(), plan.warmup(),
                plan.duration(), plan.jitWarmup());
        boolean[] headerPrinted = {false};
        SystemALab.Report report = SystemALab.run(o, out, progress, live, row -> {
            if (!headerPrinted[0]) {
                out.print(SystemALab.header());
                headerPrinted[0] = true;
            }
            out.print(SystemALab.line(row));
            out.flush();
        });
        if (report.rows().isEmpty()) {
            throw new IOException("no model could be measured: " + report.skipped());
        }
        String summary = SystemALab.summary(report, o);
        out.println(summary);
        Output files = new Output(dir, dir.resolve("report.md"), dir.resolve("results.json"), dir.resolve("throughput.png"));
        List<Map<String, Object>> records = new ArrayList<>();
        for (SystemALab.Row r : report.rows()) {
            records.add(r.json());
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("command", command);
        json.put("machine", machine);
        json.put("run", plan.name());
        json.put("concurrency", plan.concurrency());
        json.put("warmup_s", plan.warmup().toMillis() / 1000.0);
        json.put("duration_s", plan.duration().toMillis() / 1000.0);
        json.put("skipped", report.skipped());
        json.put("results", records);
        Json.MAPPER.writerWithDefaultPrettyPrinter().writeValue(files.json().toFile(), json);
        plot(report, plan.concurrency(), files.plot());
        Files.writeString(files.report(), report(command, machine, plan, SystemALab.describe(models),
                SystemALab.table(report, o)));
        out.println("wrote " + files.report() + ", " + files.json().getFileName() + ", " + files.plot().getFileName());
        out.flush();
        return files;
    }

    private static String report(String command, String machine, Plan plan, String setup, String tables) {
        StringBuilder sb = new StringBuilder();
        sb.append("# weft demo: System A under slow backends\n\n");
        sb.append("- command: `").append(command).append("`\n");
        sb.append("- machine: ").append(machine).append('\n');
        sb.append("- run: ").append(plan.name()).append(", ").append(plan.concurrency())
                .append(" concurrent requests from the load generator; per run a fresh service process warmed ")
                .append(Durations.format(plan.jitWarmup())).append(" at 200 in flight, then ")
                .append(Durations.format(plan.warmup())).append(" warm-up + ").append(Durations.format(plan.duration()))
                .append(" measured\n\n");
        sb.append("```\n").append(setup.strip()).append("\n```\n\n");
        sb.append(tables.strip()).append("\n\n");
        sb.append("![throughput against backend latency](throughput.png)\n\n");
        sb.append("Every figure above was measured in this one run; ratios compare models measured minutes apart on "
                + "the same machine. results.json holds the same numbers, one record per model and latency.\n");
        return sb.toString();
    }

    /**
     * Throughput against backend latency, one line per model, and Little's bound C / L for the closed loop's C
     * requests in flight (dashed): what no design can pass at latency L, so that a reader sees which reach it.
     */
    static void plot(SystemALab.Report report, int concurrency, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        BitmapEncoder.saveBitmap(chart(report, concurrency), png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** The series name of the bound in {@link #chart}. */
    static final String LITTLE = "Little's bound C/L";

    static XYChart chart(SystemALab.Report report, int concurrency) {
        XYChart chart = new XYChartBuilder().width(900).height(540).title("System A: throughput as backends slow down")
                .xAxisTitle("backend latency (ms)").yAxisTitle("requests per second").build();
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideE);
        Map<String, List<double[]>> by = new LinkedHashMap<>();
        double top = 0;
        double maxLatency = 0;
        for (SystemALab.Row r : report.rows()) {
            by.computeIfAbsent(r.model(), k -> new ArrayList<>())
                    .add(new double[] {r.latency().toMillis(), r.result().throughput()});
            top = Math.max(top, r.result().throughput());
            maxLatency = Math.max(maxLatency, r.latency().toMillis());
        }
        for (Map.Entry<String, List<double[]>> e : by.entrySet()) {
            double[] x = e.getValue().stream().mapToDouble(p -> p[0]).toArray();
            double[] y = e.getValue().stream().mapToDouble(p -> p[1]).toArray();
            chart.addSeries(e.getKey(), x, y).setMarker(SeriesMarkers.CIRCLE);
        }
        double[][] bound = littleBound(concurrency, top * 1.25, maxLatency, 60);
        if (bound[0].length > 1) {
            org.knowm.xchart.XYSeries s = chart.addSeries(LITTLE, bound[0], bound[1]);
            s.setMarker(SeriesMarkers.NONE);
            s.setLineStyle(org.knowm.xchart.style.lines.SeriesLines.DASH_DASH);
            s.setLineColor(java.awt.Color.GRAY);
        }
        return chart;
    }

    /**
     * Points of C / L (L in ms, the bound in requests per second) from where it falls below {@code ceiling} (so that
     * its steep start at small L does not flatten the measured lines) to {@code maxLatencyMs}; none when it stays
     * above the ceiling or there is no latency above 0.
     */
    static double[][] littleBound(int concurrency, double ceiling, double maxLatencyMs, int points) {
        if (maxLatencyMs <= 0 || ceiling <= 0 || concurrency * 1000.0 / maxLatencyMs > ceiling) {
            return new double[][] {new double[0], new double[0]};
        }
        double from = Math.max(1, concurrency * 1000.0 / ceiling);
        double[] x = new double[points];
        double[] y = new double[points];
        for (int i = 0; i < points; i++) {
            x[i] = from + (maxLatencyMs - from) * i / (points - 1);
            y[i] = concurrency * 1000.0 / x[i];
        }
        return new double[][] {x, y};
    }
}
