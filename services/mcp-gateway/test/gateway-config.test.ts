/** The gateway's configuration: its defaults, and what it refuses at start, naming the variable. */
import { describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../src/index.js';

describe('loadGatewayConfig', () => {
  it('defaults to the dispatcher on 8080 and the MCP endpoint on loopback 8081', () => {
    const config = loadGatewayConfig('http', {});
    expect(config).toMatchObject({
      SAGA_API_URL: 'http://127.0.0.1:8080',
      MCP_PORT: 8081,
      MCP_HOST: '127.0.0.1',
      MCP_WAIT_MS: 10_000,
      LOG_LEVEL: 'info',
    });
    expect(config.SAGA_TOKEN).toBeUndefined();
    expect(config.SAGA_MCP_UPSTREAMS).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('needs SAGA_TOKEN in stdio mode only', () => {
    expect(() => loadGatewayConfig('stdio', {})).toThrow(/SAGA_TOKEN: required with --stdio/);
    expect(loadGatewayConfig('stdio', { SAGA_TOKEN: 'tok' }).SAGA_TOKEN).toBe('tok');
  });

  it('refuses a wait past the dispatcher’s limit and a bad port, naming them', () => {
    expect(() => loadGatewayConfig('http', { MCP_WAIT_MS: '60001' })).toThrow(/MCP_WAIT_MS/);
    expect(() => loadGatewayConfig('http', { MCP_PORT: 'eighty' })).toThrow(/MCP_PORT/);
    expect(() => loadGatewayConfig('http', { SAGA_API_URL: 'not a url' })).toThrow(/SAGA_API_URL/);
  });
});
