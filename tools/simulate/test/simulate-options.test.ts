/** The command line of `pnpm simulate`: defaults, and a bad flag refused with its name. */
import { describe, expect, it } from 'vitest';
import { parseSimulateOptions, UsageError } from '../src/simulate-options.js';

const env = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', REDIS_URL: 'redis://127.0.0.1:6379' };
const parse = (argv: string[], e: Record<string, string | undefined> = env) =>
  parseSimulateOptions(argv, '/nonexistent', e);

describe('simulate options', () => {
  it('defaults to 200 episodes on both harnesses, lanes sized to the machine up to 64 in flight', () => {
    const o = parse([]);
    expect(o).toMatchObject({
      episodes: 200,
      harnesses: ['agent-saga', 'naive'],
      json: false,
      keepLog: false,
      concurrency: 64,
      adaptiveLanes: true,
    });
    expect(parse(['--concurrency', 'auto'])).toMatchObject({ concurrency: 64, adaptiveLanes: true });
  });

  it('takes up to 128 episodes in flight', () => {
    expect(parse(['--concurrency', '128'])).toMatchObject({ concurrency: 128, adaptiveLanes: false });
    expect(() => parse(['--concurrency', '129'])).toThrow('--concurrency');
  });

  it('reads every flag', () => {
    const o = parse(
      ['--episodes', '50', '--seed', '9', '--harness', 'naive', '--json', '--concurrency', '4', '--keep-log'],
      {},
    );
    expect(o).toMatchObject({
      episodes: 50,
      seed: 9,
      harnesses: ['naive'],
      json: true,
      concurrency: 4,
      adaptiveLanes: false,
      keepLog: true,
    });
  });

  it('plays only the episodes --only names, once each', () => {
    const o = parse(['--only', '828,36,828', '--seed', '20262']);
    expect(o).toMatchObject({ only: [828, 36], episodes: 2, seed: 20262 });
    expect(parse([]).only).toBeUndefined();
  });

  it.each([
    [['--only', '12,x'], '--only'],
    [['--only', ''], '--only'],
    [['--episodes', '0'], '--episodes'],
    [['--episodes', 'many'], '--episodes'],
    [['--seed', '-1'], '--seed'],
    [['--harness', 'fast'], '--harness'],
    [['--concurrency', '1000'], '--concurrency'],
    [['--concurrency', 'fast'], '--concurrency'],
    [['--episodes'], '--episodes'],
    [['--verbose'], '--verbose'],
  ])('refuses %j naming %s', (argv, flag) => {
    expect(() => parse(argv)).toThrow(UsageError);
    expect(() => parse(argv)).toThrow(flag);
  });

  it('lets a real model play --real-model N episodes only with an OpenAI key', () => {
    expect(() => parse(['--real-model', '5'])).toThrow(/--real-model needs OPENAI_API_KEY/);
    expect(parse(['--real-model', '5'], { ...env, OPENAI_API_KEY: 'sk-test' }).realModel).toEqual({
      episodes: 5,
      model: 'gpt-4o-mini',
    });
    expect(
      parse(['--real-model', '2'], { ...env, OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'gpt-5-mini' })
        .realModel,
    ).toEqual({ episodes: 2, model: 'gpt-5-mini' });
    expect(parse([]).realModel).toBeUndefined();
    expect(() => parse(['--real-model', '0'], { ...env, OPENAI_API_KEY: 'sk-test' })).toThrow('--real-model');
  });

  it('refuses the agent-saga harness without a database', () => {
    expect(() => parse(['--harness', 'agent-saga'], {})).toThrow(/DATABASE_URL/);
  });
});
