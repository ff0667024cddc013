// The limiter's counters in Redis (limits/counter-store.ts), exact across every instance: each operation is
// one Lua script or command, so it is atomic. Insured by this process's memory (limits/insured.ts): while
// Redis is unreachable or stalled the windows fall back to memory and the marks fail; what the insurance
// needs of Redis comes from here: its connection's events, its ping, and this instance's marker, by which
// it tells a Redis that kept its data from one that came back empty. A connection that went silent is
// destroyed and replaced (connect.ts: ioredis's socketTimeout), so that Redis answers again within a
// reconnection of a heal, not after TCP's back-off.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { type CounterStore, seenEndMarginMs, severalHolders } from '../../limits/counter-store.js';
import { instanceLiveMs, insured } from '../../limits/insured.js';
import type { RedisClient } from './connect.js';
import type { FailoverListener, PrimaryAddress } from './failovers.js';

/** How long a connection may take to move to a new primary after a failover before it is made again. */
const moveMs = 2_000;

/** How long an instance's marker lasts unless renewed (see `marker`). */
const markerMs = 24 * 3_600_000;

/**
 * How long a named take's record lasts: from the take to its undo (once Redis answers again: seconds), or
 * from an undo to a take still on its way. A minute, so that a busy key leaves few records behind.
 */
const takeRecordMs = 60_000;

/** What a give-back's named end may be earlier than its window's own: PTTL's and Date.now's rounding. */
const giveBackSlackMs = 50;

// KEYS[1] the window, KEYS[2] its hold (heldName: the holder's name, or severalHolders, expiring with the
// hold), KEYS[3] the take's record (a named take: what it granted, for undo); ARGV want, limit, window ms,
// hold ms, holder, the take's name ('' for none), the ms left of the window as the taker saw it and its count
// then (0 and 0: unknown; Holder.seen). Returns granted, used, ms until the window ends (-1: the end the
// taker saw, not read), ms until the hold of other holders ends (0: none). A grant's hold ends holdMs after it at least, and a shorter
// hold never shortens a longer one (leases last as long as their pace allows: limits/leases.ts), but never
// outlasts its window: so a new window has no hold of the old one's to forget. The window is counted up
// first (INCRBY; the excess taken off again in the rare take that gets less than it asked, a new window's
// end set once), so that a grant does not read the count before writing it. The hold is read only for a
// lease (to extend it) or when the grant leaves the window used up (only then does a caller look at it: a
// refusal, or `remaining` 0 against 1). So a single point of a running window costs three commands (the
// script, INCRBY, PTTL) and the take's record, as a per-request counter's consume costs four; two and the
// record when the taker knows the window's end (Holder.seen: the count found has not gone below the one
// it saw, so no operator ended the window meanwhile, and the key existed, so no INCRBY made it). So does a
// lease whose hold ends seenEndMarginMs before that end at least: its hold cannot reach the window's real
// end (the seen one is later only by the two takes' latencies), so it needs no cap read. A window's
// first take sets its end in the command that tells it is the first (PEXPIRE NX: the key the INCRBY made
// has none; Redis 7), so it costs three and the record too. A take of
// nothing (`want` 0, a look: limits/leases.ts inStore) writes nothing. Holds of releases before 2.3 may
// outlast their window by a few seconds; the window after reads them as held (a wait of 1 s, no more).
const take = `
local want = tonumber(ARGV[1])
local used
if want > 0 then used = redis.call('INCRBY', KEYS[1], want) - want
else used = tonumber(redis.call('GET', KEYS[1]) or '0') end
local hold = tonumber(ARGV[4])
local seenLeft = tonumber(ARGV[7])
local ttl
local unread = false -- the end answered is the one the taker saw
if want > 0 and used == 0 and redis.call('PEXPIRE', KEYS[1], ARGV[3], 'NX') == 1 then
  ttl = -1 -- the INCRBY made the key: a new window, its end set now
elseif want > 0 and seenLeft > 0 and hold + ${seenEndMarginMs} <= seenLeft and used > 0 and used >= tonumber(ARGV[8]) then
  ttl = seenLeft; unread = true
else ttl = redis.call('PTTL', KEYS[1]) end
local fresh = ttl <= 0
local made = ttl < 0 -- no end before this take: a new window (0: an old window's last millisecond)
local holder = ARGV[5]
local by = false
local holdLeft = 0
if fresh then used = 0; ttl = tonumber(ARGV[3]) end
local limit = tonumber(ARGV[2])
local granted = math.max(0, math.min(want, limit - used))
if not fresh and (hold > 0 or used + granted >= limit) then
  by = redis.call('GET', KEYS[2])
  if by then holdLeft = math.max(0, redis.call('PTTL', KEYS[2])) end
end
if ARGV[6] ~= '' and redis.call('SET', KEYS[3], granted, 'NX', 'GET', 'PX', ${takeRecordMs}) then granted = 0 end
if fresh and want > 0 then
  if granted == 0 then redis.call('DEL', KEYS[1])
  elseif granted < want or not made then redis.call('SET', KEYS[1], granted, 'PX', ttl) end
elseif granted < want then
  redis.call('DECRBY', KEYS[1], want - granted)
end
if granted > 0 and hold > 0 then
  if by and by ~= holder then by = '${severalHolders}' else by = holder end
  holdLeft = math.min(math.max(holdLeft, hold), ttl)
  redis.call('SET', KEYS[2], by, 'PX', holdLeft)
end
local held = 0
if by and by ~= holder then held = holdLeft end
if unread then ttl = -1 end
return {granted, used + granted, ttl, held}`;

