// What the pages show, read from the inbox's store, the service (a client) and the sync history.
// Every store read is one indexed query (counts, hourly buckets, keyset pages), so that a page
// answers in well under a second with a million entries.
import type { Inbox } from '../inbox/create-inbox.ts';
import { inboxInternals, type InboxInternals } from '../inbox/create-inbox.ts';
import { inboxAttention, WORKER_ALIVE_MS, type InboxAttention } from '../inbox/health.ts';
import type { InboxAction, InboxActivityBucket, InboxEntry, InboxEntryStatus, InboxPageRequest, InboxStats, MissedRecord } from '../inbox/store.ts';
import type { Health } from '../schemas/health.ts';
import type { WebhookDelivery, WebhookEndpoint, WebhookTestResult } from '../schemas/webhooks.ts';
import { ConfigurationError } from '../errors/integration-error.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const STATUSES: readonly InboxEntryStatus[] = ['pending', 'processing', 'done', 'dead'];
/** Open missed deliveries the overview lists (each with its acknowledge button). */
export const MISSED_LISTED = 100;

/** The part of an `IntegrationClient` the dashboard calls (an `IntegrationClient` fits). */
export interface DashboardClient {
  health(options?: { signal?: AbortSignal }): Promise<Health>;
  webhooks: {
    list(options?: { signal?: AbortSignal }): Promise<WebhookEndpoint[]>;
    deliveries(webhookId: string, options?: { limit?: number; signal?: AbortSignal }): Promise<WebhookDelivery[]>;
    test(webhookId: string, options?: { signal?: AbortSignal }): Promise<WebhookTestResult>;
  };
}

/**
 * One run of `sync.runs()`, read tolerantly: its id, kind, times and outcome; every other numeric
 * field (total, unchanged, sent, created, updated, errors, orphans) is shown as a count.
 */
export interface DashboardSyncRun {
  runId: string;
  kind?: string;
  startedAt?: number | string | Date | null;
  finishedAt?: number | string | Date | null;
  outcome?: string | null;
  /** Why it failed, when it did. */
  error?: string | null;
}

/** One rejected item of `sync.runErrors(runId)`. */
export interface DashboardSyncRunError {
  index: number;
  external_id: string;
  store_id?: string | null;
  code: string;
  message: string;
}

/** The part of a sync (`createSync`) the dashboard reads. */
export interface DashboardSync {
  runs(options: { limit: number }): AsyncIterable<DashboardSyncRun>;
  runErrors(runId: string): AsyncIterable<DashboardSyncRunError>;
}

/** The inbox's store, with the dashboard's queries checked at construction. */
export type DashboardStore = InboxInternals;

export function storeOf(inbox: Inbox): DashboardStore {
  const internals = inbox && typeof inbox === 'object' ? inboxInternals(inbox) : undefined;
  if (!internals) throw new ConfigurationError('createDashboard needs { inbox }: an inbox made by createInbox from integration-sdk/inbox.');
  const missing = (['page', 'activity', 'workers', 'recordAction', 'actions'] as const).filter((method) => typeof internals.store[method] !== 'function');
  if (missing.length > 0) {
    throw new ConfigurationError(`createDashboard: this inbox's store lacks ${missing.join(', ')} (optional InboxStore methods the dashboard reads); the shipped SQLite and Postgres stores have them.`);
  }
  return internals;
}

export interface WorkerSummary {
  lastSeenAt: number | null;
  lastClaimAt: number | null;
  /** Workers seen in the last minute. */
  alive: number;
  /** Whether any worker took work in the last minute. */
  claimedLastMinute: boolean;
}

export interface Activity {
  /** The last 24 hours, one bucket per hour, oldest first. */
  hourly: InboxActivityBucket[];
  /** The last 7 days (UTC), one bucket per day, oldest first. */
  daily: InboxActivityBucket[];
}

export interface Overview {
  now: number;
  stats: InboxStats;
  activity: Activity;
  workers: WorkerSummary;
  actions: InboxAction[];
  /** What needs attention in the inbox, by the rules `doctor --store` shares (src/inbox/health.ts). */
  attention: InboxAttention[];
  /** The open missed deliveries (`inbox.missed()`), oldest first, the first {@link MISSED_LISTED}. */
  missed: MissedRecord[];
}

/** After this long, the buckets of hours already over are counted again, in the background. */
export const CLOSED_HOURS_TTL_MS = 5 * 60_000;

interface ClosedHours {
  since: number;
  /** The end of the last hour counted (the start of the hour under way when counted). */
  until: number;
  at: number;
  buckets: InboxActivityBucket[];
}

