// WORKERS > 1: /metrics answers for the whole cluster, not for the worker that happened to take the scrape
// (the counts of one worker, then another's, would go backwards between scrapes and break every `rate()`).
// The worker asks the primary over the cluster's IPC channel; the primary asks every worker that answers
// for its registry (prom-client's own request and answer), sums them with prom-client's AggregatorRegistry
// (made for node:cluster: counters and histograms summed, each default metric by its own aggregator) and
// answers with the text. prom-client's `clusterMetrics()` asks every forked worker, and one still starting
// (its answer not yet installed) or stopped makes the whole scrape fail after 5 s. So the request from a
// worker to its primary, and the primary's gathering, are written by hand: docs/decisions.md#cluster-metrics.
import cluster from 'node:cluster';
import {
  AggregatorRegistry,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from 'prom-client';

type ScrapeRequest = { metricsScrape: number };
type ScrapeAnswer = { metricsScraped: number; text?: string; error?: string };
/** A worker's word that it answers the primary's requests for its registry. */
type Answering = { metricsAnswering: true };

/** How long the primary waits for the workers' registries; a worker that is later is summed as last seen. */
const workersWithinMs = 2_000;
/** How long a worker waits for the primary's answer: the primary's wait for the workers, and a second. */
const answerWithinMs = workersWithinMs + 1_000;
/** prom-client's messages between the primary and a worker (its lib/cluster.js). */
const registryRequest = 'prom-client:getMetricsReq';
const registryAnswer = 'prom-client:getMetricsRes';

/**
 * In a worker: the cluster's metrics, asked of the primary (this worker's registry is among them). Outside
 * a cluster: `registry`'s own.
 */
export function clusterScrape(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // installs this worker's answer to the primary's requests
  process.send?.({ metricsAnswering: true } satisfies Answering);
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

/**
 * A send to a worker that died meanwhile fails (EPIPE); without a callback node:cluster emits that as an
 * 'error' on the worker, and the primary, with every worker, would end. Its exit is handled on its own.
 */
const ignoreGone = () => {};

type Metrics = MetricObjectWithValues<MetricValue<string>>[];
/** prom-client's answer of a worker to the primary's request: one list per registry. */
type WorkerMetrics = { type: typeof registryAnswer; requestId: number; metrics?: Metrics[] };

/**
 * In the primary: answers each worker's scrape with every worker's metrics, aggregated. Only workers that
 * said they answer are asked; one that does not answer within `workersWithinMs` (stopped, or busy) is
 * summed as it last answered, so the scrape still answers and no total falls. A worker that dies takes its
 * counts with it, and the sum would fall (Prometheus reads a fall as a reset, and `rate()` counts the whole
 * total again): its counters and histograms as of its last answer stay in the sum.
 */
export function answerClusterScrapes(): void {
  /** Each answering worker's metrics as it last answered. */
  const lastSeen = new Map<number, Metrics>();
  /** What workers that died had counted (counters and histograms only: a gauge ends with its process). */
  let retired: Metrics = [];
  /** Settles once every dead worker's counts are in `retired`. */
  let retiring = Promise.resolve();
  const answering = new Set<number>();
  /** Each request to the workers still waiting: the worker ids not yet answered, and its end. */
  const requests = new Map<number, { waiting: Set<number>; end: () => void }>();
  let next = 0;
  cluster.on('message', (worker, message: Partial<WorkerMetrics & Answering>) => {
    if (message?.metricsAnswering) answering.add(worker.id);
    if (message?.type !== registryAnswer || typeof message.requestId !== 'number') return;
    if (message.metrics) lastSeen.set(worker.id, message.metrics.flat());
    const request = requests.get(message.requestId);
    request?.waiting.delete(worker.id);
    if (request?.waiting.size === 0) request.end();
  });
  cluster.on('exit', (worker) => {
    answering.delete(worker.id);
    for (const request of requests.values()) {
      request.waiting.delete(worker.id);
      if (request.waiting.size === 0) request.end();
    }
    const last = lastSeen.get(worker.id);
    lastSeen.delete(worker.id);
    if (!last) return;
    const counts = last.filter((metric) => ['counter', 'histogram'].includes(String(metric.type)));
    retiring = retiring.then(async () => {
      retired = await AggregatorRegistry.aggregate([retired, counts]).getMetricsAsJSON();
    });
  });
  /** Asks every answering worker for its registry; settles when all answered or `workersWithinMs` passed. */
  const gather = () =>
    new Promise<void>((resolve) => {
      const requestId = next++;
      const waiting = new Set<number>();
      for (const id of answering) {
        const worker = cluster.workers?.[id];
        if (!worker?.isConnected()) continue;
        worker.send({ type: registryRequest, requestId }, undefined, ignoreGone);
        waiting.add(id);
      }
      const end = () => {
        clearTimeout(timer);
        requests.delete(requestId);
        resolve();
      };
      const timer = setTimeout(end, workersWithinMs);
      requests.set(requestId, { waiting, end });
      if (waiting.size === 0) end();
    });
  cluster.on('message', (worker, message: Partial<ScrapeRequest>) => {
    if (typeof message?.metricsScrape !== 'number') return;
    const id = message.metricsScrape;
    Promise.all([gather(), retiring])
      .then(() => AggregatorRegistry.aggregate([...lastSeen.values(), retired]).metrics())
      .then(
        (text) => worker.send({ metricsScraped: id, text } satisfies ScrapeAnswer, undefined, ignoreGone),
        (error: Error) =>
          worker.send(
            { metricsScraped: id, error: error.message } satisfies ScrapeAnswer,
            undefined,
            ignoreGone,
          ),
      );
  });
}