/**
 * A name beside a window, in its hash slot, so that one script touches both in a Cluster: its hold
 * (`held`), one give-back (`back:<id>`) or one take's record (`take:<id>`). A name without a hash tag
 * hashes whole, so it becomes the new name's tag; one with a tag (from the prefix: config.ts allows braces
 * only as one) keeps it. Releases before these never read them.
 */
const beside = (window: string, what: string) =>
  /^[^{]*\{[^}]+\}/.test(window) ? `${window}:${what}` : `{${window}}:${what}`;
export const heldName = (window: string) => beside(window, 'held');

// KEYS[1] the window, KEYS[2] the take's record. The take's points go back once, if it was carried out
// (its record says what it granted) and its window still runs; a take that was not is recorded as undone.
const undo = `
local granted = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], 'undone', 'PX', ${takeRecordMs})
if not granted or granted == 'undone' then return 0 end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = math.min(used, tonumber(granted))
if back > 0 and redis.call('PTTL', KEYS[1]) > 0 then redis.call('DECRBY', KEYS[1], back) end
return back`;

// KEYS[1] the window, KEYS[2] the give-back's name (beside); ARGV points, the ms left of the points' window
// as their holder knows its end. The points go back only to the window they came from, as on SQLite and
// PostgreSQL (which match its end exactly): a window of the same name whose end is later than the one named
// started after it (its name deleted meanwhile: an operator started it over, or Redis was flushed), and
// points given back to it would let it admit more than its limit. The holder's end is the window's TTL when
// its take ran plus the time its answer took, so the named end is never earlier than the window's own, by
// more than a clock's millisecond (giveBackSlackMs). A give-back already counted (retried after its answer
// was lost) counts nothing. Three commands and the script: the window's end (PTTL: none for a window that
// ended), the name, the DECRBY; a count it would take below 0 (more given back than the window counts: an
// operator started it over) is set back to 0 by a fourth, so the window never counts less than nothing.
const giveBack = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 or ttl > tonumber(ARGV[2]) + ${giveBackSlackMs} then return 0 end
if not redis.call('SET', KEYS[2], 1, 'NX', 'PX', ttl) then return 0 end
local points = tonumber(ARGV[1])
local left = redis.call('DECRBY', KEYS[1], points)
if left >= 0 then return points end
redis.call('INCRBY', KEYS[1], -left)
return points + left`;

type Scripts = RedisClient & {
  leaseTake(
    key: string,
    held: string,
    record: string,
    want: number,
    limit: number,
    windowMs: number,
    holdMs: number,
    holder: string,
    id: string,
    seenLeftMs: number,
    seenUsed: number,
  ): Promise<[number, number, number, number]>;
  leaseUndo(key: string, record: string): Promise<number>;
  leaseGiveBack(key: string, back: string, points: number, leftMs: number): Promise<number>;
};

/**
 * The live instances: a sorted set of one key (one Cluster slot), each instance's id scored with when it
 * last said it was alive; one that has not said so for `liveMs` (crashed) is no longer counted. Counting
 * markers with SCAN instead walked the whole keyspace every few seconds in every instance.
 */
function liveInstances(redis: RedisClient, key: string, id: string, liveMs: number) {
  return {
    /** Says this instance is alive, drops the ones that have not for liveMs, and counts the rest. */
    async count(): Promise<number> {
      const now = Date.now();
      const [, , [, counted] = []] = (await redis
        .multi()
        .zadd(key, now, id)
        .zremrangebyscore(key, 0, now - liveMs)
        .zcard(key)
        .pexpire(key, liveMs * 2)
        .exec()) as [Error | null, unknown][];
      return Number(counted);
    },
    leave: () => redis.zrem(key, id),
  };
}

/** The operations on Redis, each one script or command (atomic), under `keyPrefix`. */
function redisStore(redis: RedisClient, keyPrefix: string, now: () => number): CounterStore {
  redis.defineCommand('leaseTake', { numberOfKeys: 3, lua: take });
  redis.defineCommand('leaseUndo', { numberOfKeys: 2, lua: undo });
  redis.defineCommand('leaseGiveBack', { numberOfKeys: 2, lua: giveBack });
  const client = redis as Scripts;
  const name = (key: string) => `${keyPrefix}${key}`;
  const listName = (prefix: string) => `${keyPrefix}list:${prefix}`;
  return {
    async take(key, want, limit, windowMs, lease) {
      const window = name(key);
      const seen = lease?.seen;
      const left = seen ? seen.resetAt - now() : 0;
      const seenLeft = left > seenEndMarginMs ? Math.floor(left) : 0;
      const [granted, used, ttl, held] = await client.leaseTake(
        window,
        heldName(window),
        beside(window, `take:${lease?.id ?? ''}`),
        want,
        limit,
        windowMs,
        lease?.holdMs ?? 0,
        lease?.holder ?? '',
        lease?.id ?? '',
        seenLeft,
        seenLeft > 0 ? (seen?.used ?? 0) : 0,
      );
      const at = now();
      const resetAt = ttl === -1 ? (seen?.resetAt as number) : at + ttl;
      return { granted, used, resetAt, heldUntil: held > 0 ? at + held : 0 };
    },
    async undo(key, id) {
      await client.leaseUndo(name(key), beside(name(key), `take:${id}`));
    },
    async giveBack(key, points, resetAt, id = randomUUID()) {
      const left = resetAt - now();
      if (left > 0) await client.leaseGiveBack(name(key), beside(name(key), `back:${id}`), points, left);
    },
    async read(key) {
      const [used, ttl] = await Promise.all([client.get(name(key)), client.pttl(name(key))]);
      return ttl > 0 ? { used: Number(used ?? 0), resetAt: now() + ttl } : { used: 0, resetAt: 0 };
    },
    async endsAt(key) {
      const ttl = await redis.pttl(name(key));
      return ttl > 0 ? now() + ttl : 0;
    },
    async mark(key, ms) {
      await redis.set(name(key), 1, 'PX', ms);
    },
    async delete(key) {
      await redis.del(name(key));
    },
    sweep: async () => 0, // Redis expires its own keys
    // A list is a sorted set of one key (one Cluster slot): each name scored with when it ends. Read
    // whole (the running ones: bans are few), its ended names dropped as one is added.
    async listed(prefix) {
      const flat = await redis.zrange(listName(prefix), `(${now()}`, '+inf', 'BYSCORE', 'WITHSCORES');
      const found = new Map<string, number>();
      for (let i = 0; i + 1 < flat.length; i += 2) found.set(flat[i] as string, Number(flat[i + 1]));
      return found;
    },
    async enlist(prefix, name, until) {
      await redis
        .multi()
        .zadd(listName(prefix), until, name)
        .zremrangebyscore(listName(prefix), '-inf', now())
        .exec();
    },
    async delist(prefix, name) {
      await redis.zrem(listName(prefix), name);
    },
  };
}

/**
 * The connection as the insurance watches it, with Sentinel failovers in between (failovers.ts). While the
 * Sentinels fail the primary over, the counters stay off Redis: the old primary would take counts the new
 * one never sees. After +switch-master they are shared again only once the connection is on the new primary:
 * ioredis's failoverDetector moves it at the same message, and until it has, the old primary still answers
 * a ping (as a replica) but refuses every write. When the connection is already there (it got the news
 * first), they are shared again at once; when it has not moved within `moveMs`, it is made again, to
 * wherever the Sentinels say. So is a connection still up after a failover that never ended (the hold ran
 * out). The listeners are an EventEmitter's.
 */
function failoverGate(redis: RedisClient) {
  let failingOver = false;
  /** The primary the Sentinels named, until the connection is on it. */
  let movingTo: PrimaryAddress | undefined;
  let moveTimer: NodeJS.Timeout | undefined;
  const onNewPrimary = () => {
    if (!movingTo) return true;
    const stream = 'stream' in redis ? redis.stream : undefined;
    const host = stream?.remoteAddress?.replace(/^::ffff:/, '');
    return stream?.remotePort === movingTo.port && host === movingTo.host;
  };
  const moved = () => {
    movingTo = undefined;
    clearTimeout(moveTimer);
  };
  /** Up, and on the primary the Sentinels named (when a failover named one), outside a failover. */
  const there = () => !failingOver && redis.status === 'ready' && onNewPrimary();
  const events = new EventEmitter<{ lost: [reason: string, planned?: boolean]; ready: [] }>();
  /** Shares the counters again, when the connection is there; whether it did. */
  const shareIfThere = () => {
    if (!there()) return false;
    moved();
    events.emit('ready');
    return true;
  };
  redis.on('close', () => events.emit('lost', 'connection closed'));
  redis.on('error', (error: Error) => events.emit('lost', error.message));
  redis.on('ready', shareIfThere);
  const failover: FailoverListener = {
    started() {
      failingOver = true;
      moved();
      events.emit('lost', 'the Sentinels are failing the primary over', true);
    },
    ended(newPrimary) {
      failingOver = false;
      if (!newPrimary) {
        if (redis.status === 'ready') redis.disconnect(true);
        return;
      }
      movingTo = newPrimary;
      if (shareIfThere()) return;
      // Not moved by ioredis in time (a primary the Sentinels name by another address than the one
      // connected to, or a message it missed): reconnected, so ioredis asks the Sentinels where it is.
      // Cleared when the connection gets there first (moved).
      moveTimer = setTimeout(() => {
        moved();
        redis.disconnect(true);
      }, moveMs);
      moveTimer.unref();
    },
  };
  return { events, failover, connected: there };
}

/**
 * The counters (insured: limits/insured.ts), why they run on memory now, their stop, and what to tell them
 * of a Sentinel failover (failovers.ts).
 */
export function redisCounters(
  redis: RedisClient,
  { keyPrefix, commandTimeoutMs }: { keyPrefix: string; commandTimeoutMs: number },
  logger: Logger,
  now = () => Date.now(),
) {
  // A key of this instance's own: when Redis answers again without it, Redis lost its data (restarted
  // without persistence, flushed, or evicted keys): every key's windows and bans started over, and
  // operators are told so (docs/scaling-out.md, the Redis settings to run with). Its own, not one shared:
  // the first instance back would set a shared one, and every other would take the empty Redis for the
  // one it left (keeping leases the new Redis never counted, and never saying it). It lasts a day,
  // renewed hourly, and goes at a graceful stop.
  const instance = randomUUID();
  const marker = `${keyPrefix}marker:${instance}`;
  const live = liveInstances(redis, `${keyPrefix}instances`, instance, instanceLiveMs);
  const remember = () => redis.set(marker, '1', 'PX', markerMs);
  const renew = setInterval(() => void remember().catch(() => {}), markerMs / 24);
  renew.unref();
  const gate = failoverGate(redis);
  // A connection ioredis gave up on (a reconnection cut short during a failover ends it for good) is
  // opened again, unless the service is stopping.
  let stopping = false;
  redis.on('end', () => {
    if (stopping) return;
    const again = setTimeout(() => void redis.connect().catch(() => {}), 1_000);
    again.unref();
  });
  const counters = insured(
    redisStore(redis, keyPrefix, now),
    {
      name: 'Redis',
      onLost: (listener) => gate.events.on('lost', listener),
      onReady: (listener) => gate.events.on('ready', listener),
      connected: gate.connected,
      deadlineMs: commandTimeoutMs,
      kept: async () => (await redis.exists(marker)) === 1,
      remember,
      forget: () => {
        clearInterval(renew);
        return Promise.all([redis.del(marker), live.leave()]);
      },
      instances: () => live.count(),
    },
    logger,
    now,
  );
  return {
    ...counters,
    failover: gate.failover,
    async stop() {
      stopping = true;
      await counters.stop();
    },
  };
}