/**
 * The hourly buckets of the last 7 days. An hour that is over changes only when an entry of it is
 * retried or deleted, so the hours already over are counted once (on the first read, which a new
 * dashboard starts at once), then each read counts only the hour under way and any hour that ended
 * since. Every {@link CLOSED_HOURS_TTL_MS}, and after this dashboard's own actions, the week is
 * counted again in the background while reads go on with the counts they have. With a million
 * entries that is the difference between a few milliseconds and a few hundred.
 */
export function createActivityReader(source: DashboardStore) {
  let closed: ClosedHours | undefined;
  let counting: Promise<ClosedHours> | undefined;
  const count = (since: number, until: number, now: number): Promise<ClosedHours> => {
    counting ??= (async () => {
      try {
        const buckets = until > since ? await source.store.activity!({ since, until, bucketMs: HOUR }) : [];
        closed = { since, until, at: now, buckets };
        return closed;
      } finally {
        counting = undefined;
      }
    })();
    return counting;
  };
  return {
    /** Counts the week again at the next read (after an action that changed past hours). */
    invalidate(): void {
      if (closed) closed.at = -Infinity;
    },
    /** Starts the first count before anyone asks. */
    prefetch(now: number, since: number): void {
      count(since, Math.floor(now / HOUR) * HOUR, now).catch(() => {});
    },
    async read(now: number, since: number): Promise<InboxActivityBucket[]> {
      const hourStart = Math.floor(now / HOUR) * HOUR;
      let known = closed && closed.since <= since && closed.until <= hourStart ? closed : await count(since, hourStart, now);
      if (known.until < hourStart) {
        // Hours that ended since the last count: only those (unless another read added them meanwhile).
        const from = known.until;
        const added = await source.store.activity!({ since: from, until: hourStart, bucketMs: HOUR });
        const latest: ClosedHours = closed ?? known;
        known = latest.until >= hourStart ? latest : { ...latest, until: hourStart, buckets: [...latest.buckets.filter((bucket) => bucket.start < from), ...added] };
        closed = known;
      }
      if (now - known.at >= CLOSED_HOURS_TTL_MS && !counting) count(since, hourStart, now).catch(() => {});
      const current = await source.store.activity!({ since: hourStart, until: hourStart + HOUR, bucketMs: HOUR });
      return [...known.buckets.filter((bucket) => bucket.start >= since), ...current];
    },
  };
}

/** The start of the 7 UTC days the overview charts: today and the 6 before. */
export function weekStart(now: number): number {
  return Math.floor(now / DAY) * DAY - 6 * DAY;
}

/** The open missed deliveries, of one tenant's endpoints when `tenant` is given. */
export function openMissed(inbox: Inbox, tenant: string | undefined): Promise<MissedRecord[]> {
  return inbox.missed(tenant === undefined ? {} : { tenant });
}

/** The overview: of every tenant's entries, or of `tenant`'s (the activity and the action log are always the whole inbox's). */
export async function readOverview(source: DashboardStore, activity: ReturnType<typeof createActivityReader>, inbox: Inbox, tenant?: string): Promise<Overview> {
  await source.ready();
  const now = source.clock.now();
  const { store } = source;
  const since = weekStart(now);
  const [stats, buckets, workers, actions, missed] = await Promise.all([
    store.stats(now, tenant === undefined ? undefined : { tenant }),
    activity.read(now, since),
    store.workers!(),
    store.actions!(10),
    openMissed(inbox, tenant),
  ]);
  const attention = inboxAttention({ stats, workers, missed, now });
  return { now, stats, activity: activityOf(buckets, now, since), workers: workersOf(workers, now), actions, attention, missed: missed.slice(0, MISSED_LISTED) };
}

function activityOf(buckets: InboxActivityBucket[], now: number, since: number): Activity {
  const byStart = new Map(buckets.map((bucket) => [bucket.start, bucket]));
  const hourStart = Math.floor(now / HOUR) * HOUR;
  const hourly = Array.from({ length: 24 }, (_, index) => {
    const start = hourStart - (23 - index) * HOUR;
    return byStart.get(start) ?? { start, received: 0, done: 0, dead: 0 };
  });
  const daily = Array.from({ length: 7 }, (_, index) => ({ start: since + index * DAY, received: 0, done: 0, dead: 0 }));
  for (const bucket of buckets) {
    const day = daily[Math.floor((bucket.start - since) / DAY)];
    if (!day) continue;
    day.received += bucket.received;
    day.done += bucket.done;
    day.dead += bucket.dead;
  }
  return { hourly, daily };
}

