import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { lazyChildLogger, REDACT_PATHS } from '../src/index.js';

/** A logger at `level` with the roles' redaction, whose lines are collected as parsed JSON. */
function collecting(level: string): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, sink);
  return { log, lines };
}

describe('lazyChildLogger', () => {
  it('makes no child for lines below the level, and one child that carries the bindings for a line written', () => {
    const { log, lines } = collecting('warn');
    const child = vi.spyOn(log, 'child');
    const lazy = lazyChildLogger(log, { runId: 'r1', stepIdx: 3 });
    lazy.info({ a: 1 }, 'not written');
    lazy.debug('not written either');
    expect(lazy.isLevelEnabled('info')).toBe(false);
    expect(lazy.isLevelEnabled('warn')).toBe(true);
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);

    lazy.warn({ outcome: 'UNKNOWN' }, 'written');
    lazy.error('again');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((l) => [l['msg'], l['runId'], l['stepIdx'], l['outcome']])).toEqual([
      ['written', 'r1', 3, 'UNKNOWN'],
      ['again', 'r1', 3, undefined],
    ]);
  });

  it('redacts its bindings as the child would', () => {
    const { log, lines } = collecting('info');
    lazyChildLogger(log, { runId: 'r2', authorization: 'Bearer secret' }).info('with a credential');
    expect(lines).toHaveLength(1);
    expect(lines[0]!['authorization']).toBe('[REDACTED]');
    expect(JSON.stringify(lines)).not.toContain('secret');
  });

  it("gives a lazy grandchild with both bindings, and honours the child's own level", () => {
    const { log, lines } = collecting('warn');
    const lazy = lazyChildLogger(log, { reqId: 'q1' });
    lazy.child({ runId: 'r3' }).warn('deep');
    lazyChildLogger(log, { reqId: 'q2' }, { level: 'debug' }).debug('own level');
    expect(lines.map((l) => [l['msg'], l['reqId'], l['runId']])).toEqual([
      ['deep', 'q1', 'r3'],
      ['own level', 'q2', undefined],
    ]);
  });

  it('passes a level change to the child it makes', () => {
    const { log, lines } = collecting('warn');
    const lazy = lazyChildLogger(log, { runId: 'r4' });
    lazy.level = 'info';
    lazy.info('now written');
    expect(log.level).toBe('warn');
    expect(lines.map((l) => [l['msg'], l['runId']])).toEqual([['now written', 'r4']]);
  });
});
