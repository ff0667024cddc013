// WORKERS > 1: /metrics answers for the whole cluster, not for the worker that happened to take the scrape
// (the counts of one worker, then another's, would go backwards between scrapes and break every `rate()`).
// The worker asks the primary over the cluster's IPC channel; the primary gathers every worker's registry
// with prom-client's AggregatorRegistry (made for node:cluster: counters and histograms summed, each
// default metric by its own aggregator) and answers with the text. Written by hand (the request from a
// worker to its primary): docs/decisions.md#cluster-metrics.
import cluster from 'node:cluster';
import {
  AggregatorRegistry,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from 'prom-client';

type ScrapeRequest = { metricsScrape: number };
type ScrapeAnswer = { metricsScraped: number; text?: string; error?: string };

/** How long a worker waits for the primary's answer: prom-client's own wait for the workers, and a second. */
const answerWithinMs = 6_000;

/**
 * In a worker: the cluster's metrics, asked of the primary (this worker's registry is among them). Outside
 * a cluster: `registry`'s own.
 */
export function clusterScrape(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // installs this worker's answer to the primary's requests
  let next = 0;
  const waiting = new Map<number, (answer: ScrapeAnswer) => void>();
  process.on('message', (message: Partial<ScrapeAnswer>) => {
    if (typeof message?.metricsScraped === 'number')
      waiting.get(message.metricsScraped)?.(message as ScrapeAnswer);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(
        () => settle({ metricsScraped: id, error: 'the primary did not answer' }),
        answerWithinMs,
      );
      function settle(answer: ScrapeAnswer) {
        clearTimeout(timer);
        waiting.delete(id);
        if (answer.text === undefined) reject(new Error(`cluster metrics: ${answer.error}`));
        else resolve(answer.text);
      }
      waiting.set(id, settle);
      process.send?.({ metricsScrape: id } satisfies ScrapeRequest);
    });
}

type Metrics = MetricObjectWithValues<MetricValue<string>>[];
/** prom-client's answer of a worker to the AggregatorRegistry's request: one list per registry (its lib/cluster.js). */
type WorkerMetrics = { type: 'prom-client:getMetricsRes'; metrics: Metrics[] };

/**
 * In the primary: answers each worker's scrape with every worker's metrics, aggregated. A worker that dies
 * takes its counts with it, and the sum would fall (Prometheus reads a fall as a reset, and `rate()`
 * counts the whole total again): its counters and histograms as of its last scrape stay in the sum.
 */
export function answerClusterScrapes(): void {
  const aggregator = new AggregatorRegistry();
  /** Each live worker's metrics as it last answered a scrape. */
  const lastSeen = new Map<number, Metrics>();
  /** What workers that died had counted (counters and histograms only: a gauge ends with its process). */
  let retired: Metrics = [];
  cluster.on('message', (worker, message: Partial<WorkerMetrics>) => {
    if (message?.type === 'prom-client:getMetricsRes' && message.metrics)
      lastSeen.set(worker.id, message.metrics.flat());
  });
  cluster.on('exit', (worker) => {
    const last = lastSeen.get(worker.id);
    lastSeen.delete(worker.id);
    if (!last) return;
    const counts = last.filter((metric) => ['counter', 'histogram'].includes(String(metric.type)));
    void AggregatorRegistry.aggregate([retired, counts])
      .getMetricsAsJSON()
      .then((sum) => {
        retired = sum as Metrics;
      });
  });
  cluster.on('message', (worker, message: Partial<ScrapeRequest>) => {
    if (typeof message?.metricsScrape !== 'number') return;
    const id = message.metricsScrape;
    aggregator
      .clusterMetrics() // every live worker answers: lastSeen is now this scrape's
      .then(() => AggregatorRegistry.aggregate([...lastSeen.values(), retired]).metrics())
      .then(
        (text) => worker.send({ metricsScraped: id, text } satisfies ScrapeAnswer),
        (error: Error) => worker.send({ metricsScraped: id, error: error.message } satisfies ScrapeAnswer),
      );
  });
}