function workersOf(workers: { seenAt: number; claimedAt: number | null }[], now: number): WorkerSummary {
  const lastSeenAt = workers.reduce<number | null>((latest, worker) => (latest === null || worker.seenAt > latest ? worker.seenAt : latest), null);
  const lastClaimAt = workers.reduce<number | null>((latest, worker) => (worker.claimedAt !== null && (latest === null || worker.claimedAt > latest) ? worker.claimedAt : latest), null);
  return {
    lastSeenAt,
    lastClaimAt,
    alive: workers.filter((worker) => now - worker.seenAt <= WORKER_ALIVE_MS).length,
    claimedLastMinute: lastClaimAt !== null && now - lastClaimAt <= WORKER_ALIVE_MS,
  };
}

export interface EntriesQuery {
  /** One tenant's entries (with `tenants`); every tenant's when left out. */
  tenant?: string;
  status?: InboxEntryStatus;
  event?: string;
  search?: string;
  before?: { receivedAt: number; id: string };
  limit: number;
}

export interface EntriesPage {
  entries: InboxEntry[];
  /** The cursor of the next (older) page, when there may be one. */
  next: { receivedAt: number; id: string } | null;
}

export async function readEntries(source: DashboardStore, query: EntriesQuery): Promise<EntriesPage> {
  await source.ready();
  const request: InboxPageRequest = { limit: query.limit + 1 };
  if (query.tenant !== undefined) request.tenant = query.tenant;
  if (query.status) request.status = query.status;
  if (query.event) request.event = query.event;
  if (query.search) request.search = query.search;
  if (query.before) request.before = query.before;
  const rows = await source.store.page!(request);
  const entries = rows.slice(0, query.limit);
  const last = entries[entries.length - 1];
  return { entries, next: rows.length > query.limit && last ? { receivedAt: last.receivedAt, id: last.id } : null };
}

/** The other events of the entry's order (of its tenant), in the order the worker runs them. */
export async function readTimeline(source: DashboardStore, orderId: string, tenant: string | null): Promise<InboxEntry[]> {
  const rows = await source.store.page!({ orderId, limit: 200, ...(tenant === null ? {} : { tenant }) });
  return rows.sort((a, b) => Number(b.event === 'order.created') - Number(a.event === 'order.created') || a.ts - b.ts || a.receivedAt - b.receivedAt);
}

export interface EndpointDeliveries {
  endpoint: WebhookEndpoint;
  deliveries: (WebhookDelivery & { missed: boolean })[];
  error?: string;
}

export interface ServiceView {
  health?: Health;
  healthError?: string;
  endpoints?: EndpointDeliveries[];
  endpointsError?: string;
}

const SERVICE_TIMEOUT_MS = 5000;

/** A client error as one line: its name and message (the SDK's errors never carry the key). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300);
  return 'unknown error';
}

/**
 * Health, endpoints and (with `deliveries`) each endpoint's latest deliveries, those the inbox
 * counts as missed (`inbox.missed()`: its own endpoints' dead and retrying deliveries that never
 * arrived, open until they arrive, are acknowledged or recovered) marked.
 */
export async function readService(client: DashboardClient, inbox: Inbox, deliveries: number, tenant?: string): Promise<ServiceView> {
  const signal = () => AbortSignal.timeout(SERVICE_TIMEOUT_MS);
  const view: ServiceView = {};
  const [health, endpoints, missed] = await Promise.allSettled([client.health({ signal: signal() }), client.webhooks.list({ signal: signal() }), openMissed(inbox, tenant)]);
  if (health.status === 'fulfilled') view.health = health.value;
  else view.healthError = describeError(health.reason);
  if (endpoints.status === 'rejected') {
    view.endpointsError = describeError(endpoints.reason);
    return view;
  }
  const open = new Set(missed.status === 'fulfilled' ? missed.value.map((each) => each.deliveryId) : []);
  view.endpoints = await Promise.all(
    endpoints.value.map(async (endpoint): Promise<EndpointDeliveries> => {
      try {
        const list = await client.webhooks.deliveries(endpoint.id, { limit: deliveries, signal: signal() });
        return { endpoint, deliveries: list.map((delivery) => ({ ...delivery, missed: open.has(delivery.id) })) };
      } catch (error) {
        return { endpoint, deliveries: [], error: describeError(error) };
      }
    }),
  );
  return view;
}

/** The first `limit` runs of the sync history. */
export async function readSyncRuns(sync: DashboardSync, limit: number): Promise<DashboardSyncRun[]> {
  const runs: DashboardSyncRun[] = [];
  for await (const run of sync.runs({ limit })) {
    runs.push(run);
    if (runs.length >= limit) break;
  }
  return runs;
}

/** One CSV field; a leading =, +, -, @ is quoted away so that a spreadsheet does not run it. */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
