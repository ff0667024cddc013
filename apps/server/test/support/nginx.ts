// Debian's nginx in front of test servers: a configuration of the test's own in a temporary folder (its pid,
// logs and temporary files there, no access log), the `http` block's contents given by the test.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnTied, untilListening } from '@animal-store/test-support';

/**
 * Starts `binary` with `http` inside its `http {}` block; resolves once it accepts connections on
 * 127.0.0.1:`port` (which `http` must listen on). Stop it with SIGQUIT.
 */
export async function startNginx(binary: string, port: number, http: string): Promise<ChildProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
${http}
}
`,
  );
  const nginx = spawnTied(binary, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
  try {
    await untilListening(port, 'nginx');
  } catch (error) {
    nginx.kill('SIGKILL');
    throw error;
  }
  return nginx;
}
