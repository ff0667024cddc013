import { once } from 'node:events';
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { listen, StartError } from './lifecycle.js';

describe('listen', () => {
  it('resolves to the URL, and a port in use is a StartError naming the variable', async () => {
    const first = createServer();
    const url = await listen(
      first,
      { port: 0, host: '127.0.0.1' },
      { port: 'ADMIN_PORT', host: 'ADMIN_HOST' },
    );
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const port = Number(new URL(url).port);
    const second = createServer();
    const error = await listen(
      second,
      { port, host: '127.0.0.1' },
      { port: 'ADMIN_PORT', host: 'ADMIN_HOST' },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartError);
    expect(error).toMatchObject({ name: 'StartError', variable: 'ADMIN_PORT' });
    expect((error as Error).message).toBe(
      `ADMIN_PORT: 127.0.0.1:${port} is already in use; stop the process that holds it, or set ADMIN_PORT (0 picks a free one).`,
    );
    first.close();
    await once(first, 'close');
  });

  it('an address that cannot be taken names both variables', async () => {
    const error = await listen(
      createServer(),
      { port: 0, host: '203.0.113.7' },
      { port: 'PORT', host: 'HOST' },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ variable: 'HOST/PORT' });
    expect((error as Error).message).toMatch(
      /^HOST\/PORT: cannot listen on 203\.0\.113\.7:0 \(EADDRNOTAVAIL\)/,
    );
  });
});
