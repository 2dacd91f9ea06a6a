// Prometheus metrics in the text exposition format: counters, gauges and histograms with a small,
// fixed set of label values (endpoints, domains, outcomes). Never a key, a fingerprint, params
// or customer data: nothing a request sends becomes a label value except through a fixed list.

type Labels = Record<string, string>;

const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labelText = (labels: Labels) => {
  const entries = Object.entries(labels);
  return entries.length === 0 ? '' : `{${entries.map(([name, value]) => `${name}="${escape(value)}"`).join(',')}}`;
};

interface Family {
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  render(name: string): string[];
}

export class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels, value: by });
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.value ?? 0;
  }
  render(name: string): string[] {
    return [...this.values.values()].map(({ labels, value }) => `${name}${labelText(labels)} ${value}`);
  }
}

export class Gauge {
  constructor(private readonly read: () => number) {}
  render(name: string): string[] {
    return [`${name} ${this.read()}`];
  }
}

/** Latency buckets in seconds, from a cached read to a slow write behind retries. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  observe(labels: Labels, seconds: number): void {
    const key = labelText(labels);
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = { labels, counts: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    for (let index = 0; index < BUCKETS.length; index++) if (seconds <= (BUCKETS[index] as number)) (entry.counts[index] as number)++;
    entry.sum += seconds;
    entry.count++;
  }
  render(name: string): string[] {
    const lines: string[] = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      BUCKETS.forEach((bound, index) => lines.push(`${name}_bucket${labelText({ ...labels, le: String(bound) })} ${counts[index]}`));
      lines.push(`${name}_bucket${labelText({ ...labels, le: '+Inf' })} ${count}`, `${name}_sum${labelText(labels)} ${sum}`, `${name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }
}

export class Registry {
  private readonly families = new Map<string, Family & { metric: Counter | Gauge | Histogram }>();
  counter(name: string, help: string): Counter {
    const metric = new Counter();
    this.families.set(name, { help, type: 'counter', metric, render: (n) => metric.render(n) });
    return metric;
  }
  gauge(name: string, help: string, read: () => number): Gauge {
    const metric = new Gauge(read);
    this.families.set(name, { help, type: 'gauge', metric, render: (n) => metric.render(n) });
    return metric;
  }
  histogram(name: string, help: string): Histogram {
    const metric = new Histogram();
    this.families.set(name, { help, type: 'histogram', metric, render: (n) => metric.render(n) });
    return metric;
  }
  render(): string {
    const lines: string[] = [];
    for (const [name, family] of this.families) lines.push(`# HELP ${name} ${family.help}`, `# TYPE ${name} ${family.type}`, ...family.render(name));
    return `${lines.join('\n')}\n`;
  }
}
