// WORKERS > 1: /metrics answers for the whole cluster, not for the worker that happened to take the scrape
// (the counts of one worker, then another's, would go backwards between scrapes and break every `rate()`).
// The worker asks the primary over the cluster's IPC channel; the primary gathers every worker's registry
// with prom-client's AggregatorRegistry (made for node:cluster: counters and histograms summed, each
// default metric by its own aggregator) and answers with the text. Written by hand (the request from a
// worker to its primary): docs/decisions.md#cluster-metrics.
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

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

/** In the primary: answers each worker's scrape with every worker's metrics, aggregated. */
export function answerClusterScrapes(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: Partial<ScrapeRequest>) => {
    if (typeof message?.metricsScrape !== 'number') return;
    const id = message.metricsScrape;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ metricsScraped: id, text } satisfies ScrapeAnswer),
      (error: Error) => worker.send({ metricsScraped: id, error: error.message } satisfies ScrapeAnswer),
    );
  });
}
