import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect as connectTcp, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { NativeConnection } from '@temporalio/worker';
import { ConfigError, loadConfig, temporalTlsOf } from '../../config';
import { createTemporalClient } from '../../workflowClient/connection';
import { testStack } from '../harness/stack';

/**
 * TEMPORAL_TLS_*: the client and worker connections speak mTLS to a Temporal frontend behind TLS, as
 * Temporal Cloud's certificate authentication needs. The frontend here is the run's Temporal behind a
 * TLS terminator that demands a client certificate from our CA (a real handshake, real gRPC behind it).
 */
function makeCertificates(directory: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: directory, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=test ca',
  );
  for (const name of ['server', 'client']) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name === 'server' ? 'temporal.test' : 'stablepay worker'}`,
    );
    const extensions = join(directory, `${name}.ext`);
    execFileSync('sh', [
      '-c',
      `printf '%s' "${name === 'server' ? 'subjectAltName=DNS:temporal.test' : 'extendedKeyUsage=clientAuth'}" > ${extensions}`,
    ]);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      extensions,
    );
  }
}

describe('Temporal over TLS (TEMPORAL_TLS_*)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'temporal-tls-'));
  const file = (name: string) => join(directory, name);
  let terminator: Server;
  let address: string;
  const handshakes: { authorized: boolean }[] = [];

  beforeAll(async () => {
    makeCertificates(directory);
    const [host, port] = testStack().temporalAddress.split(':');
    terminator = createServer(
      {
        key: readFileSync(file('server.key')),
        cert: readFileSync(file('server.pem')),
        ca: readFileSync(file('ca.pem')),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (socket) => {
        handshakes.push({ authorized: socket.authorized });
        const upstream = connectTcp(Number(port), host);
        socket.pipe(upstream).pipe(socket);
        const close = () => {
          socket.destroy();
          upstream.destroy();
        };
        socket.on('error', close);
        upstream.on('error', close);
      },
    );
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(terminator.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => terminator.close(() => resolve())));

  const tlsConfig = (extra: Record<string, string> = {}) =>
    loadConfig({
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TLS_CERT_FILE: file('client.pem'),
      TEMPORAL_TLS_KEY_FILE: file('client.key'),
      TEMPORAL_TLS_CA_FILE: file('ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
      ...extra,
    });

  it('the client connection (api, dev stack) reaches the namespace with mTLS', async () => {
    const config = tlsConfig();
    const client = await createTemporalClient({
      address: config.TEMPORAL_ADDRESS,
      namespace: testStack().temporalNamespace,
      tls: temporalTlsOf(config),
    });
    try {
      const described = await client.connection.workflowService.describeNamespace({
        namespace: testStack().temporalNamespace,
      });
      expect(described.namespaceInfo?.name).toBe(testStack().temporalNamespace);
      expect(handshakes.at(-1)).toEqual({ authorized: true });
    } finally {
      await client.close();
    }
  });

  it('the worker connection does too', async () => {
    const config = tlsConfig();
    const connection = await NativeConnection.connect({
      address: config.TEMPORAL_ADDRESS,
      tls: temporalTlsOf(config),
    });
    try {
      const described = await connection.workflowService.describeNamespace({
        namespace: testStack().temporalNamespace,
      });
      expect(described.namespaceInfo?.name).toBe(testStack().temporalNamespace);
    } finally {
      await connection.close();
    }
  });

  it('without the client certificate the frontend refuses the connection', async () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TLS_CA_FILE: file('ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
    });
    await expect(
      (async () => {
        const client = await createTemporalClient({
          address: config.TEMPORAL_ADDRESS,
          namespace: testStack().temporalNamespace,
          tls: temporalTlsOf(config),
        });
        await client.close();
      })(),
    ).rejects.toThrow();
  });

  it('configuration: TLS off by default; a certificate needs its key; an unreadable file names its variable', () => {
    expect(temporalTlsOf(loadConfig({}))).toBeUndefined();
    expect(temporalTlsOf(loadConfig({ TEMPORAL_TLS: 'true' }))).toEqual({});
    expect(() => loadConfig({ TEMPORAL_TLS_CERT_FILE: file('client.pem') })).toThrow(
      /TEMPORAL_TLS_KEY_FILE: a client certificate needs its key/,
    );
    expect(() => loadConfig({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_NAME: 'x' })).toThrow(ConfigError);
    expect(() => temporalTlsOf(tlsConfig({ TEMPORAL_TLS_CA_FILE: file('missing.pem') }))).toThrow(
      /TEMPORAL_TLS_CA_FILE: cannot be read/,
    );
  });
});
