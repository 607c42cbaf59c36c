import { connect } from 'node:net';
import { startTestApp, type TestApp } from '../harness/app';

/**
 * An `Expect` value the server does not know is ignored (RFC 9110 allows it), so the request gets its
 * normal answer: Node alone would answer 417, a status the contract does not declare (schemathesis sent
 * `Expect: k4PoUQcjD_J3` once). `100-continue` keeps its meaning.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** One raw HTTP/1.1 exchange: the status line and headers the server sent first. */
function rawRequest(head: string, body = ''): Promise<string> {
  const { hostname, port } = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head + body));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
      if (received.includes('\r\n\r\n') && !received.startsWith('HTTP/1.1 100')) {
        socket.destroy();
        resolve(received);
      }
      // After a 100 Continue, the final answer follows once the body is sent.
      if (received.startsWith('HTTP/1.1 100') && received.split('\r\n\r\n').length > 2) {
        socket.destroy();
        resolve(received.slice(received.indexOf('\r\n\r\n') + 4));
      }
    });
    socket.on('error', reject);
  });
}

it('a request with an unknown Expect value gets its normal answer, not 417', async () => {
  const answer = await rawRequest(
    'GET /health HTTP/1.1\r\nHost: localhost\r\nExpect: nonsense\r\nConnection: close\r\n\r\n',
  );
  expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  const other = await rawRequest(
    'GET /v1/sessions/not-a-session HTTP/1.1\r\nHost: localhost\r\nExpect: k4PoUQcjD_J3\r\nConnection: close\r\n\r\n',
  );
  expect(other.split('\r\n')[0]).not.toMatch(/ 417 /);
  expect(other.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 (400|404) /);
});

it('Expect: 100-continue still gets 100 Continue, then the answer', async () => {
  const body = '{}';
  const head =
    'POST /v1/auth/verify HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n' +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  const { hostname, port } = new URL(app.baseUrl);
  const exchange = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
      if (received === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(body);
    });
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
  expect(exchange.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
  expect(exchange.slice('HTTP/1.1 100 Continue\r\n\r\n'.length)).toMatch(/^HTTP\/1\.1 400 /);
});

it('a request Node cannot parse gets a JSON 400 body with its Content-Type, and the connection closes', async () => {
  const { hostname, port } = new URL(app.baseUrl);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(
        'POST /v1/paymaster/clients HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: v#\r\n' +
          'Content-Type: application/json\r\n\r\n{}',
      ),
    );
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
  const [head, body] = answer.split('\r\n\r\n');
  expect(head!.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
  expect(head).toMatch(/\r\ncontent-type: application\/json/i);
  expect(JSON.parse(body!)).toEqual({
    statusCode: 400,
    message: 'The request could not be read (Bad Request)',
    error: 'Bad Request',
  });
});
