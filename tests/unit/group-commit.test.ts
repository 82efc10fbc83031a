import { describe, expect, it } from 'vitest';
import type { GroupItem, GroupResult } from '#events/store/group-append.ts';
import { GroupCommitter } from '#events/store/group-commit.ts';

const item = (stream: string, commandId = stream): GroupItem => ({
  kind: 'append',
  stream,
  expectedVersion: 0,
  events: [],
  commandId,
  metadata: '{}',
});
const ok = (i: GroupItem): GroupResult => ({
  kind: 'appended',
  outcome: { status: 'accepted', positions: [], transactionId: '1', streamVersion: i.stream.length },
});

describe('group committer', () => {
  it('sends the first write alone, gathers the ones arriving meanwhile, each stream and command once', async () => {
    const groups: string[][] = [];
    const committer = new GroupCommitter(
      async (items) => {
        groups.push(items.map((i) => i.stream));
        return items.map(ok);
      },
      async (i) => {
        groups.push([i.stream]);
        return ok(i);
      },
      { maxInFlight: 1 },
    );
    await Promise.all(
      ['a', 'b', 'c', 'b', 'd', 'e'].map((s, n) => committer.submit(item(s, s === 'e' ? 'c2' : `${s}${n}`))),
    );
    // 'a' alone; then b, c, d (the second 'b' and the command id of 'c' again wait); then the rest.
    expect(groups).toEqual([['a'], ['b', 'c', 'd'], ['b', 'e']]);
  });

  it('writes the items one by one when a group statement fails, so one item cannot fail the others', async () => {
    const single: string[] = [];
    const committer = new GroupCommitter(
      async () => {
        throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
      },
      async (i) => {
        single.push(i.stream);
        if (i.stream === 'bad') throw new Error('bad item');
        return ok(i);
      },
      { maxInFlight: 1 },
    );
    const results = await Promise.allSettled(
      ['first', 'x', 'bad', 'y'].map((s) => committer.submit(item(s))),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(single.sort()).toEqual(['bad', 'first', 'x', 'y']);
  });

  it('fails the whole group on a lost connection (the worker waits the outage out and retries)', async () => {
    const committer = new GroupCommitter(
      async () => {
        throw Object.assign(new Error('Connection terminated unexpectedly'), {});
      },
      async (i) => ok(i),
      { maxInFlight: 1 },
    );
    const results = await Promise.allSettled(['first', 'x', 'y'].map((s) => committer.submit(item(s))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
  });
});
